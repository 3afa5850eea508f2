// Issue 35: a kill -9 of the daemon around a hook call, with the real daemon on
// its real socket and the built hook.
// - Right after an allow: the agent runs the call the moment the hook answers,
//   and the call's only record is its `started` audit line (agent actions are
//   not journaled). strace holds every write to the audit file for 400 ms on
//   its way into the kernel, so an answer that went out before its line reached
//   the file would lose it to the kill -9 every time, not once in a thousand.
// - While a hook waits for a person: its hook answers deny when the connection
//   drops, and no hook ever re-attaches, so the next daemon must not keep that
//   approval pending for someone to "approve" into nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { auditLines, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';

const cleanups = cleanupsAfterEach();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;

async function setup(config: Record<string, unknown> = {}): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

function daemonPid(home: TempHome): number {
  return Number(readFileSync(home.paths.pid, 'utf8').trim());
}

async function killHard(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 250; i += 1) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
  throw new Error(`daemon ${pid} outlived SIGKILL`);
}

/** Attaches strace to `pid`, delaying every write to `file` by `delayUs` on entry (before the kernel has the bytes). */
async function delayWritesTo(pid: number, file: string, delayUs: number): Promise<ChildProcess> {
  const calls = 'write,writev,pwrite64,pwritev,pwritev2';
  const tracer = spawn('strace', ['-f', '-p', String(pid), '-P', file, '-e', `trace=${calls}`, '-e', `inject=${calls}:delay_enter=${delayUs}`, '-o', '/dev/null'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanups.push(() => {
    if (tracer.exitCode === null) tracer.kill('SIGKILL');
  });
  let stderr = '';
  tracer.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  for (let i = 0; i < 250 && !/attached/.test(stderr); i += 1) {
    if (tracer.exitCode !== null) throw new Error(`strace could not attach to the daemon: ${stderr}`);
    await sleep(20);
  }
  if (!/attached/.test(stderr)) throw new Error(`strace did not say it attached: ${stderr}`);
  return tracer;
}

describe('issue 35 kill -9 around a hook call', () => {
  it.skipIf(!hasStrace)(
    'right after an allow: the call the agent then runs has its started line on disk, with every audit write held 400 ms by strace',
    async () => {
      const home = await setup();
      let pid = daemonPid(home);
      // The day file exists once the first line is on disk.
      expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'ls'), home.env)).stdout).decision).toBe('allow');
      await expect.poll(() => auditLines(home).length).toBe(1);
      for (let round = 0; round < 3; round += 1) {
        const [file] = readdirSync(home.paths.auditDir).filter((name) => name.endsWith('.jsonl'));
        const tracer = await delayWritesTo(pid, join(home.paths.auditDir, file ?? ''), 400_000);
        const before = auditLines(home).filter((line) => line['outcome'] === 'started').length;
        const result = await runHook(['claude-code'], shellEvent('claude-code', `ls round-${round}`, { tool_use_id: `toolu_round_${round}` }), home.env);
        // The agent would run it now; the daemon dies at this instant.
        expect(answerOf(result.stdout).decision, result.stdout).toBe('allow');
        await killHard(pid);
        tracer.kill('SIGKILL');
        const started = auditLines(home).filter((line) => line['outcome'] === 'started');
        expect(started).toHaveLength(before + 1);
        expect(started.at(-1)).toMatchObject({ agent: 'claude-code', tool: 'Bash' });
        await home.startDaemon();
        pid = daemonPid(home);
        const verify = await home.runCli(['audit', 'verify']);
        expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      }
    },
    60_000,
  );

  it('while a hook waits for a person: the hook denies, the next daemon lists no approval for it and refuses to approve it, and the refusal is audited', async () => {
    const home = await setup();
    const pid = daemonPid(home);
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'make release'), home.env);
    let approvalId: string | undefined;
    for (let i = 0; i < 300 && approvalId === undefined; i += 1) {
      const listed = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] };
      approvalId = listed.data[0]?.id;
      if (approvalId === undefined) await sleep(25);
    }
    expect(approvalId).toBeDefined();
    await killHard(pid);
    const answer = await waiting;
    expect(answerOf(answer.stdout).decision).toBe('deny');

    await home.startDaemon();
    const pending = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] };
    expect(pending.data).toEqual([]);
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    await expect(client.call('approvals.decide', { id: approvalId, behavior: 'allow' })).rejects.toMatchObject({ message: expect.stringMatching(/denied/) });
    const shown = (await client.call('approvals.get', { id: approvalId })) as { state: string; reason?: string };
    expect(shown).toMatchObject({ state: 'denied', reason: 'shutdown' });
    const log = readFileSync(home.paths.log, 'utf8');
    expect(log).toMatch(/approvals an agent hook waited on when the previous daemon ended are denied/);
    // The hook's own refusal came from its spool: one line for the call, unavailable, and the chain holds.
    await expect.poll(() => auditLines(home).filter((line) => line['agent'] === 'claude-code').map((line) => line['deniedReason'] ?? line['outcome'])).toEqual(['unavailable']);
    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 60_000);
});
