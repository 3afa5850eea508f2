// Issue 35 item 4 with the real daemon on a real socket: the machine runs out of
// something. Descriptors: a daemon started under `ulimit -n 64` cannot load
// its code and says so; a running one whose limit drops to 64 (prlimit) while
// clients hold its descriptors refuses new connections with the cause and the
// fix, logs it once, and serves again once they close; one whose limit drops
// below what it holds has new connections dropped unread by libuv, so the hook
// names EMFILE as a cause and the daemon's own count logs it once. Memory: under a cgroup
// cap the kernel kills the daemon (that is the honest behaviour of a hard cap);
// it warns before, calls are refused while it is gone, and a restart continues
// the chain. Under `ulimit -v` WebAssembly cannot reserve its memory, so shell
// calls are refused naming that limit. Each asserts that the call did not run
// (its marker file never appears), that `assent audit verify` passes afterwards,
// and that the message names the cause and the fix. Last, 200 agent sessions
// connect and disconnect and the daemon's descriptors and listeners stay flat.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { VERSION } from '../../../src/version.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { CLI_ENTRY, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';

const cleanups = cleanupsAfterEach();
const MARKER_UPSTREAM = join(import.meta.dirname, '..', 'fixtures', 'markerUpstream.mjs');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const hasPrlimit = ['/usr/bin/prlimit', '/bin/prlimit'].some((path) => existsSync(path));
const hasSs = ['/usr/bin/ss', '/bin/ss', '/usr/sbin/ss', '/sbin/ss'].some((path) => existsSync(path));

/**
 * Where this process may make a memory cgroup of its own: a child of its own
 * cgroup v1 memory controller (we stay under whatever limits that one has).
 * Undefined without cgroup v1's memory controller or the right to write it.
 */
function memoryCgroupParent(): string | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((entry) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:/.test(entry));
    if (line === undefined) return undefined;
    const parent = join('/sys/fs/cgroup/memory', line.slice(line.lastIndexOf(':') + 1));
    const probe = join(parent, `assent-probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return parent;
  } catch {
    return undefined;
  }
}
const CGROUP_PARENT = memoryCgroupParent();
if (CGROUP_PARENT === undefined) process.stderr.write('skipping the memory cgroup test: no writable cgroup v1 memory controller here\n');

/** A fresh home with a confirmed-on-first-start config: the marker server's tool prompts, shell `touch` is allowed by the built-in rules. */
function homeWithConfig(): TempHome {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(
    home.paths.config,
    JSON.stringify({
      notifications: false,
      web: { listen: '127.0.0.1:0' },
      servers: { marker: { command: process.execPath, args: [MARKER_UPSTREAM] } },
      policy: { default: 'prompt', consentTimeoutSeconds: 30 },
    }),
    { mode: 0o600 },
  );
  return home;
}

/** `assent daemon run` behind a shell line (a ulimit, joining a cgroup); resolves once it listens or has exited. */
async function daemonBehind(home: TempHome, shell: string): Promise<{ child: ChildProcess; stderr: () => string }> {
  const child = spawn('bash', ['-c', `${shell}; exec "$0" "$1" daemon run`, process.execPath, CLI_ENTRY], { env: home.env, stdio: ['ignore', 'ignore', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const deadline = Date.now() + 15_000;
  while (!stderr.includes('listening on') && child.exitCode === null && child.signalCode === null && Date.now() < deadline) await sleep(20);
  if (child.exitCode === null && child.signalCode === null) await sleep(0);
  return { child, stderr: () => stderr };
}

/** What an agent does with a hook answer: runs the command only when it is allowed. */
async function agentRuns(home: TempHome, command: string, cwd: string): Promise<{ decision: string; reason: string }> {
  const result = await runHook(['claude-code'], shellEvent('claude-code', command, { cwd }), { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
  const answer = answerOf(result.stdout);
  if (answer.decision === 'allow' && result.code === 0) execFileSync('bash', ['-c', command], { cwd });
  return { decision: answer.decision, reason: answer.reason };
}

async function auditVerifies(home: TempHome): Promise<number | null> {
  return (await home.runCli(['audit', 'verify'], { env: { ASSENT_NO_AUTOSPAWN: '1' } })).code;
}

/** The built `assent mcp` for this home in front of the marker server, auto-spawn off. */
async function gateway(home: TempHome): Promise<{ client: Client; stderr: () => string }> {
  const client = new Client({ name: 'resource-limits', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ENTRY, 'mcp'],
    env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => stderr };
}

function resultText(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? []).map((part) => part.text ?? '').join('\n');
}

/** Approves the first approval that waits, as a person would from the CLI's channel. */
async function approveFirst(home: TempHome): Promise<void> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  try {
    for (let i = 0; i < 200; i += 1) {
      const [first] = await client.call<{ id: string }[]>('approvals.list', {});
      if (first !== undefined) {
        await client.call('approvals.decide', { id: first.id, behavior: 'allow' });
        return;
      }
      await sleep(50);
    }
    throw new Error('no approval was filed');
  } finally {
    client.close();
  }
}

const logLines = (home: TempHome): string[] => (existsSync(home.paths.log) ? readFileSync(home.paths.log, 'utf8').split('\n').filter(Boolean) : []);
const openDescriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

/** The daemon's listening sockets: Unix and TCP, as `ss` lists them with their process. */
function listeners(pid: number): string[] {
  return ['-xlpn', '-tlpn'].flatMap((flags) =>
    execFileSync('ss', [flags], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`pid=${pid},`))
      .map((line) => line.split(/\s+/).slice(0, 5).join(' ')),
  );
}

/** A raw client that sends daemon.hello and one request in its first write, as the hook does, and reads until `id` 2 is answered or the socket closes. */
function oneShot(socketPath: string, method: string, params: unknown, closeAfterMs?: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = createConnection({ path: socketPath });
    let buffered = '';
    const done = (): void => {
      socket.destroy();
      resolve();
    };
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      if (buffered.includes('"id":2')) done();
    });
    socket.on('connect', () => {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'daemon.hello', params: { version: VERSION } })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method, params })}\n`);
      if (closeAfterMs !== undefined) setTimeout(done, closeAfterMs);
    });
  });
}

/** Runs `tasks` with at most `width` at once. */
async function inParallel(tasks: (() => Promise<unknown>)[], width: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let task = queue.shift(); task !== undefined; task = queue.shift()) await task();
  }));
}

describe('out of file descriptors', () => {
  it('a daemon started under ulimit -n 64 cannot load its code: it exits naming EMFILE and the fix, the hook is refused, and the chain of the run before verifies', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const first = await home.startDaemon();
    expect((await agentRuns(home, `touch ${join(work, 'before')}`, work)).decision).toBe('allow');
    first.kill('SIGTERM');
    await new Promise((resolve) => first.once('exit', resolve));

    const { child, stderr } = await daemonBehind(home, 'ulimit -n 64');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
    expect(child.exitCode).not.toBe(0);
    expect(stderr()).toMatch(/EMFILE/);
    expect(stderr()).toMatch(/ulimit -n 4096/);
    expect(stderr()).toMatch(/LimitNOFILE=/);

    const marker = join(work, 'under-64');
    const answer = await agentRuns(home, `touch ${marker}`, work);
    expect(answer.decision).toBe('deny');
    expect(answer.reason).toMatch(/no assent daemon answers/);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(work, 'before'))).toBe(true);
    expect(await auditVerifies(home)).toBe(0);
  }, 30_000);

  it.skipIf(!hasPrlimit)('at the limit (prlimit 64 while clients hold descriptors): hook and new gateway calls are refused naming EMFILE and the fix, logged once, and served again once the clients go', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const daemon = await home.startDaemon();
    const pid = daemon.pid as number;
    execFileSync('prlimit', ['--pid', String(pid), '--nofile=64:64']);
    // A running daemon reads its limit again within a second.
    await sleep(1100);

    // Agent sessions that stay connected, until the daemon refuses one for want of descriptors.
    const held: DaemonClient[] = [];
    cleanups.push(() => held.forEach((client) => client.close()));
    let refusal: { type?: string; message?: string; details?: Record<string, unknown> } | undefined;
    for (let i = 0; i < 64 && refusal === undefined; i += 1) {
      try {
        held.push(await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false }));
      } catch (error) {
        refusal = error as typeof refusal;
      }
    }
    expect(refusal).toMatchObject({ type: 'unavailable', details: { reason: 'descriptors', limit: 64 } });

    const hookMarker = join(work, 'hook-under-pressure');
    const refused = await agentRuns(home, `touch ${hookMarker}`, work);
    expect(refused.decision).toBe('deny');
    expect(refused.reason).toMatch(/limit of open files: \d+ of 64 are open/);
    expect(refused.reason).toMatch(/EMFILE/);
    expect(refused.reason).toMatch(/ulimit -n 4096.*LimitNOFILE=4096/);
    expect(existsSync(hookMarker)).toBe(false);

    // A gateway that starts now cannot attach: its prompt call is refused, saying why.
    const gw = await gateway(home);
    const gatewayMarker = join(work, 'gateway-under-pressure');
    const refusedCall = await gw.client.callTool({ name: 'touch', arguments: { path: gatewayMarker } });
    expect(refusedCall.isError).toBe(true);
    expect(resultText(refusedCall)).toMatch(/limit of open files/);
    expect(resultText(refusedCall)).toMatch(/EMFILE/);
    expect(resultText(refusedCall)).toMatch(/ulimit -n 4096/);
    expect(existsSync(gatewayMarker)).toBe(false);

    expect(daemon.exitCode).toBeNull();
    expect(logLines(home).filter((line) => line.includes('out of file descriptors'))).toHaveLength(1);
    expect(logLines(home).find((line) => line.includes('out of file descriptors'))).toMatch(/LimitNOFILE=4096/);

    // The pressure ends: the same calls are served again, without a restart.
    for (const client of held.splice(0)) client.close();
    await sleep(300);
    const hookAgain = join(work, 'hook-after');
    expect((await agentRuns(home, `touch ${hookAgain}`, work)).decision).toBe('allow');
    expect(existsSync(hookAgain)).toBe(true);
    const gatewayAgain = join(work, 'gateway-after');
    const served = gw.client.callTool({ name: 'touch', arguments: { path: gatewayAgain } }, undefined, { timeout: 30_000 });
    await approveFirst(home);
    expect((await served).isError).toBeFalsy();
    expect(existsSync(gatewayAgain)).toBe(true);
    expect(gw.stderr()).toMatch(/attached to the assent daemon/);
    expect(logLines(home).filter((line) => line.includes('file descriptors are free again'))).toHaveLength(1);
    expect(logLines(home).filter((line) => line.includes('out of file descriptors'))).toHaveLength(1);
    expect(daemon.exitCode).toBeNull();
    expect(await auditVerifies(home)).toBe(0);
  }, 45_000);

  it.skipIf(!hasPrlimit)('at the limit itself (set below what the daemon holds), libuv drops new connections unread: the hook fails closed naming EMFILE, the daemon logs it once from its own count, and serves again once the limit is raised', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const daemon = await home.startDaemon();
    const pid = daemon.pid as number;
    await sleep(300);
    const hard = /^Max open files\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1] ?? 'unlimited';
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${openDescriptors(pid) - 4}:${hard}`]);
    for (const n of [1, 2, 3]) {
      const marker = join(work, `dropped-${n}`);
      const refused = await agentRuns(home, `touch ${marker}`, work);
      expect(refused.decision).toBe('deny');
      expect(refused.reason).toMatch(/dropped the connection before answering/);
      expect(refused.reason).toMatch(/no file descriptor left \(EMFILE; daemon\.log then says so, with the fix\)/);
      expect(existsSync(marker)).toBe(false);
    }
    const shortage = (): string[] => logLines(home).filter((line) => line.includes('out of file descriptors'));
    for (let i = 0; i < 40 && shortage().length === 0; i += 1) await sleep(100);
    expect(shortage()).toHaveLength(1);
    expect(shortage()[0]).toMatch(/ulimit -n 4096.*LimitNOFILE=4096/);
    expect(daemon.exitCode).toBeNull();

    execFileSync('prlimit', ['--pid', String(pid), `--nofile=4096:${hard}`]);
    const back = (): string[] => logLines(home).filter((line) => line.includes('file descriptors are free again'));
    for (let i = 0; i < 40 && back().length === 0; i += 1) await sleep(100);
    expect(back()).toHaveLength(1);
    const served = join(work, 'served-again');
    expect((await agentRuns(home, `touch ${served}`, work)).decision).toBe('allow');
    expect(existsSync(served)).toBe(true);
    expect(shortage()).toHaveLength(1);
    expect(await auditVerifies(home)).toBe(0);
  }, 30_000);
});

describe('memory', () => {
  it.skipIf(CGROUP_PARENT === undefined)('capped by a cgroup: the daemon warns near the cap, the kernel kills it at the cap, gateway and hook calls are refused while it is gone, and a restart says why and continues the chain', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const cgroup = join(CGROUP_PARENT as string, `assent-test-${process.pid}-${Date.now()}`);
    mkdirSync(cgroup);
    cleanups.push(async () => {
      for (let i = 0; i < 50; i += 1) {
        try {
          rmdirSync(cgroup);
          return;
        } catch {
          await sleep(100);
        }
      }
    });
    writeFileSync(join(cgroup, 'memory.limit_in_bytes'), String(192 * 1024 * 1024));
    expect(existsSync(join(cgroup, 'memory.oom_control'))).toBe(true);
    const { child: daemon, stderr } = await daemonBehind(home, `echo $$ > ${join(cgroup, 'cgroup.procs')}`);
    expect(stderr()).toMatch(/listening on/);
    const killed = new Promise<NodeJS.Signals | null>((resolve) => daemon.once('exit', (_code, signal) => resolve(signal)));

    // A gateway attached before the daemon dies.
    const gw = await gateway(home);

    // Calls that wait for approval, each holding its arguments (about 1 MiB), sent at a pace the daemon's sampling can follow.
    const socket = createConnection({ path: home.paths.socket });
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'daemon.hello', params: { version: VERSION } })}\n`);
    const pad = 'x'.repeat(900 * 1024);
    for (let n = 1; n <= 400 && daemon.exitCode === null && daemon.signalCode === null; n += 1) {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method: 'calls.authorize', params: { sessionId: `flood-${n}`, server: 'marker', tool: 'touch', args: { path: join(work, `flood-${n}`), pad } } })}\n`);
      await sleep(n % 4 === 0 ? 150 : 0);
    }
    expect(await killed).toBe('SIGKILL');
    socket.destroy();
    const warning = logLines(home).find((line) => line.includes('"memory:'));
    expect(warning).toMatch(/of the daemon's 192 MiB limit are in use/);
    expect(warning).toMatch(/memory\.limit_in_bytes/);
    expect(warning).toMatch(/MemoryMax=/);

    const gatewayMarker = join(work, 'gateway-while-gone');
    const lost = await gw.client.callTool({ name: 'touch', arguments: { path: gatewayMarker } });
    expect(lost.isError).toBe(true);
    expect(resultText(lost)).toMatch(/lost its connection to the assent daemon/);
    expect(resultText(lost)).toMatch(/assent daemon run/);
    expect(existsSync(gatewayMarker)).toBe(false);
    const hookMarker = join(work, 'hook-while-gone');
    const refused = await agentRuns(home, `touch ${hookMarker}`, work);
    expect(refused.decision).toBe('deny');
    expect(refused.reason).toMatch(/no assent daemon answers/);
    expect(refused.reason).toMatch(/assent daemon run/);
    expect(existsSync(hookMarker)).toBe(false);

    // Restarted (outside the cap): it says the last one was killed, and the chain continues.
    await home.startDaemon();
    expect(logLines(home).find((line) => line.includes('ended without stopping'))).toMatch(/OOM killer.*MemoryMax=/);
    expect(await auditVerifies(home)).toBe(0);
    const hookAgain = join(work, 'hook-after-restart');
    expect((await agentRuns(home, `touch ${hookAgain}`, work)).decision).toBe('allow');
    expect(existsSync(hookAgain)).toBe(true);
    expect(readdirSync(work).filter((name) => name.startsWith('flood-'))).toEqual([]);
  }, 60_000);

  it('under ulimit -v WebAssembly cannot reserve its memory: shell calls are refused naming that limit and the fix, and the daemon keeps serving gateway calls', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const { child: daemon, stderr } = await daemonBehind(home, 'ulimit -v 4000000');
    expect(stderr()).toMatch(/listening on/);
    const marker = join(work, 'under-ulimit-v');
    const refused = await agentRuns(home, `touch ${marker}`, work);
    expect(refused.decision).toBe('deny');
    expect(refused.reason).toMatch(/WebAssembly could not reserve its memory/);
    expect(refused.reason).toMatch(/ulimit -v unlimited/);
    expect(refused.reason).toMatch(/MemoryMax=/);
    expect(existsSync(marker)).toBe(false);

    const gw = await gateway(home);
    const gatewayMarker = join(work, 'gateway-under-ulimit-v');
    const served = gw.client.callTool({ name: 'touch', arguments: { path: gatewayMarker } }, undefined, { timeout: 30_000 });
    await approveFirst(home);
    expect((await served).isError).toBeFalsy();
    expect(existsSync(gatewayMarker)).toBe(true);
    expect(daemon.exitCode).toBeNull();
    expect(await auditVerifies(home)).toBe(0);
  }, 30_000);
});

describe.skipIf(!hasSs)('200 agent sessions connecting and disconnecting', () => {
  it('leave the daemon with as many descriptors, listeners and event subscribers as before', async () => {
    const home = homeWithConfig();
    const work = join(home.home, '..');
    const daemon = await home.startDaemon();
    const pid = daemon.pid as number;
    const status = async (): Promise<{ connections: number; approvals: { pendingApprovals: number; gatewaySessions: number; events: { subscribers: number } } }> => {
      const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
      try {
        return await client.call('daemon.status', {});
      } finally {
        client.close();
      }
    };
    /**
     * What one gateway does to the daemon: hello, its pinned config, a policy watch, its tool report, a call that
     * waits for a person, then it goes: cancelling the call first (its client cancelled it), or just closing (it
     * was killed; the approval then stays until its expiry, for a gateway that reconnects to resume it).
     */
    const gatewaySession = async (n: number, abrupt: boolean): Promise<void> => {
      const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
      await client.call('config.get', {});
      await client.call('policy.get', { watch: true });
      await client.call('sessions.report', { sessionId: `gw-${n}`, policyToolsNotListed: [], tools: ['touch'] });
      const cancel = new AbortController();
      const call = client.call('calls.authorize', { sessionId: `gw-${n}`, server: 'marker', tool: 'touch', args: { path: join(work, `gw-${n}`) } }, { signal: cancel.signal }).catch(() => undefined);
      await sleep(30);
      if (!abrupt) {
        cancel.abort();
        await call;
        await sleep(20);
      }
      client.close();
      await call;
    };
    const hookPair = async (n: number): Promise<void> => {
      const before = shellEvent('claude-code', `ls ${work}`, { cwd: work, tool_use_id: `toolu_leak_${n}` });
      await runHook(['claude-code'], before, { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
      await runHook(['claude-code', '--after'], { ...before, hook_event_name: 'PostToolUse', tool_response: { stdout: '' } }, { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
    };
    // Warm-up: the first of each opens what stays open (the day's audit file, the grammar, the journal's WAL).
    await hookPair(0);
    await gatewaySession(0, false);
    await sleep(500);
    const fdsBefore = openDescriptors(pid);
    const listenersBefore = listeners(pid);
    const before = await status();

    const sessions: (() => Promise<unknown>)[] = [];
    for (let n = 1; n <= 25; n += 1) sessions.push(() => hookPair(n)); // the built hook, before and after: 50 sessions
    for (let n = 1; n <= 100; n += 1) sessions.push(() => gatewaySession(n, n % 2 === 0)); // half go abruptly
    // 50 in the hook's own form (hello and request in one write): half allowed at once, half waiting for a person when they go.
    for (let n = 1; n <= 50; n += 1) {
      const command = n % 2 === 0 ? `ls ${work}` : `rm -rf ${join(work, `leak-${n}`)}`;
      sessions.push(() => oneShot(home.paths.socket, 'agents.authorize', { agent: 'claude-code', sessionId: `raw-${n}`, cwd: work, kind: 'shell', tool: 'Bash', input: { command } }, 200));
    }
    for (let n = 1; n <= 3; n += 1) sessions.push(async () => (await gateway(home)).client.close());
    await inParallel(sessions, 6);

    // Settled: every connection closed and every waiting call withdrawn.
    let fdsAfter = openDescriptors(pid);
    for (let i = 0; i < 50 && fdsAfter !== fdsBefore; i += 1) {
      await sleep(100);
      fdsAfter = openDescriptors(pid);
    }
    expect(fdsAfter).toBe(fdsBefore);
    expect(listeners(pid)).toEqual(listenersBefore);
    const after = await status();
    expect(after.connections).toBe(before.connections);
    // Only the calls of the gateways that went abruptly wait, for a resume, until they expire; no connection holds them.
    expect(after.approvals.pendingApprovals).toBe(before.approvals.pendingApprovals + 50);
    expect(after.approvals.gatewaySessions).toBe(before.approvals.gatewaySessions);
    expect(after.approvals.events.subscribers).toBe(before.approvals.events.subscribers);
    expect(daemon.exitCode).toBeNull();
    expect(await auditVerifies(home)).toBe(0);
  }, 60_000);
});
