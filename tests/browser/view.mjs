// The live view's page in a real browser: node view.mjs PAGE_URL SCREENSHOT.png
// Opens the page served by a running `ssxd run artifacts/scenes/quickstart.json --view`, waits
// until it has drawn the scene, checks that the simulated time in the status bar advances and
// that the picture changes where the quadrotor flies, and saves a screenshot.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) { console.error('usage: node view.mjs PAGE_URL SCREENSHOT.png'); process.exit(2); }
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  // Drawn: the scene's entities are in and transforms have arrived.
  await page.waitForFunction(() => window.ssxView && window.ssxView.bodies() > 5 && window.ssxView.tfFrames > 5
    && window.ssxView.locate('quad/'), null, { timeout: 20000 }).catch(() => fail('the page drew no scene within 20 s; errors: ' + errors.join('; ')));
  const statusTime = async () => parseFloat((await page.textContent('#simtime')) || 'NaN');
  await sleep(400);
  const t1 = await statusTime();
  const a = await page.evaluate(() => window.ssxView.locate('quad/'));
  const shotA = await page.screenshot();
  // Wait until the quadrotor has moved at least 0.3 m (it dwells 2 s at each waypoint).
  let b = a;
  for (let i = 0; i < 30; i++) {
    await sleep(500);
    b = await page.evaluate(() => window.ssxView.locate('quad/'));
    if (Math.hypot(b.world[0] - a.world[0], b.world[1] - a.world[1], b.world[2] - a.world[2]) > 0.3) break;
  }
  const moved = Math.hypot(b.world[0] - a.world[0], b.world[1] - a.world[1], b.world[2] - a.world[2]);
  if (moved <= 0.3) fail(`the quadrotor did not move in the view (${moved.toFixed(3)} m in 15 s)`);
  const t2 = await statusTime();
  if (!(t2 > t1 + 0.4)) fail(`the status bar's simulated time did not advance: ${t1} then ${t2}`);
  const shotB = await page.screenshot();
  writeFileSync(out, shotB);
  // Compare the two pictures around where the quadrotor was and where it is, in the page itself.
  const diff = await page.evaluate(async ([pa, pb, sa, sb]) => {
    const load = async b64 => { const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode(); return img; };
    const [ia, ib] = [await load(pa), await load(pb)];
    const c = document.createElement('canvas'); c.width = ia.width; c.height = ia.height;
    const g = c.getContext('2d', { willReadFrequently: true });
    const region = (img, [x, y]) => { g.drawImage(img, 0, 0); return g.getImageData(Math.max(0, x - 30), Math.max(0, y - 30), 60, 60).data; };
    let changed = 0, total = 0;
    for (const p of [sa, sb]) {
      const ra = region(ia, p), rb = region(ib, p);
      for (let k = 0; k < ra.length; k += 4) {
        total++;
        if (Math.abs(ra[k] - rb[k]) + Math.abs(ra[k + 1] - rb[k + 1]) + Math.abs(ra[k + 2] - rb[k + 2]) > 30) changed++;
      }
    }
    return { changed, total };
  }, [shotA.toString('base64'), shotB.toString('base64'), a.screen.map(Math.round), b.screen.map(Math.round)]);
  if (diff.changed < 50) fail(`the picture did not change where the quadrotor flies (${diff.changed} of ${diff.total} pixels)`);
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`summary: page drew ${await page.evaluate(() => window.ssxView.bodies())} entities; sim time ${t1.toFixed(2)} -> ${t2.toFixed(2)} s; ` +
              `quadrotor moved ${moved.toFixed(2)} m in the view; ${diff.changed} of ${diff.total} pixels changed around it; screenshot ${out}`);
} finally {
  await browser.close();
}
