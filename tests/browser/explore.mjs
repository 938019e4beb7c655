// The explore extension's overlays in the live page: node explore.mjs PAGE_URL SCREENSHOT.png
// Opens the page served by a running `ssxd run artifacts/scenes/exploration.json --view`, waits
// until the explored map is drawn over the floor and the status bar shows the explored share,
// checks that the map grows and that the share in the status bar follows the daemon's figure,
// and saves a screenshot.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) { console.error('usage: node explore.mjs PAGE_URL SCREENSHOT.png'); process.exit(2); }
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));
const topic = '/overlays/explore/explored';

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  await page.waitForFunction(t => window.ssxView && window.ssxView.overlay(t) && window.ssxView.explored != null,
    topic, { timeout: 30000 }).catch(() => fail('no explored map or share within 30 s; errors: ' + errors.join('; ')));
  const seen = () => page.evaluate(t => window.ssxView.overlay(t), topic);
  const first = await seen();
  if (first.width !== 120 || first.height !== 80) fail(`the map is ${first.width} × ${first.height} cells, not 120 × 80`);
  // The map is redrawn every simulated second: wait for it to grow.
  let later = first;
  for (let i = 0; i < 40 && later.white <= first.white; i++) { await sleep(500); later = await seen(); }
  if (later.white <= first.white) fail(`the explored map did not grow in 20 s (${first.white} cells)`);
  if (later.drawn !== first.drawn) fail(`the free cells changed: ${first.drawn} then ${later.drawn}`);
  // The bar is redrawn 5 times a second from the newest /stats: read both at one moment.
  await sleep(300);
  const [text, share] = await page.evaluate(() => [document.getElementById('explored').textContent, window.ssxView.shownExplored]);
  if (!/^\d+\.\d% \(50% /.test(text)) fail(`the status bar reads '${text}'`);
  if (Math.abs(parseFloat(text) - 100 * share) > 0.051) fail(`the status bar says ${text}, the daemon ${share}`);
  // The bar's share (the daemon's figure, once a wall second) and the drawn map (once a simulated
  // second) are taken up to a second or two apart; early on the share grows about 1% a second.
  const now = await seen();
  if (Math.abs(now.white / now.drawn - share) > 0.03) fail(`the map shows ${now.white} of ${now.drawn} cells explored, the status bar ${text}`);
  await sleep(300);
  writeFileSync(out, await page.screenshot());
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`summary: explored map ${later.width} × ${later.height} cells, explored ${first.white} -> ${later.white} of ${later.drawn} free cells; status bar: explored ${text}`);
} finally {
  await browser.close();
}
