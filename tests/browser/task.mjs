// A VMAS task's scene in the live page: node task.mjs PAGE_URL SCREENSHOT.png
// Opens the page served by a running `ssxd run PASSAGE_SCENE --view` (envs.passage_scene, VMAS's
// passage), waits until it has drawn the scene, checks that it draws the wall's 19 boxes on 20
// slots of 0.103 m with one open, the 5 agents, and the 5 goals (bodies with no collider, drawn by
// their visuals) in VMAS's cross of 0.1 m arms, that nothing failed in the page, and saves a
// screenshot.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const [url, out] = process.argv.slice(2);
if (!url || !out) { console.error('usage: node task.mjs PAGE_URL SCREENSHOT.png'); process.exit(2); }
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  await page.waitForFunction(() => window.ssxView && window.ssxView.bodies() >= 33 && window.ssxView.tfFrames > 5,
    null, { timeout: 20000 }).catch(() => fail('the page drew no scene within 20 s; errors: ' + errors.join('; ')));
  const where = async name => (await page.evaluate(n => window.ssxView.locate(n), name + '/'))?.world;
  const count = async prefix => page.evaluate(p => window.ssxView.shapesOf(p).length, prefix);
  for (const [prefix, n] of [['passage_', 19], ['agent_', 5], ['goal_', 5]]) {
    const got = await count(prefix);
    if (got !== n) fail(`${got} shapes drawn for ${prefix}*, not ${n}`);
  }
  // The wall: every box on a slot, one slot open.
  const first = -1 - 0.03333 + 0.103 / 2;
  const slots = [];
  for (let i = 0; i < 19; i++) {
    const p = await where(`passage_${i}`);
    const s = (p[0] - first) / 0.103;
    if (Math.abs(s - Math.round(s)) > 1e-3 || Math.abs(p[1]) > 1e-3) fail(`box ${i} at ${p} is on no slot`);
    slots.push(Math.round(s));
  }
  const open = [...Array(20).keys()].filter(s => !slots.includes(s));
  if (open.length !== 1) fail(`open slots ${open}`);
  // The goals: a centre and four at 0.1 m along +x, +y, -x, -y.
  const centre = await where('goal_4');
  const arms = [[0.1, 0], [0, 0.1], [-0.1, 0], [0, -0.1]];
  for (let i = 0; i < 4; i++) {
    const p = await where(`goal_${i}`);
    if (Math.hypot(p[0] - centre[0] - arms[i][0], p[1] - centre[1] - arms[i][1]) > 1e-3) fail(`goal ${i} at ${p}, the centre at ${centre}`);
  }
  if (centre[1] < 0.3 - 1e-3) fail(`the goals' centre ${centre} is below y = 0.3`);
  writeFileSync(out, await page.screenshot());
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`summary: 19 boxes with slot ${open[0]} open, 5 agents, 5 goals about (${centre[0].toFixed(2)}, ${centre[1].toFixed(2)})`);
} finally {
  await browser.close();
}
