// A robot's meshes in the live page: node robot.mjs PAGE_URL SCREENSHOT.png TRIANGLES MESHES
// Opens the page served by a running `ssxd run artifacts/scenes/turtlebot3.json --view`, waits
// until every mesh file the scene names has arrived from the page server, checks their triangles
// (TRIANGLES in all, in MESHES instances) and that they are drawn where the robot stands (the
// picture around it changes when the meshes are hidden), and saves a screenshot.
import { launch, openPage } from './chromium.mjs';
import { writeFileSync } from 'node:fs';

const [url, out, triangles, instances] = process.argv.slice(2);
if (!url || !out || !triangles || !instances) {
  console.error('usage: node robot.mjs PAGE_URL SCREENSHOT.png TRIANGLES MESHES');
  process.exit(2);
}
const fail = m => { console.error('FAIL: ' + m); process.exit(1); };
const sleep = ms => new Promise(r => setTimeout(r, ms));

const browser = await launch();
try {
  const { page, errors } = await openPage(browser);
  await page.goto(url);
  await page.waitForFunction(() => {
    const v = window.ssxView;
    if (!v || !v.meshes || v.tfFrames < 5 || !v.locate('tb3/')) return false;
    const m = v.meshes();
    return m.files > 0 && m.loaded + m.failed.length === m.files;
  }, null, { timeout: 30000 }).catch(() => fail('the meshes did not arrive within 30 s; errors: ' + errors.join('; ')));
  const m = await page.evaluate(() => window.ssxView.meshes());
  if (m.failed.length) fail('meshes failed: ' + m.failed.join('; '));
  if (m.triangles !== Number(triangles)) fail(`${m.triangles} triangles drawn, not ${triangles}`);
  if (m.instances !== Number(instances)) fail(`${m.instances} mesh instances, not ${instances}`);
  // The camera frames the robot once its meshes are in; then compare the picture around the
  // robot with the meshes shown and hidden.
  await sleep(500);
  const robot = await page.evaluate(() => window.ssxView.locate('tb3/'));
  const shown = await page.screenshot();
  await page.evaluate(() => window.ssxView.meshesVisible(false));
  await sleep(500);
  const hidden = await page.screenshot();
  await page.evaluate(() => window.ssxView.meshesVisible(true));
  await sleep(300);
  writeFileSync(out, await page.screenshot());
  const diff = await page.evaluate(async ([a, b, [x, y]]) => {
    const load = async b64 => { const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode(); return img; };
    const [ia, ib] = [await load(a), await load(b)];
    const c = document.createElement('canvas'); c.width = ia.width; c.height = ia.height;
    const g = c.getContext('2d', { willReadFrequently: true });
    const region = img => { g.drawImage(img, 0, 0); return g.getImageData(Math.max(0, x - 60), Math.max(0, y - 60), 120, 120).data; };
    const ra = region(ia), rb = region(ib);
    let changed = 0;
    for (let k = 0; k < ra.length; k += 4) {
      if (Math.abs(ra[k] - rb[k]) + Math.abs(ra[k + 1] - rb[k + 1]) + Math.abs(ra[k + 2] - rb[k + 2]) > 30) changed++;
    }
    return { changed, total: ra.length / 4 };
  }, [shown.toString('base64'), hidden.toString('base64'), robot.screen.map(Math.round)]);
  if (diff.changed < 200) fail(`hiding the meshes changed ${diff.changed} of ${diff.total} pixels around the robot`);
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log(`summary: ${m.loaded} mesh files, ${m.triangles} triangles in ${m.instances} instances; ` +
              `${diff.changed} of ${diff.total} pixels around the robot are its meshes; screenshot ${out}`);
} finally {
  await browser.close();
}
