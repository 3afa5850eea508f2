// The approval page reached from a push (R-REM-5, issue 13 item 5): a deep link
// `#/approvals/<id>` opens that approval, through pairing when needed, and the
// person decides it there. Debian's Chromium driven by playwright-core.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { haveChromium, launchBrowser } from '../../helpers/browser.js';
import type { TempHome } from '../../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../../helpers/fsStack.js';
import { runCliInTerminal } from '../../helpers/pty.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // Keep cleaning the rest.
    }
  }
});

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
    await expect.poll(() => page.locator('#approval-focus').textContent(), { timeout: 10_000 }).toContain('approved');
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
