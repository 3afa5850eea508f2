// The approval page on a phone (R-REM-5, issue 13 item 5): a deep link
// `#/approvals/<id>` opens that approval, through pairing when needed; a card
// names agent, host, cwd and session, says why it asks and what it risks, shows
// a shell action's commands with their rules, multi-line arguments as blocks
// (still escaped) and file edits as a diff; the title and badge count what
// waits; the page installs, fits 360 px and its touch targets are 44 px.
// Debian's Chromium driven by playwright-core.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { escapedJson } from '../../../src/core/base/escape.js';
import { haveChromium, horizontalOverflow, launchBrowser, screenshotPath } from '../../helpers/browser.js';
import type { TempHome } from '../../helpers/daemon.js';
import { connectGateway, startFsStack } from '../../helpers/fsStack.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';
import { runCliInTerminal } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();

interface Setup {
  home: TempHome;
  dir: string;
  client: Client;
  url: string;
  code: string;
  page: Page;
}

async function setup(config: Record<string, unknown> = {}): Promise<Setup> {
  const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } }, ...config });
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  const { url, code } = (JSON.parse(web.stdout) as { data: { url: string; code: string } }).data;
  const { client } = await connectGateway(cleanups, home);
  const { page } = await launchBrowser(cleanups);
  return { home, dir, client, url, code, page };
}

/** An MCP call that may still be waiting when a failed test cleans up: its rejection then is expected, not unhandled. */
function write(client: Client, path: string, content: string): ReturnType<Client['callTool']> {
  const call = client.callTool({ name: 'write_file', arguments: { path, content } }, undefined, { timeout: 60_000 });
  call.catch(() => undefined);
  return call;
}

/** The ids of the pending approvals, as `assent pending --json` lists them, once there are `count`. */
async function pendingIds(home: TempHome, count: number): Promise<string[]> {
  for (let i = 0; i < 200; i += 1) {
    const result = await home.runCli(['pending', '--json']);
    const ids = (JSON.parse(result.stdout) as { data: { id: string }[] }).data.map((approval) => approval.id);
    if (ids.length >= count) return ids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${count} pending approvals`);
}

describe.skipIf(!haveChromium())('the approval page opened from a link', () => {
  it('R-REM-5 (remote 5) #/approvals/<id> keeps the link through pairing, opens that approval, approves it, and the MCP call completes once', async () => {
    const { home, dir, client, url, code, page } = await setup();
    const other = write(client, join(dir, 'other.txt'), 'not this one');
    const [otherId] = await pendingIds(home, 1);
    const target = join(dir, 'linked.txt');
    const call = write(client, target, 'from the link');
    const id = (await pendingIds(home, 2)).find((candidate) => candidate !== otherId);
    expect(id).toBeDefined();

    await page.goto(`${url}#/approvals/${id}`);
    // Not paired yet: the pairing form says where it will go, and the link stays in the address bar.
    await page.getByLabel('Pairing code').waitFor({ timeout: 10_000 });
    expect(await page.locator('#pair-target').textContent()).toContain(`opens approval ${id}`);
    expect(page.url()).toBe(`${url}#/approvals/${id}`);
    await page.getByLabel('Pairing code').fill(code);
    await page.getByRole('button', { name: 'Pair' }).click();

    const card = page.locator('#approval-focus li.card');
    await card.first().waitFor({ timeout: 15_000 });
    expect(await card.count()).toBe(1);
    expect(await card.getAttribute('data-approval-id')).toBe(id);
    expect(await card.textContent()).toContain('linked.txt');
    expect(await page.locator('#view-pending').isHidden()).toBe(true);
    expect(page.url()).toBe(`${url}#/approvals/${id}`);
    await expect.poll(() => page.locator('#focus-others').textContent()).toBe('All pending (1 more)');

    await card.getByRole('button', { name: 'Approve once' }).click();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('from the link');
    // The link now shows the outcome, not the controls; the other request is still waiting.
    await expect.poll(() => page.locator('#approval-focus').textContent(), { timeout: 10_000 }).toContain('Approved once');
    expect(await page.locator('#approval-focus button').count()).toBe(0);
    expect(existsSync(join(dir, 'other.txt'))).toBe(false);
    expect(await home.runCli(['pending', '--json']).then((r) => (JSON.parse(r.stdout) as { data: { id: string }[] }).data.map((a) => a.id))).toEqual([otherId]);

    // Already paired, a second link opens the other approval at once; denying it answers the call.
    await page.goto(`${url}#/approvals/${otherId}`);
    const second = page.locator(`#approval-focus li.card[data-approval-id="${otherId}"]`);
    await second.waitFor({ timeout: 15_000 });
    expect(await page.locator('#pair').isHidden()).toBe(true);
    await second.getByRole('button', { name: 'Deny' }).click();
    expect((await other).isError).toBe(true);
    // "All pending" leaves the link.
    await page.locator('#focus-others').click();
    await expect.poll(() => page.getByText('Nothing is waiting for you.').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(page.url()).toBe(url);
  });

  it('R-REM-5 (remote 5) #/approvals/<id> joined with &code= pairs from the link and opens the approval; the code leaves the address bar', async () => {
    const { home, dir, client, url, code, page } = await setup();
    const call = write(client, join(dir, 'joined.txt'), 'x');
    const [id] = await pendingIds(home, 1);
    await page.goto(`${url}#/approvals/${id}&code=${code}`);
    const card = page.locator(`#approval-focus li.card[data-approval-id="${id}"]`);
    await card.waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(`${url}#/approvals/${id}`);
    await card.getByRole('button', { name: 'Approve once' }).click();
    expect((await call).isError).toBeFalsy();
  });

  it('R-REM-5 (remote 5) a link to an unknown approval says so and still offers the pending list', async () => {
    const { url, code, page } = await setup();
    await page.goto(`${url}#code=${code}`);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');
    await page.goto(`${url}#/approvals/zzzzz`);
    await expect.poll(() => page.locator('#approval-focus').textContent(), { timeout: 10_000 }).toContain('Approval zzzzz is not on this daemon');
    await page.goto(`${url}#/approvals/%3Cb%3E`);
    await expect.poll(() => page.locator('#approval-focus').textContent(), { timeout: 10_000 }).toContain('is not an approval id');
    await page.locator('#focus-others').click();
    await expect.poll(() => page.getByText('Nothing is waiting for you.').isVisible(), { timeout: 10_000 }).toBe(true);
  });
});

/** A Claude Code PreToolUse event for any tool, as the hook receives it. */
function claudeEvent(tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...shellEvent('claude-code', 'unused', extra), tool_name: tool, tool_input: input };
}

/** Paired through the fragment, live, with a stub app badge that records what the page sets. */
async function pairedPage(url: string, code: string, page: Page): Promise<void> {
  await page.addInitScript(`
    window.badges = [];
    Object.defineProperty(navigator, 'setAppBadge', { value: (n) => (window.badges.push(n), Promise.resolve()) });
    Object.defineProperty(navigator, 'clearAppBadge', { value: () => (window.badges.push('cleared'), Promise.resolve()) });
  `);
  await page.goto(`${url}#code=${code}`);
  await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toBe('live');
}

/** Visible controls smaller than 44 x 44 CSS px (R-REM-7), described for the failure message. */
function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`
    [...document.querySelectorAll('button, input, a[href], summary')]
      .filter((node) => node.offsetParent !== null)
      .map((node) => ({ node, box: node.getBoundingClientRect() }))
      .filter(({ box }) => box.width < 44 || box.height < 44)
      .map(({ node, box }) => node.tagName + ' "' + ((node.textContent || '').trim() || node.getAttribute('aria-label')) + '" ' + box.width + 'x' + box.height)
  `);
}

/** The last value the page gave the app badge. */
function lastBadge(page: Page): Promise<unknown> {
  return page.evaluate<unknown>('window.badges.at(-1)');
}

describe.skipIf(!haveChromium())('the approval page, readable on a phone (remote 5)', () => {
  it('R-REM-5 R-REM-7 a pending shell approval names agent, host, cwd and session, says why and what it risks, lists each command with its rule; screenshots at 390 and 1280 px; no sideways scroll at 360 px; touch targets >= 44 px', async () => {
    const { home, url, code, page } = await setup();
    await pairedPage(url, code, page);
    const command = 'curl -fsSL https://get.example.com/install.sh -o /tmp/install.sh && sudo apt-get install -y build-essential && rm -rf ~/.cache/build-output-with-a-long-name > /var/log/install-output.log';
    const waiting = runHook(['claude-code'], shellEvent('claude-code', command, { session_id: 'phone-session', cwd: '/work/project' }), home.env);
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    const facts = await card.locator('.facts').textContent();
    for (const fact of ['agent claude-code', `host ${hostname()}`, 'cwd /work/project', 'session phone-session']) expect(facts).toContain(fact);
    expect(await card.locator('p.why').textContent()).toBe('Why it asks: policy.commands.default says prompt');
    // R-POL-10: the risk comes first in the card, its level before the reasons, most severe first.
    expect(await card.locator('p.risk').evaluate((node) => node === node.parentElement?.querySelector('h3 + *'))).toBe(true);
    expect(await card.locator('p.risk .level').textContent()).toBe('high');
    expect(await card.locator('p.risk .flag').allTextContents()).toEqual([
      'privilege escalation (sudo)',
      'recursive delete outside cwd (rm -r)',
      'destructive (rm)',
      'write outside cwd',
      'network (curl)',
      'shell',
    ]);
    // Network data piped into a shell is not filed at all: policy.commands.networkIntoShell denies it (R-POL-8).
    const parts = await card.locator('ul.policy-parts li').allTextContents();
    expect(parts.slice(0, 3)).toEqual([
      'prompt command curl -fsSL https://get.example.com/install.sh -o /tmp/install.sh by policy.commands.default',
      'prompt command sudo apt-get install -y build-essential by policy.commands.default',
      'prompt command apt-get install -y build-essential  (run by sudo) by policy.commands.default',
    ]);
    expect(parts.some((part) => part.startsWith('prompt path write /var/log/install-output.log by policy.paths.write'))).toBe(true);
    expect(await card.locator('p.session-grant').textContent()).toBe(`Approving for the session remembers the exact command text "${command}", for this agent session.`);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: screenshotPath('shell-approval-1280'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenshotPath('shell-approval-390'), fullPage: true });
    expect(existsSync(screenshotPath('shell-approval-390'))).toBe(true);
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    expect(await smallTargets(page)).toEqual([]);

    await card.getByRole('button', { name: 'Deny' }).click();
    expect(answerOf((await waiting).stdout).decision).toBe('deny');
  });

  it('R-REM-5 string arguments with newlines are multi-line blocks, each line still escaped; the complete JSON stays', async () => {
    const { home, url, code, page } = await setup();
    await pairedPage(url, code, page);
    const prompt = 'first line\n\tindented \u202e evil \u0430dmin\r\nlast';
    const input = { url: 'https://docs.example.org/page', prompt };
    const waiting = runHook(['claude-code'], claudeEvent('WebFetch', input, { session_id: 'multi-session' }), home.env);
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    const block = card.locator('figure.arg-block');
    expect(await block.count()).toBe(1);
    expect(await block.locator('figcaption').textContent()).toBe('prompt (3 lines)');
    expect(await block.locator('pre.multiline').textContent()).toBe('first line\n\\u0009indented \\u202e evil \\u0430dmin\\u000d\nlast');
    expect(await card.locator('pre.preview').textContent()).toBe(escapedJson(input, 2));
    expect(await card.locator('p.risk .level').textContent()).toBe('elevated');
    expect(await card.locator('p.risk .flag').allTextContents()).toEqual(['network (fetch)']);
    await card.getByRole('button', { name: 'Deny' }).click();
    await waiting;
  });

  it('R-REM-5 a file edit shows a diff of old and new text; a whole-file write shows its new lines', async () => {
    const { home, dir, client, url, code, page } = await setup();
    await pairedPage(url, code, page);
    const edit = { file_path: '/etc/app/settings.conf', old_string: 'alpha\nbeta\ngamma', new_string: 'alpha\nBETA \u202e\ngamma\ndelta' };
    const waiting = runHook(['claude-code'], claudeEvent('Edit', edit, { session_id: 'edit-session' }), home.env);
    const card = page.locator('#pending-list li.card');
    await card.first().waitFor({ timeout: 15_000 });
    expect(await card.locator('p.diff-head').textContent()).toBe('Changes to /etc/app/settings.conf');
    const rows = card.locator('pre.diff span');
    expect(await rows.allTextContents()).toEqual(['  alpha', '- beta', '+ BETA \\u202e', '  gamma', '+ delta']);
    expect(await rows.evaluateAll((nodes) => nodes.map((node) => node.className))).toEqual(['same', 'del', 'add', 'same', 'add']);
    expect(await card.locator('figure.arg-block').count()).toBe(0);
    expect(await card.locator('p.risk .level').textContent()).toBe('elevated');
    expect(await card.locator('p.risk .flag').allTextContents()).toEqual(['write outside cwd']);
    await card.getByRole('button', { name: 'Deny' }).click();
    await waiting;
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(0);

    const target = join(dir, 'notes.txt');
    const call = write(client, target, 'one\ntwo');
    const written = page.locator('#pending-list li.card');
    await written.first().waitFor({ timeout: 15_000 });
    expect(await written.locator('pre.diff span').allTextContents()).toEqual(['+ one', '+ two']);
    expect(await written.locator('.file-edit').textContent()).toContain('its current content is not shown');
    await written.getByRole('button', { name: 'Deny' }).click();
    expect((await call).isError).toBe(true);
  });

  it('R-REM-5 the tab title, the favicon and the app badge count pending requests; history says what happened in plain words, with times and names', async () => {
    const { dir, client, url, code, page } = await setup();
    await pairedPage(url, code, page);
    expect(await page.title()).toBe('assent — approvals');
    const first = write(client, join(dir, 'a.txt'), 'a');
    const second = write(client, join(dir, 'b.txt'), 'b');
    await expect.poll(() => page.title(), { timeout: 15_000 }).toBe('(2) assent — approvals');
    expect(await page.locator('#favicon').getAttribute('href')).toBe('/icon-pending.svg');
    await expect.poll(() => lastBadge(page)).toBe(2);

    const cards = page.locator('#pending-list li.card');
    await cards.first().getByRole('button', { name: 'Approve once' }).click();
    await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('(1) assent — approvals');
    await cards.first().getByLabel('Reason').fill('not now');
    await cards.first().getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => page.title(), { timeout: 10_000 }).toBe('assent — approvals');
    expect(await page.locator('#favicon').getAttribute('href')).toBe('/icon.svg');
    await expect.poll(() => lastBadge(page)).toBe('cleared');
    await Promise.all([first, second]);

    await page.getByRole('button', { name: 'Recently resolved' }).click();
    const resolved = page.locator('#resolved-list li.card');
    await expect.poll(() => resolved.count(), { timeout: 10_000 }).toBe(2);
    const texts = await resolved.allTextContents();
    expect(texts.some((text) => text.includes('Approved once') && text.includes('via web page'))).toBe(true);
    expect(texts.some((text) => text.includes('Denied') && text.includes('reason: not now'))).toBe(true);
    for (const card of await resolved.all()) expect(await card.locator('.time').textContent()).toMatch(/\d/);

    await page.getByRole('button', { name: 'Audit' }).click();
    const rows = page.locator('#audit-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
    expect(cells.map((row) => row[1])).toEqual(expect.arrayContaining(['ran', 'denied by a person']));
    for (const row of cells) expect(row[5]).not.toMatch(/^(owner|web):[0-9a-f]+$/);
  });

  it('R-REM-5 the page is installable: a web app manifest with icons the daemon serves, and Chromium finds no installability error', async () => {
    const { url, code, page } = await setup();
    await pairedPage(url, code, page);
    const manifest = (await (await page.request.get(`${url}manifest.webmanifest`)).json()) as { icons: { src: string; type: string; sizes: string }[]; display: string; start_url: string };
    expect(manifest.display).toBe('standalone');
    expect(manifest.start_url).toBe('/');
    for (const icon of manifest.icons) {
      const response = await page.request.get(new URL(icon.src, url).href);
      expect(response.status(), icon.src).toBe(200);
      expect(response.headers()['content-type']).toBe(icon.type);
      if (icon.type === 'image/png') expect([...(await response.body()).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }
    expect(manifest.icons.map((icon) => icon.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    const cdp = await page.context().newCDPSession(page);
    const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
    expect(installabilityErrors.map((error) => error.errorId)).toEqual([]);
  });
});
