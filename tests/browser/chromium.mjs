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
