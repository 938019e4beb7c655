// Unit tests of the page's parts that need no browser: the status bar's figures and the pulled
// frames' reader. Run with `node --test tests/browser/` (.ci/run does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Status } from '../../engines/view/assets/status.js';
import { readFrame, readCamera, worldRays, Services, MISS } from '../../engines/view/assets/frames.js';

const stats = (steps, sim, wall, extra = {}) => ({
  steps, sim_time_s: sim, wall_time_s: wall, achieved_rt_factor: sim / wall, deadline_misses: 0, ...extra,
});

test('the real-time factor is the daemon\'s, over its last interval, whatever the page draws', () => {
  const s = new Status();
  // Before any statistics: nothing is claimed.
  assert.equal(s.texts(0).rtf, '–');
  // The first /stats: the run's average so far.
  s.onStats(stats(500, 5, 10));
  assert.equal(s.texts(0).rtf, '×0.50');
  // The page draws states far apart in simulated time (it fell behind): no effect.
  s.drawn(1.0, 100); s.frame(0); s.drawn(9.0, 101); s.frame(1000);
  assert.equal(s.texts(0).rtf, '×0.50');
  // One wall second later the daemon had simulated one more second: ×1.00, not the whole run's 0.55.
  s.onStats(stats(600, 6, 11, { deadline_misses: 3 }));
  assert.equal(s.texts(0).rtf, '×1.00');
  assert.equal(s.texts(0).misses, '3');
  // A paused daemon: ×0.00.
  s.onStats(stats(600, 6, 12));
  assert.equal(s.texts(0).rtf, '×0.00');
});

test('simulated time and step are the newest of the daemon\'s /clock and /stats, not the drawn state', () => {
  const s = new Status();
  s.clock({ step: 120, time: 1.2, wall: 50 });
  s.drawn(0.4, 49);
  assert.deepEqual([s.texts(0).simtime, s.texts(0).step], ['1.20 s', '120']);
  // Statistics taken before the last clock do not move it back.
  s.onStats(stats(100, 1.0, 1.0));
  assert.equal(s.texts(0).simtime, '1.20 s');
  s.onStats(stats(130, 1.3, 1.3));
  assert.deepEqual([s.texts(0).simtime, s.texts(0).step], ['1.30 s', '130']);
  // A reset: time and step start over, from the /reset message or a /clock of a new episode.
  s.restart(1);
  s.clock({ step: 3, time: 0.03, wall: 52, episode: 1 });
  assert.deepEqual([s.texts(0).simtime, s.texts(0).step], ['0.03 s', '3']);
  s.clock({ step: 1, time: 0.01, wall: 53, episode: 2 });
  assert.deepEqual([s.texts(0).simtime, s.texts(0).step], ['0.01 s', '1']);
});

test('lag is how long ago the daemon took the state on screen; fps counts drawn frames', () => {
  const s = new Status();
  assert.equal(s.texts(1000).lag, '–');
  s.drawn(3.0, 1000.0);
  assert.equal(s.texts(1000.25).lag, '250 ms');
  assert.equal(s.texts(1002.5).lag, '2.5 s');
  // Clocks a little apart (the daemon's ahead): not a negative lag.
  assert.equal(s.texts(999.9).lag, '0 ms');
  // 12 frames drawn in 1.2 s: 10 a second, once a second has passed.
  for (let k = 0; k <= 12; k++) s.frame(100 * k);
  assert.equal(s.texts(0).fps, '10');
});

test('the rays figure says when the daemon thins them and when the page leaves some out', () => {
  const s = new Status();
  s.onRays(12000, 12000);
  s.onPageRays(12000, 0);
  assert.equal(s.texts(0).rays, null);
  s.onRays(17148, 120000);
  assert.equal(s.texts(0).rays, '17,148 of 120,000 drawn');
  s.onPageRays(50000, 148);
  assert.equal(s.texts(0).rays, '17,148 of 120,000 drawn; page cap 50,000, 148 left out');
});

// A frame as the daemon writes it (engines/view/src/pull.rs), with `lead` bytes before it as in
// a WebSocket message, so that the reader must copy to align.
function frameBytes({ step, time, wall, episode = 0, poses, rays }, lead = 3) {
  const n = poses.length / 7;
  let size = 40 + 4 * poses.length + 4;
  for (const [, d] of rays) size += 8 + 4 * Math.ceil(d.length / 2);
  const b = new Uint8Array(lead + size), dv = new DataView(b.buffer, lead);
  dv.setUint32(0, 2, true); dv.setUint32(4, n, true);
  dv.setFloat64(8, step, true); dv.setFloat64(16, time, true); dv.setFloat64(24, wall, true);
  dv.setUint32(32, episode, true);
  poses.forEach((p, k) => dv.setFloat32(40 + 4 * k, p, true));
  let i = 40 + 4 * poses.length;
  dv.setUint32(i, rays.length, true); i += 4;
  for (const [sensor, d] of rays) {
    dv.setUint32(i, sensor, true); dv.setUint32(i + 4, d.length, true);
    d.forEach((v, k) => dv.setUint16(i + 8 + 2 * k, v, true));
    i += 8 + 4 * Math.ceil(d.length / 2);
  }
  return b.subarray(lead);
}

test('a pulled frame is read whole: poses, then each fresh sensor\'s distances', () => {
  const bytes = frameBytes({
    step: 42, time: 0.42, wall: 1.7e9, episode: 3, poses: [1, 2, 3, 0, 0, 0, 1, 4, 5, 6, 0, 0, 1, 0],
    rays: [[0, [1, 2, 3]], [5, [MISS, 7]]],
  });
  const f = readFrame(bytes);
  assert.deepEqual([f.step, f.time, f.wall, f.episode, f.count], [42, 0.42, 1.7e9, 3, 2]);
  assert.deepEqual(Array.from(f.poses.subarray(7)), [4, 5, 6, 0, 0, 1, 0]);
  assert.deepEqual(f.rays.map(r => [r.sensor, Array.from(r.distances)]), [[0, [1, 2, 3]], [5, [MISS, 7]]]);
  // A frame of another version, or with bytes left over, is refused with a message.
  const v1 = bytes.slice(); v1[0] = 1;
  assert.throws(() => readFrame(v1), /ssx.frame: version 1, this page reads 2/);
  const longer = new Uint8Array(bytes.length + 4); longer.set(bytes);
  assert.throws(() => readFrame(longer), new RegExp(`ssx.frame: ${bytes.length + 4} bytes, ${bytes.length} read`));
});

test('rays are put in the world from the body\'s pose, the mount and the distances', () => {
  // A body at (1, 2, 0) turned a quarter turn left: its +x is the world's +y.
  const h = Math.SQRT1_2, pose = [1, 2, 0, 0, 0, h, h];
  const g = { position: [0.1, 0, 0.2], directions: [[1, 0, 0], [0, 1, 0]], max_range: 2 };
  const out = worldRays(pose, 0, g, [Math.round(0.5 / 2 * (MISS - 1)), MISS], new Float32Array(0));
  const close = (a, b) => a.forEach((x, k) => assert.ok(Math.abs(x - b[k]) < 1e-4, `${Array.from(a)} vs ${b}`));
  // Ray 0: from the mount (1, 2.1, 0.2) 0.5 m along +y; a hit, orange.
  close(out.subarray(0, 6), [1, 2.1, 0.2, 1, 0.35, 0.1]);
  close(out.subarray(6, 9), [1, 2.6, 0.2]);
  // Ray 1: nothing within range, drawn to it (2 m along the body's +y, the world's -x), green.
  close(out.subarray(18, 21), [-1, 2.1, 0.2]);
  close(out.subarray(21, 24), [0.45, 0.75, 0.45]);
});

test('service calls are written as the Foxglove protocol says and answered by call id', async () => {
  const sent = [];
  const s = new Services({ send: b => sent.push(b) });
  s.advertise({ services: [{ id: 7, name: '/ssx/frame' }] });
  const answer = s.call('/ssx/frame', { after: 3 });
  const b = sent[0], dv = new DataView(b.buffer);
  assert.deepEqual([b[0], dv.getUint32(1, true), dv.getUint32(5, true), dv.getUint32(9, true)], [2, 7, 1, 4]);
  assert.equal(new TextDecoder().decode(b.subarray(13)), 'json{"after":3}');
  // The answer: opcode 3, service 7, call 1, encoding, payload.
  const enc = new TextEncoder().encode('ssx.frame.v1');
  const r = new Uint8Array(13 + enc.length + 2), rv = new DataView(r.buffer);
  r[0] = 3; rv.setUint32(1, 7, true); rv.setUint32(5, 1, true); rv.setUint32(9, enc.length, true);
  r.set(enc, 13); r.set([9, 8], 13 + enc.length);
  assert.equal(s.response(r), true);
  const got = await answer;
  assert.equal(got.encoding, 'ssx.frame.v1');
  assert.deepEqual(Array.from(got.payload), [9, 8]);
  // A failure rejects its call with the server's message; a closed socket fails the rest.
  const failing = s.call('/ssx/frame', { after: -1 });
  s.failure({ op: 'serviceCallFailure', serviceId: 7, callId: 2, message: 'bad after' });
  await assert.rejects(failing, /bad after/);
  const pending = s.call('/ssx/frame', {});
  s.close();
  await assert.rejects(pending, /disconnected/);
});

test('a camera picture is read as RGBA with its step, and an empty answer as none', () => {
  const head = (w, h, step) => {
    const b = new Uint8Array(24), dv = new DataView(b.buffer);
    dv.setUint32(0, 1, true); dv.setUint32(4, w, true); dv.setUint32(8, h, true); dv.setFloat64(16, step, true);
    return b;
  };
  const bytes = new Uint8Array(24 + 8);
  bytes.set(head(2, 1, 33));
  bytes.set([200, 10, 20, 255, 0, 0, 0, 255], 24);
  const p = readCamera(bytes);
  assert.deepEqual([p.step, p.width, p.height, Array.from(p.rgba)], [33, 2, 1, [200, 10, 20, 255, 0, 0, 0, 255]]);
  assert.equal(readCamera(head(0, 0, 33)), null);
  assert.throws(() => readCamera(head(2, 1, 33)), /ssx.camera: 24 bytes for 2 × 1/);
  const v2 = head(0, 0, 1); v2[0] = 2;
  assert.throws(() => readCamera(v2), /ssx.camera: version 2, this page reads 1/);
});
