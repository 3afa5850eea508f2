// A gateway outlives its daemon (hardening 1, R-D-5, R-D-7, R-CFG-4, R-AUD-1):
// the built `assent mcp` in front of the real server-filesystem keeps running
// across `assent daemon stop` and kill -9. It notices the lost connection,
// restarts the daemon through auto-spawn like any client, takes the new
// daemon's policy and rules, audits what it settled (including the batch
// pending at the moment of loss) and gets `prompt` decisions from the new
// daemon. In the gap it refuses every call; it never decides from the old snapshot.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/base/canonical.js';
import { daemonsForHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { startFsStack, type Cleanups } from '../helpers/fsStack.js';
import { runInTerminal } from '../helpers/pty.js';
import { assentBin } from './mcpFixtures.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `assent mcp` for this home; unlike the shared helper, auto-spawn stays on unless `env` turns it off. */
async function gateway(home: TempHome, env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [assentBin, 'mcp'],
    env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => stderr };
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

function daemonPid(home: TempHome): number {
  return Number(readFileSync(home.paths.pid, 'utf8').trim());
}

/** Pending approvals as the operator sees them, polled until one shows (or the deadline passes). */
async function pendingWithin(home: TempHome, ms: number): Promise<{ id: string; tool: string }[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await home.runCli(['pending', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    const list = r.code === 0 ? (JSON.parse(r.stdout) as { data: { id: string; tool: string }[] }).data : [];
    if (list.length > 0 || Date.now() > deadline) return list;
    await sleep(100);
  }
}

/** Waits until a daemon answers that this test did not start: the gateway's reconnect spawned it. */
async function waitForRespawnedDaemon(home: TempHome, oldPid: number): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await home.runCli(['daemon', 'status', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    if (r.code === 0) {
      const pid = (JSON.parse(r.stdout) as { data: { pid: number } }).data.pid;
      if (pid !== oldPid) return pid;
    }
    if (Date.now() > deadline) throw new Error(`no daemon came back: ${r.stdout}${r.stderr}`);
    await sleep(100);
  }
}

const POLICY = { default: 'allow', tools: { 'fs/write_file': 'prompt' }, consentTimeoutSeconds: 60 };

interface Stack {
  home: TempHome;
  dir: string;
  client: Client;
  ruleId: string;
}

/** The fs stack, a rule that lets writes under ok/ through, and a gateway that already used the rule. */
async function stackWithRule(gatewayEnv: Record<string, string> = {}): Promise<Stack> {
  const { home, dir } = await startFsStack(cleanups, { policy: POLICY });
  mkdirSync(join(dir, 'ok'));
  const added = await runInTerminal(['rules', 'add', '--tool', 'fs/write_file', '--arg', `/path:prefix=${dir}/ok/`, '--json'], {
    env: { ASSENT_HOME: home.home },
    typeCode: true,
  });
  expect(added.exitCode, added.screen).toBe(0);
  const ruleId = (JSON.parse(added.stdout) as { data: { id: string } }).data.id;
  const { client } = await gateway(home, gatewayEnv);
  const byRule = await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'ok', 'before.txt'), content: 'by rule' } });
  expect(byRule.isError, text(byRule)).toBeFalsy();
  return { home, dir, client, ruleId };
}

/**
 * After a restart the gateway must follow the new daemon: a revoked rule and a
 * tool reloaded to `deny` are enforced, its calls are audited, `prompt` waits
 * for the new daemon's decision.
 */
async function expectFollowsNewDaemon({ home, dir, client, ruleId }: Stack, restartedAt: number): Promise<void> {
  // The rule is revoked on the new daemon: the next write under ok/ needs a human again.
  expect((await home.runCli(['rules', 'revoke', ruleId])).code).toBe(0);
  // read_text_file is reloaded to deny (R-CFG-4: confirmed at the terminal).
  writeFileSync(join(dir, 'a.txt'), 'content');
  writeFileSync(home.paths.config, JSON.stringify({ ...JSON.parse(readFileSync(home.paths.config, 'utf8')), policy: { ...POLICY, tools: { ...POLICY.tools, 'fs/read_text_file': 'deny' } } }));
  const reload = await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: home.home }, typeCode: true });
  expect(reload.exitCode, reload.screen).toBe(0);

  await expect
    .poll(async () => text(await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'a.txt') } })), { timeout: 15_000, interval: 200 })
    .toContain('policy.tools.fs/read_text_file');

  const target = join(dir, 'ok', 'after-revoke.txt');
  const write = client.callTool({ name: 'write_file', arguments: { path: target, content: 'needs a human now' } }, undefined, { timeout: 60_000 });
  const [waiting] = await pendingWithin(home, 15_000);
  expect(waiting?.tool, 'the revoked rule still let the write through without a prompt').toBe('write_file');
  expect(existsSync(target)).toBe(false);
  expect((await runInTerminal(['approve', waiting!.id], { env: { ASSENT_HOME: home.home }, typeCode: true })).exitCode).toBe(0);
  const written = await write;
  expect(written.isError, text(written)).toBeFalsy();
  expect(readFileSync(target, 'utf8')).toBe('needs a human now');

  const listed = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
  expect(listed.isError, text(listed)).toBeFalsy();
  const after = (): Record<string, unknown>[] => auditLines(home).filter((l) => Date.parse(String(l['ts'])) >= restartedAt);
  await expect.poll(() => after().map((l) => `${String(l['tool'])}:${String(l['outcome'])}`), { timeout: 10_000 }).toEqual(
    expect.arrayContaining(['read_text_file:denied', 'list_directory:ok']),
  );
  await expect.poll(() => after().find((l) => l['approvalId'] === waiting!.id && l['outcome'] === 'ok'), { timeout: 10_000 }).toMatchObject({ channel: 'cli', tool: 'write_file' });
}

describe('R-D-5 a gateway follows the daemon across restarts (hardening 1)', () => {
  it('across `assent daemon stop`: the gateway auto-starts a new daemon and obeys its revoked rule, its reloaded deny, its audit and its prompts', async () => {
    const stack = await stackWithRule();
    const oldPid = daemonPid(stack.home);
    const stopped = await stack.home.runCli(['daemon', 'stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    const restartedAt = Date.now();
    await waitForRespawnedDaemon(stack.home, oldPid);
    await expectFollowsNewDaemon(stack, restartedAt);
  });

  it('across kill -9: the audit batch pending when the daemon died reaches the new daemon, and the gateway obeys the new daemon', async () => {
    const stack = await stackWithRule();
    const { home, dir, client } = stack;
    const oldPid = daemonPid(home);
    // Frozen, the daemon reads nothing: the batch for these calls is sent but never taken.
    process.kill(oldPid, 'SIGSTOP');
    const marked = [1, 2, 3].map((n) => join(dir, `batch-${n}.txt`));
    for (const path of marked) writeFileSync(path, 'x');
    for (const path of marked) {
      const info = await client.callTool({ name: 'get_file_info', arguments: { path } });
      expect(info.isError, text(info)).toBeFalsy();
    }
    await sleep(300);
    process.kill(oldPid, 'SIGKILL');
    const restartedAt = Date.now();
    await waitForRespawnedDaemon(home, oldPid);
    const digests = marked.map((path) => digestOf({ path }));
    await expect
      .poll(() => auditLines(home).filter((l) => l['tool'] === 'get_file_info' && digests.includes(String(l['argsSha256']))).length, { timeout: 15_000 })
      .toBe(3);
    await expectFollowsNewDaemon(stack, restartedAt);
  });

  it('in the gap, with auto-spawn off, every call is refused as unavailable naming the reconnect; the old snapshot never allows; then it reconnects', async () => {
    const { home, dir, client } = await stackWithRule({ ASSENT_NO_AUTOSPAWN: '1' });
    const oldPid = daemonPid(home);
    process.kill(oldPid, 'SIGKILL');
    await sleep(300);
    // The old snapshot's rule would allow this write; without a daemon nothing may decide it.
    const target = join(dir, 'ok', 'in-the-gap.txt');
    const refused = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'must not run' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('unavailable');
    expect(text(refused)).toMatch(/reconnecting/);
    expect(text(refused)).toContain('ASSENT_NO_AUTOSPAWN');
    const read = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(read.isError).toBe(true);
    expect(text(read)).toContain('unavailable');
    expect(existsSync(target)).toBe(false);
    expect(daemonsForHome(home.home)).toEqual([]);

    await home.startDaemon();
    await expect
      .poll(async () => (await client.callTool({ name: 'list_directory', arguments: { path: dir } })).isError === true, { timeout: 20_000, interval: 200 })
      .toBe(false);
    const again = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'by rule again' } });
    expect(again.isError, text(again)).toBeFalsy();
  });
});
