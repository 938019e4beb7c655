// A camera's picture in the live page: node camera.mjs PAGE_URL SCREENSHOT.png
// Opens the page served by a running `ssxd run artifacts/scenes/camera.json --view`, waits until
// the corner shows the rover's camera, checks its size, that it is the scene as the camera sees
// it (sky above the horizon, the green ground below) and that new pictures keep coming as the
// rover drives, and saves a screenshot.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) { console.error('usage: node camera.mjs PAGE_URL SCREENSHOT.png'); process.exit(2); }
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  await page.waitForFunction(() => window.ssxView && window.ssxView.camera, null, { timeout: 20000 })
    .catch(() => fail('no camera picture within 20 s; errors: ' + errors.join('; ')));
  const first = await page.evaluate(() => window.ssxView.camera);
  if (first.path !== 'rover/camera' || first.width !== 320 || first.height !== 240)
    fail(`the corner shows ${JSON.stringify(first)}`);
  const option = await page.evaluate(() => document.getElementById('camera-pick').selectedOptions[0].textContent);
  if (option !== 'rover/camera (320 × 240)') fail(`the picker reads '${option}'`);
  // The sky's colour fills most of the top row (a pillar may stand in it); the ground (green,
  // lit from above) most of the bottom row.
  const rows = await page.evaluate(() => {
    const c = document.getElementById('camera-image'), g = c.getContext('2d');
    const share = (y, test) => {
      const d = g.getImageData(0, y, c.width, 1).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) n += test(d[i], d[i + 1], d[i + 2]) ? 1 : 0;
      return n / c.width;
    };
    return {
      sky: share(0, (r, g, b) => r === 170 && g === 200 && b === 235),
      ground: share(c.height - 1, (r, g, b) => g > r + 10 && g > b + 10),
    };
  });
  if (rows.sky < 0.7) fail(`${(100 * rows.sky).toFixed(0)}% of the top row is sky`);
  if (rows.ground < 0.7) fail(`${(100 * rows.ground).toFixed(0)}% of the bottom row is green ground`);
  // New pictures as the run goes on (30 a second simulated; the page takes the newest).
  let later = first;
  for (let i = 0; i < 20 && later.step <= first.step + 30; i++) { await sleep(250); later = await page.evaluate(() => window.ssxView.camera); }
  if (later.step <= first.step + 30) fail(`the picture stayed at step ${first.step} (then ${later.step})`);
  writeFileSync(out, await page.screenshot());
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`summary: ${later.path} ${later.width} × ${later.height}, steps ${first.step} -> ${later.step}; sky ${(100 * rows.sky).toFixed(0)}% of the top row, ground ${(100 * rows.ground).toFixed(0)}% of the bottom row`);
} finally {
  await browser.close();
}
