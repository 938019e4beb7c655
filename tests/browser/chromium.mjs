// Debian's chromium, headless, as this machine allows it: no sandbox (root), WebGL in software
// (SwiftShader), no background connections (the network is closed).
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--disable-quic',
           '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// A 1200 × 720 page that collects what went wrong in it: uncaught errors, console errors and
// requests that got no answer.
export async function openPage(browser) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 720 } });
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  page.on('requestfailed', r => errors.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  return { page, errors };
}
