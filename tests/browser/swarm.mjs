// The live page at swarm scale in a real browser:
//   node swarm.mjs PAGE_URL SCREENSHOT.png ARENA_HALF_M [--min-fps 10] [--max-behind 1]
//        [--rtf-tol 0.1] [--after 15] [--samples 10] [--json OUT.json]
// Opens the page of a running `ssxd run <dispersal scene> --view` (real time) and checks, after
// `--after` seconds of wall time from the page's first picture:
// - the page draws at least --min-fps new states a second (counted in its requestAnimationFrame
//   callback, over 5 s);
// - the simulated time of the state on screen is within --max-behind seconds of the daemon's,
//   the daemon's being read at the same moment by a second, independent WebSocket client in its
//   own tab that subscribes to /clock only;
// - the status bar's real-time factor is within --rtf-tol of 1 (the run is real time) and its
//   lag agrees with the measured one within 0.5 s;
// - bodies are instanced: a few draw calls, not one per body;
// - the screenshot shows the floor beyond all four walls (square arena of half side ARENA_HALF_M
//   centred on the origin, walls 0.5 m high): the walls stand on it, not in the void, and the
//   camera's first view frames the whole arena.
// Prints a summary line (and writes the figures as JSON with --json) for BENCHMARKS.md.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const [url, out, halfArg] = args;
const opt = (name, dflt) => { const i = args.indexOf(name); return i < 0 ? dflt : Number(args[i + 1]); };
const half = Number(halfArg);
if (!url || !out || !(half > 0)) { console.error('usage: node swarm.mjs PAGE_URL SCREENSHOT.png ARENA_HALF_M [options]'); process.exit(2); }
const minFps = opt('--min-fps', 10), maxBehind = opt('--max-behind', 1), rtfTol = opt('--rtf-tol', 0.1);
const after = opt('--after', 15), samples = opt('--samples', 10);
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null;
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  // The daemon may still be starting: wait until it serves the page.
  for (let i = 0; i < 300; i++) {
    try { if ((await fetch(url)).ok) break; } catch { /* not listening yet */ }
    await sleep(100);
  }
  // 'commit': with a 10,000-robot scene Playwright's wait for "load" timed out here although the
  // page had loaded (its load event fired within a second); the wait below is the test.
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(() => window.ssxView && window.ssxView.bodies() > 100 && window.ssxView.tfFrames > 3,
    null, { timeout: 60000 }).catch(e => fail(`the page drew no scene within 60 s (${e.message.split('\n')[0]}); errors: ${errors.join('; ')}`));
  const wsPort = await page.evaluate(() => document.querySelector('meta[name="ssx-ws-port"]').content);

  // The reference: a second client that only reads the daemon's clock.
  const ref = await browser.newPage();
  await ref.evaluate(port => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    ws.binaryType = 'arraybuffer';
    window.clock = null;
    let clockChannel = null;
    const sub = () => ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: clockChannel }] }));
    ws.onerror = () => reject(new Error('reference client: no connection'));
    ws.onmessage = ev => {
      if (typeof ev.data === 'string') {
        const m = JSON.parse(ev.data);
        const ch = m.op === 'advertise' && m.channels.find(c => c.topic === '/clock');
        if (ch) { clockChannel = ch.id; sub(); }
        // Sent again 0.1 s after a refusal as unknown: the Foxglove SDK (0.30.3) sends a
        // channel's advertisement before it records the channel (viewer.js does the same).
        if (m.op === 'status' && m.message === `Unknown channel ID: ${clockChannel}`) setTimeout(sub, 100);
        return;
      }
      const b = new Uint8Array(ev.data);
      if (b[0] === 1) { window.clock = JSON.parse(new TextDecoder().decode(b.subarray(13))); resolve(); }
    };
  }), wsPort);

  await sleep(after * 1000);

  // Frames a second: the page draws in its requestAnimationFrame callback, and only when there
  // is something new; counted over 5 s, both pictures drawn and new states among them.
  const count = () => page.evaluate(() => [performance.now(), window.ssxView.draws, window.ssxView.tfFrames]);
  const c0 = await count();
  await sleep(5000);
  const c1 = await count();
  const fps = (c1[1] - c0[1]) * 1000 / (c1[0] - c0[0]), states = (c1[2] - c0[2]) * 1000 / (c1[0] - c0[0]);
  // How far behind the daemon the picture is: the daemon's clock read before and after the page's.
  const behind = [], lagGap = [];
  for (let i = 0; i < samples; i++) {
    const before = await ref.evaluate(() => window.clock.time);
    const drawn = await page.evaluate(() => ({ time: window.ssxView.status.drawnTime, lag: window.ssxView.status.lag(Date.now() / 1000) }));
    const afterT = await ref.evaluate(() => window.clock.time);
    const b = (before + afterT) / 2 - drawn.time;
    behind.push(b);
    if (drawn.lag != null) lagGap.push(Math.abs(drawn.lag - b));
    await sleep(300);
  }
  const status = await page.evaluate(() => ({
    rtf: document.getElementById('rtf').textContent, fps: document.getElementById('fps').textContent,
    lag: document.getElementById('lag').textContent, rays: document.getElementById('rays').textContent,
    raysShown: !document.getElementById('rays-box').hidden, calls: window.ssxView.drawCalls(),
    bodies: window.ssxView.bodies(), received: window.ssxView.framesReceived, skipped: window.ssxView.framesSkipped,
  }));
  const rtf = parseFloat(status.rtf.replace('×', ''));
  const worst = Math.max(...behind), meanBehind = behind.reduce((a, b) => a + b, 0) / behind.length;

  // The floor beyond each wall, and the wall itself, on the screenshot.
  const shot = await page.screenshot();
  writeFileSync(out, shot);
  const points = await page.evaluate(h => {
    const o = h + 2, w = h;
    return {
      floor: [[0, -o, 0], [0, o, 0], [-o, 0, 0], [o, 0, 0]].map(p => window.ssxView.project(p)),
      wall: [[0, -w, 0.45], [0, w, 0.45], [-w, 0, 0.45], [w, 0, 0.45]].map(p => window.ssxView.project(p)),
      corners: [[-h, -h, 0], [h, -h, 0], [-h, h, 0], [h, h, 0]].map(p => window.ssxView.project(p)),
      size: [window.innerWidth, window.innerHeight - 28],
    };
  }, half);
  // Per point, the pixels of the 11 × 11 square around it.
  const pixels = await page.evaluate(async ([png, pts]) => {
    const img = new Image(); img.src = 'data:image/png;base64,' + png; await img.decode();
    const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
    const g = c.getContext('2d', { willReadFrequently: true });
    g.drawImage(img, 0, 0);
    return pts.map(([x, y]) => {
      const d = g.getImageData(Math.round(x) - 5, Math.round(y) - 5, 11, 11).data, out = [];
      for (let k = 0; k < d.length; k += 4) out.push([d[k], d[k + 1], d[k + 2]]);
      return out;
    });
  }, [shot.toString('base64'), [...points.floor, ...points.wall]]);
  const background = [0x1d, 0x21, 0x26];
  const near = (a, b, d) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) <= d;
  const figures = {
    fps, states_per_s: states, behind_mean_s: meanBehind, behind_max_s: worst, lag_gap_max_s: lagGap.length ? Math.max(...lagGap) : null,
    status_rtf: rtf, status_fps: status.fps, status_lag: status.lag, rays: status.raysShown ? status.rays : 'all',
    draw_calls: status.calls, entities: status.bodies, frames_received: status.received, frames_skipped: status.skipped,
  };
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(figures, null, 1));
  console.log('figures: ' + JSON.stringify(figures));

  if (errors.length) fail('page errors: ' + errors.join('; '));
  if (!(states >= minFps)) fail(`the page drew ${states.toFixed(1)} new states a second (${fps.toFixed(1)} pictures), below ${minFps}`);
  if (!(worst <= maxBehind)) fail(`the picture was up to ${worst.toFixed(2)} s of simulated time behind the daemon (limit ${maxBehind} s): ${behind.map(b => b.toFixed(2)).join(', ')}`);
  if (!(Math.abs(rtf - 1) <= rtfTol)) fail(`the status bar's real-time factor is '${status.rtf}', not within ${rtfTol} of 1`);
  if (lagGap.length < samples || Math.max(...lagGap) > 0.5) fail(`the status bar's lag disagrees with the measured one: ${lagGap.map(g => g.toFixed(2)).join(', ')}`);
  if (!(status.calls <= 20)) fail(`${status.calls} draw calls for ${status.bodies} entities: bodies are not instanced`);
  const inside = ([x, y]) => x >= 0 && y >= 0 && x < points.size[0] && y < points.size[1];
  if (!points.corners.every(inside)) fail(`the first view does not frame the arena: its corners are at ${JSON.stringify(points.corners.map(p => p.map(Math.round)))}`);
  // Beyond each wall, floor: the commonest colour around the point is not the background. On
  // each wall, its colour: the walls are grey with a touch of blue (0.6, 0.6, 0.65), lit or in
  // shade blue stays above green, where the floor and its grid lines are green or grey.
  const commonest = square => {
    const n = new Map();
    for (const p of square) n.set(p.join(), (n.get(p.join()) || 0) + 1);
    return [...n].sort((a, b) => b[1] - a[1])[0][0].split(',').map(Number);
  };
  const floor = pixels.slice(0, 4).map(commonest), walls = pixels.slice(4);
  floor.forEach((p, i) => { if (near(p, background, 12)) fail(`no floor beyond wall ${i} (it is the background, ${p})`); });
  walls.forEach((square, i) => {
    const wall = square.filter(p => p[2] > p[1] + 3).length;
    if (wall < 2) fail(`wall ${i} is not drawn over the floor (no wall-coloured pixel near it; floor ${floor[i]})`);
  });
  console.log(`summary: ${status.bodies} entities in ${status.calls} draw calls; ${states.toFixed(1)} new states drawn a second; ` +
    `picture behind the daemon by ${meanBehind.toFixed(2)} s on average, ${worst.toFixed(2)} s at most; status bar rtf ${status.rtf}, lag ${status.lag}; ` +
    `rays ${figures.rays}; floor beyond all four walls; screenshot ${out}`);
} finally {
  await browser.close();
}
