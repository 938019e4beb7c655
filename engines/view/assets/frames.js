// Reading the daemon's pulled frames (the /ssx/layout and /ssx/frame services, docs/view.md):
// the page asks for one frame, draws it, then asks for the next, so it is never sent more than
// it draws and never falls behind. No three.js here: node's test runner loads this file.

export const FRAME_ENCODING = 'ssx.frame.v2';
export const CAMERA_ENCODING = 'ssx.camera.v1';
export const MISS = 65535;

// A frame response (ssx.frame.v2) as { step, time, wall, episode, count, poses (Float32Array, 7
// a body), rays: [{ sensor, distances (Uint16Array) }] }. `episode` counts the resets before the
// frame's world. `bytes` may start anywhere; it is copied once so that the arrays are aligned
// views.
export function readFrame(bytes) {
  const b = bytes.slice(); // aligned, own buffer
  const dv = new DataView(b.buffer);
  const version = dv.getUint32(0, true);
  if (version !== 2) throw new Error(`ssx.frame: version ${version}, this page reads 2`);
  const count = dv.getUint32(4, true);
  const frame = {
    step: dv.getFloat64(8, true), time: dv.getFloat64(16, true), wall: dv.getFloat64(24, true),
    episode: dv.getUint32(32, true), count, poses: new Float32Array(b.buffer, 40, 7 * count), rays: [],
  };
  let i = 40 + 28 * count;
  const sensors = dv.getUint32(i, true);
  i += 4;
  for (let s = 0; s < sensors; s++) {
    const sensor = dv.getUint32(i, true), k = dv.getUint32(i + 4, true);
    frame.rays.push({ sensor, distances: new Uint16Array(b.buffer, i + 8, k) });
    i += 8 + 4 * Math.ceil(k / 2);
  }
  if (i !== b.length) throw new Error(`ssx.frame: ${b.length} bytes, ${i} read`);
  return frame;
}

// A camera picture (/ssx/camera, ssx.camera.v1) as { step, width, height, rgba
// (Uint8ClampedArray, 4 bytes a pixel, ready for ImageData) }, or null when the daemon had none
// newer than asked.
export function readCamera(bytes) {
  const b = bytes.slice();
  const dv = new DataView(b.buffer);
  const version = dv.getUint32(0, true);
  if (version !== 1) throw new Error(`ssx.camera: version ${version}, this page reads 1`);
  const width = dv.getUint32(4, true), height = dv.getUint32(8, true);
  if (b.length !== 24 + 4 * width * height) throw new Error(`ssx.camera: ${b.length} bytes for ${width} × ${height}`);
  if (!width || !height) return null;
  return { step: dv.getFloat64(16, true), width, height, rgba: new Uint8ClampedArray(b.buffer, 24, 4 * width * height) };
}

const HIT = [1, 0.35, 0.1], FAR = [0.45, 0.75, 0.45];

// One sensor's rays in the world, from its body's pose (p[at..at+7]: x, y, z, qx, qy, qz, qw),
// its geometry ({ position, directions, max_range }) and its distances: 2 points a ray as
// x, y, z, r, g, b into `out` (grown when short; returned).
export function worldRays(p, at, g, distances, out) {
  const n = distances.length;
  if (out.length < 12 * n) out = new Float32Array(12 * n);
  const [x, y, z, qx, qy, qz, qw] = [p[at], p[at + 1], p[at + 2], p[at + 3], p[at + 4], p[at + 5], p[at + 6]];
  // v rotated by q: v + 2w(u × v) + 2u × (u × v), u = (qx, qy, qz)
  const rot = v => {
    const c1 = [qy * v[2] - qz * v[1], qz * v[0] - qx * v[2], qx * v[1] - qy * v[0]];
    const c2 = [qy * c1[2] - qz * c1[1], qz * c1[0] - qx * c1[2], qx * c1[1] - qy * c1[0]];
    return [v[0] + 2 * (qw * c1[0] + c2[0]), v[1] + 2 * (qw * c1[1] + c2[1]), v[2] + 2 * (qw * c1[2] + c2[2])];
  };
  const m = rot(g.position), o = [x + m[0], y + m[1], z + m[2]];
  for (let k = 0; k < n; k++) {
    const hit = distances[k] !== MISS;
    const d = hit ? distances[k] * g.max_range / (MISS - 1) : g.max_range;
    const w = rot(g.directions[k] || [0, 0, 0]), c = hit ? HIT : FAR, a = 12 * k;
    out[a] = o[0]; out[a + 1] = o[1]; out[a + 2] = o[2];
    out[a + 6] = o[0] + d * w[0]; out[a + 7] = o[1] + d * w[1]; out[a + 8] = o[2] + d * w[2];
    out[a + 3] = out[a + 9] = c[0]; out[a + 4] = out[a + 10] = c[1]; out[a + 5] = out[a + 11] = c[2];
  }
  return out;
}

// Foxglove WebSocket service calls (subprotocol foxglove.sdk.v1) over an open socket:
// request opcode 2 [u32 service][u32 call][u32 encoding length][encoding][payload], response
// opcode 3 likewise, failure as JSON {op: "serviceCallFailure"}.
export class Services {
  constructor(ws) { this.ws = ws; this.ids = new Map(); this.calls = new Map(); this.next = 1; }
  // An advertiseServices message.
  advertise(msg) { for (const s of msg.services) this.ids.set(s.name, s.id); }
  has(name) { return this.ids.has(name); }
  call(name, request) {
    const payload = new TextEncoder().encode(JSON.stringify(request)), enc = new TextEncoder().encode('json');
    const b = new Uint8Array(13 + enc.length + payload.length), dv = new DataView(b.buffer);
    const id = this.next++;
    b[0] = 2;
    dv.setUint32(1, this.ids.get(name), true);
    dv.setUint32(5, id, true);
    dv.setUint32(9, enc.length, true);
    b.set(enc, 13);
    b.set(payload, 13 + enc.length);
    return new Promise((resolve, reject) => { this.calls.set(id, { resolve, reject }); this.ws.send(b); });
  }
  // A binary response (opcode 3): true when it was one.
  response(b) {
    if (b[0] !== 3) return false;
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const id = dv.getUint32(5, true), n = dv.getUint32(9, true);
    const c = this.calls.get(id);
    if (c) { this.calls.delete(id); c.resolve({ encoding: new TextDecoder().decode(b.subarray(13, 13 + n)), payload: b.subarray(13 + n) }); }
    return true;
  }
  failure(msg) {
    const c = this.calls.get(msg.callId);
    if (c) { this.calls.delete(msg.callId); c.reject(new Error(msg.message)); }
  }
  // The socket closed: every call fails.
  close() { for (const c of this.calls.values()) c.reject(new Error('disconnected')); this.calls.clear(); }
}
