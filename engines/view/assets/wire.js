// Reading the view's protobuf messages (Foxglove's schemas) without a protobuf library: `pb`
// reads a message into {field number: [values]}. The page reads only the rare ones this way (the
// scene, overlays); transforms and rays come pulled, in a compact form (frames.js).

export const utf8 = new TextDecoder();

// A varint at b[i]: [value, next index]. Values past 2^53 lose precision (none here).
export function varint(b, i) {
  let v = 0, mul = 1, c;
  do { c = b[i++]; v += (c & 0x7f) * mul; mul *= 128; } while (c & 0x80);
  return [v, i];
}

// A message as {field number: [values]}: varints as numbers, doubles as numbers, bytes as views.
export function pb(b) {
  const out = {}, dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  while (i < b.length) {
    let key, v; [key, i] = varint(b, i);
    const f = Math.floor(key / 8), wt = key & 7;
    if (wt === 0) { [v, i] = varint(b, i); }
    else if (wt === 1) { v = dv.getFloat64(i, true); i += 8; }
    else if (wt === 2) { let n; [n, i] = varint(b, i); v = b.subarray(i, i + n); i += n; }
    else if (wt === 5) { v = dv.getUint32(i, true); i += 4; }
    else throw new Error('protobuf wire type ' + wt);
    (out[f] ||= []).push(v);
  }
  return out;
}
export const num = (m, f) => (m[f] ? m[f][m[f].length - 1] : 0);
export const str = (m, f) => (m[f] ? utf8.decode(m[f][0]) : '');
export const sub = (m, f) => (m[f] ? pb(m[f][0]) : null);
export const all = (m, f) => (m[f] || []).map(pb);
