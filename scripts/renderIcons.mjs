// Renders web/icon.svg to the PNG icons the web app manifest and iOS need
// (web/icon-192.png, web/icon-512.png, web/apple-touch-icon.png) with Debian's
// Chromium through playwright-core. Run after changing the SVG:
//   node scripts/renderIcons.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const web = join(import.meta.dirname, '..', 'web');
const svg = readFileSync(join(web, 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'], headless: true });
try {
  for (const [file, size] of [['icon-192.png', 192], ['icon-512.png', 512], ['apple-touch-icon.png', 180]]) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    // Square and full-bleed (the rounded corners filled), so a maskable crop loses nothing.
    const square = svg.replace('rx="96" ', '');
    await page.setContent(`<html><body style="margin:0">${square.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body></html>`);
    writeFileSync(join(web, file), await page.screenshot({ omitBackground: false }));
    await page.close();
  }
} finally {
  await browser.close();
}
