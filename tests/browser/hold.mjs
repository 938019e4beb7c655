// Holds the live view's page open in a real browser for a while: node hold.mjs PAGE_URL SECONDS
// (the view benchmark's "one page open"). Prints how many transforms the page drew.
import { launch } from './chromium.mjs';

const [url, seconds] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 720 } });
  for (let i = 0; i < 100; i++) {
    try { await page.goto(url); break; } catch { await new Promise(r => setTimeout(r, 100)); }
  }
  await new Promise(r => setTimeout(r, Number(seconds) * 1000));
  console.log(`page drew ${await page.evaluate(() => window.ssxView.tfFrames)} transform frames`);
} finally {
  await browser.close();
}
