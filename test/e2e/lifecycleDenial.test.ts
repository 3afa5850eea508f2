// A call that ends because of a lifecycle event, not a person (hardening 1,
// R-MCP-3, R-D-6): the agent is told nobody declined it and that retrying is
// fine, instead of "the operator declined this exact call".
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TempHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

async function waitForPending(home: TempHome): Promise<void> {
  await expect
    .poll(async () => (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data.length, { timeout: 10_000 })
    .toBe(1);
}

describe('R-MCP-3 R-D-6 (hardening 1) lifecycle endings are not refusals by the operator', () => {
  it('`assent daemon stop` while a call waits: the result names shutdown, says nobody declined and that a retry is fine', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } });
    const { client } = await connectGateway(cleanups, home);
    const target = join(dir, 'never.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } }, undefined, { timeout: 60_000 });
    await waitForPending(home);
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    const said = text(result);
    expect(said).toContain('shutdown');
    expect(said).toContain('nobody declined');
    expect(said).toMatch(/retry/i);
    expect(said).not.toContain('declined this exact call');
    expect(existsSync(target)).toBe(false);
  });

  it('the daemon is lost (kill -9, no restart) while a call waits: the result names unavailable, not a refusal', async () => {
    // The waiting call looks for a new daemon until its approval's deadline (R-D-7); a short one keeps the test short.
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, consentTimeoutSeconds: 4 } });
    const { client } = await connectGateway(cleanups, home);
    const target = join(dir, 'never.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } }, undefined, { timeout: 60_000 });
    await waitForPending(home);
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { pid: number } };
    process.kill(status.data.pid, 'SIGKILL');
    const result = await call;
    expect(result.isError).toBe(true);
    const said = text(result);
    expect(said).toContain('unavailable');
    expect(said).toContain('nobody declined');
    expect(said).not.toMatch(/declined this exact call|no_consent_channel/);
    expect(existsSync(target)).toBe(false);
  }, 40_000);
});
