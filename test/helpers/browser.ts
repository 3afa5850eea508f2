// Debian's Chromium driven by playwright-core, for the page's browser tests: a
// throwaway profile per launch, closed and removed by the test's cleanups.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT } from './daemon.js';
import type { Cleanups } from './fsStack.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Where screenshots go (gitignored). */
export const SCREENSHOTS = join(REPO_ROOT, 'test-output', 'web');
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Is Chromium here? CI must run the browser tests (.ci/run installs it); on a
 * developer machine without it they are skipped with the install command.
 */
export function haveChromium(): boolean {
  const have = existsSync(CHROMIUM);
  if (!have && process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing; .ci/run installs it (apt-get install -y chromium)`);
  if (!have) process.stderr.write(`skipping browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)\n`);
  return have;
}

/** `extraArgs` are more Chromium flags (e.g. the certificate pin of a self-signed page). */
export async function launchBrowser(cleanups: Cleanups, viewport = { width: 1280, height: 900 }, extraArgs: string[] = []): Promise<{ browser: BrowserContext; page: Page }> {
  const profile = mkdtempSync(join(tmpdir(), 'assent-chromium-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, ...extraArgs], headless: true, viewport });
  cleanups.push(() => browser.close());
  const page = browser.pages()[0] ?? (await browser.newPage());
  return { browser, page };
}

/** document scrollWidth − clientWidth: > 0 means the page scrolls sideways. */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, `${name}.png`);
}
