// The live page follows a reset (issue 49): node reset.mjs PAGE_URL SCREENSHOT.png
// Opens the page of a running `ssxd run tests/browser/scenes/reset.json --view` (a generated
// building; the Zenoh extension on tcp/127.0.0.1:7447), waits until it has drawn the world,
// then resets the run with another seed through the Zenoh control (the stand-in clients'
// `common.py`, eclipse-zenoh). Checks that the page learns of it at once (within 3 s), that its
// status bar's simulated time goes back, that it draws the new building's walls (other than the
// old ones, and the same as a page opened afresh after the reset draws), that it keeps drawing,
// and that nothing failed in the page. Saves the screenshot after the reset.
import { launch, openPage } from './chromium.mjs';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) { console.error('usage: node reset.mjs PAGE_URL SCREENSHOT.png'); process.exit(2); }
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));
const control = command => JSON.parse(execFileSync('python3', ['-c', `
import json, sys
sys.path.insert(0, 'extensions/zenoh/clients')
from common import control, open_session
s = open_session('tcp/127.0.0.1:7447', wait=10)
print(json.dumps(control(s, 'ssx', sys.argv[1])))
s.close()`, command], { timeout: 30000 }).toString());

const drawn = page => page.waitForFunction(() => window.ssxView && window.ssxView.bodies() > 2
  && window.ssxView.tfFrames > 5 && window.ssxView.locate('rover/') && window.ssxView.shapesOf('map/').length > 0,
  null, { timeout: 20000 });
const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  await drawn(page).catch(() => fail('the page drew no world within 20 s; errors: ' + errors.join('; ')));
  const statusTime = async p => parseFloat((await p.textContent('#simtime')) || 'NaN');
  await sleep(2000);
  const t1 = await statusTime(page);
  const before = await page.evaluate(() => window.ssxView.shapesOf('map/'));
  if (!(t1 > 1)) fail(`the status bar's simulated time did not advance before the reset: ${t1}`);

  const answer = control('reset 5');
  if (!answer.ok) fail('the reset was refused: ' + JSON.stringify(answer));
  const sent = Date.now();
  await page.waitForFunction(() => window.ssxView.resets >= 1, null, { timeout: 3000 })
    .catch(() => fail('the page did not learn of the reset within 3 s'));
  const noticed = (Date.now() - sent) / 1000;
  await sleep(300);
  const t2 = await statusTime(page);
  if (!(t2 < t1)) fail(`the status bar's simulated time did not go back: ${t1} s before the reset, ${t2} s after`);
  const after = await page.evaluate(() => window.ssxView.shapesOf('map/'));
  if (JSON.stringify(after) === JSON.stringify(before)) fail('the page still draws the old building\'s walls');
  const frames = await page.evaluate(() => window.ssxView.tfFrames);
  await sleep(1000);
  if (!((await page.evaluate(() => window.ssxView.tfFrames)) > frames)) fail('the page stopped drawing after the reset');

  // A page opened afresh draws the same new world.
  const fresh = await openPage(browser);
  await fresh.page.goto(url);
  await drawn(fresh.page).catch(() => fail('a fresh page drew no world within 20 s'));
  const seen = await fresh.page.evaluate(() => window.ssxView.shapesOf('map/'));
  if (JSON.stringify(seen) !== JSON.stringify(after)) {
    fail(`the page that followed the reset draws ${after.length} wall shapes, a fresh page ${seen.length}, not the same`);
  }
  writeFileSync(out, await page.screenshot());
  if (errors.length || fresh.errors.length) fail('page errors: ' + [...errors, ...fresh.errors].join('; '));
  console.log(`summary: reset noticed by the page in ${noticed.toFixed(2)} s; sim time ${t1.toFixed(2)} -> ${t2.toFixed(2)} s; ` +
              `walls ${before.length} -> ${after.length} shapes, the same as a fresh page's; screenshot ${out}`);
} finally {
  await browser.close();
}
