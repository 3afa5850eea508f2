// Issue 35 item 1 with the real daemon on its real socket: the disk under
// ASSENT_HOME fills up. ASSENT_HOME (journal.db, the audit files, the spool,
// daemon.log) is a small tmpfs of its own; a filler file takes every free
// block, and is removed again. While the disk is full no call is allowed —
// through the hook, through the gateway, by policy or by an approval decided
// meanwhile — and the answer names the device, the cause and the fix; an
// approval filed before stays pending and is decided afterwards. Once there is
// room, calls are served by the same daemon, the refusals it held in memory are
// in the audit file and `assent audit verify` passes with no gap; an export
// sink gets every seq, each one exactly as it is on disk. Each test asserts
// that the call did not run (its marker never appears), that the chain
// verifies afterwards, and that `daemon status`, `doctor` and daemon.log name
// the cause and the fix. The tmpfs needs root (CI runs as root); without it the
// tests fail, saying so, rather than pass untested. Last, real I/O errors: an
// ext4 on a loop device whose backing file lives on a tmpfs that fills, so the
// file system has room but the device fails its writes (skipped, saying so,
// where no loop device can be set up).
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { lineDigest } from '../../../src/journal/auditChain.js';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { makeLoopbackCertificate, startWebhookReceiver } from '../../helpers/auditReceivers.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { auditLines, CLI_ENTRY, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';
import { filesystemBin } from '../../e2e/mcpFixtures.js';

const cleanups = cleanupsAfterEach();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** tmpfs mounts this file made, unmounted after each test and, should one be left, after all. */
const mounts = new Set<string>();
function unmount(dir: string): void {
  if (!mounts.delete(dir)) return;
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch {
    // Gone already.
  }
}
afterAll(() => {
  for (const dir of [...mounts]) unmount(dir);
});

function mountTmpfs(dir: string, kib: number): void {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const why = (error as { stderr?: Buffer }).stderr?.toString().trim() ?? String(error);
    throw new Error(`could not mount a ${kib} KiB tmpfs on ${dir} (${why}): the disk-full tests fill a real file system and need root, as CI runs them; nothing was tested`, {
      cause: error,
    });
  }
  mounts.add(dir);
}

/** Writes until the file system takes no more: big blocks, then ever smaller, down to single bytes. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  try {
    for (const size of [chunk.length, 4096, 512, 64, 1]) {
      try {
        for (;;) writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

interface FullDisk {
  home: TempHome;
  /** A directory on the machine's own disk, for markers and the upstream's files. */
  scratch: string;
  fill(): void;
  free(): void;
}

/** A home on a tmpfs of its own, with `config`, and (unless `start` is false) a daemon started on it. */
async function homeOnTmpfs(config: Record<string, unknown>, kib = 8192, start = true): Promise<FullDisk> {
  const home = makeTempHome();
  const scratch = mkdtempSync(join(tmpdir(), 'as-df-'));
  // Run in reverse: stop the daemon, unmount, then remove what is left.
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  cleanups.push(() => rmSync(dirname(home.home), { recursive: true, force: true }));
  cleanups.push(() => unmount(home.home));
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true });
  mountTmpfs(home.home, kib);
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  if (start) await home.startDaemon();
  const filler = join(home.home, 'filler');
  return { home, scratch, fill: () => fillUp(filler), free: () => rmSync(filler, { force: true }) };
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What names the cause (the device holding ASSENT_HOME is full) and the fix (free space there, no restart). */
function diskFullText(home: TempHome): RegExp {
  return new RegExp(`no space left on the device holding ${escaped(home.home)} \\(ENOSPC.*free space on that device \\(\`df -h ${escaped(home.home)}\` shows it\\) and assent resumes by itself, no restart needed`, 'i');
}

function daemonPid(home: TempHome): number {
  return Number(readFileSync(home.paths.pid, 'utf8').trim());
}

/** The operator's view while the disk is full: `daemon status` (JSON and text) and `doctor` name the cause and the fix. */
async function expectOperatorTold(home: TempHome, refusedByDaemon = true): Promise<void> {
  const json = await home.runCli(['daemon', 'status', '--json']);
  expect(json.code, json.stderr).toBe(0);
  const storage = (JSON.parse(json.stdout) as { data: { storage: { ok: boolean; cause: string; refusedCalls: number } } }).data.storage;
  expect(storage.ok).toBe(false);
  expect(storage.cause).toMatch(diskFullText(home));
  if (refusedByDaemon) expect(storage.refusedCalls).toBeGreaterThan(0);
  const text = await home.runCli(['daemon', 'status']);
  expect(text.stdout).toMatch(/note: every call is refused: No space left on the device holding/);
  const doctor = await home.runCli(['doctor']);
  expect(doctor.code).toBe(65);
  expect(doctor.stdout).toMatch(new RegExp(`State directory ${escaped(home.home)}: the daemon refuses every call\\. ${diskFullText(home).source}`, 'i'));
}

/** Afterwards: served again, the chain verifies, and daemon.log said when it began (cause and fix) and when it ended. */
async function expectRecovered(home: TempHome, pid: number): Promise<void> {
  await expect.poll(async () => (JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { storage: { ok: boolean } } }).data.storage.ok, { timeout: 10_000 }).toBe(true);
  expect(daemonPid(home)).toBe(pid);
  const verify = await home.runCli(['audit', 'verify']);
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  expect(verify.stdout).toMatch(/intact/);
  const log = readFileSync(home.paths.log, 'utf8');
  expect(log).toMatch(new RegExp(`cannot write to its state directory; every call is refused until it can.*${diskFullText(home).source}`, 'i'));
  expect(log).toMatch(/writes to its state directory again; calls are served/);
}

describe('issue 35: a full disk under ASSENT_HOME', () => {
  it('hook: a shell command the policy allows is refused naming the disk while it is full, never runs, and is allowed again once there is room', async () => {
    const { home, scratch, fill, free } = await homeOnTmpfs({ policy: { agents: { default: 'allow' } } });
    const pid = daemonPid(home);
    // The test is the agent: it runs the command only when the hook allows it.
    const agentRuns = async (command: string): Promise<{ decision: string; reason: string }> => {
      const result = await runHook(['claude-code'], shellEvent('claude-code', command, { cwd: scratch }), home.env);
      const answer = answerOf(result.stdout);
      if (answer.decision === 'allow') execFileSync('sh', ['-c', command]);
      return answer;
    };
    const before = join(scratch, 'before');
    expect((await agentRuns(`touch ${before}`)).decision).toBe('allow');
    expect(existsSync(before)).toBe(true);

    fill();
    const marker = join(scratch, 'marker');
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      const result = await runHook([agent], shellEvent(agent, `touch ${marker}`, { cwd: scratch }), home.env);
      const answer = answerOf(result.stdout);
      expect(answer.decision, result.stdout).toBe('deny');
      expect(answer.reason).toMatch(/^assent did not run \w+\/\w+: unavailable\. /);
      expect(answer.reason).toMatch(diskFullText(home));
    }
    expect(existsSync(marker)).toBe(false);
    await expectOperatorTold(home);

    free();
    const after = join(scratch, 'after');
    // Until the daemon sees the room again, a retry is refused (and audited) like the three.
    let refusedRetries = 0;
    await expect
      .poll(
        async () => {
          const { decision } = await agentRuns(`touch ${after}`);
          if (decision !== 'allow') refusedRetries += 1;
          return decision;
        },
        { timeout: 10_000 },
      )
      .toBe('allow');
    expect(existsSync(after)).toBe(true);
    expect(existsSync(marker)).toBe(false);
    await expectRecovered(home, pid);
    // The refusals were held while the disk took nothing, and are on disk now, in the chain.
    await expect.poll(() => auditLines(home).filter((line) => line['outcome'] === 'denied' && line['deniedReason'] === 'disk_full').length, { timeout: 5000 }).toBe(3 + refusedRetries);
  }, 90_000);

  it('gateway: a call the policy allows is refused naming the disk, a prompt filed before stays pending and cannot be decided meanwhile; both work again once there is room', async () => {
    const data = mkdtempSync(join(tmpdir(), 'as-df-data-'));
    cleanups.push(() => rmSync(data, { recursive: true, force: true }));
    const { home, fill, free } = await homeOnTmpfs({
      servers: { fs: { command: process.execPath, args: [filesystemBin, data] } },
      policy: { default: 'allow', tools: { 'fs/write_file': 'allow', 'fs/create_directory': 'prompt' }, consentTimeoutSeconds: 120 },
    });
    const pid = daemonPid(home);
    const mcp = new Client({ name: 'disk-full-agent', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_ENTRY, 'mcp'],
      env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      stderr: 'pipe',
    });
    let gatewayStderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (gatewayStderr += chunk.toString('utf8')));
    await mcp.connect(transport);
    cleanups.push(() => mcp.close());
    const text = (result: unknown): string => ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
    const write = (name: string) => mcp.callTool({ name: 'write_file', arguments: { path: join(data, name), content: name } }, undefined, { timeout: 100_000 });

    expect((await write('before.txt')).isError).toBeFalsy();
    expect(existsSync(join(data, 'before.txt'))).toBe(true);
    // A prompt filed while there is room: it waits for the operator across the whole episode.
    const waiting = mcp
      .callTool({ name: 'create_directory', arguments: { path: join(data, 'approved-dir') } }, undefined, { timeout: 100_000, resetTimeoutOnProgress: true })
      .then(
        (result) => result,
        (error: unknown) => ({ isError: true, content: [{ type: 'text', text: String(error) }] }),
      );
    let approvalId: string | undefined;
    for (let i = 0; i < 200 && approvalId === undefined; i += 1) {
      approvalId = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data[0]?.id;
      if (approvalId === undefined) await sleep(50);
    }
    expect(approvalId).toBeDefined();

    fill();
    const refused = await write('marker.txt');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^assent did not run fs\/write_file: unavailable\. /);
    expect(text(refused)).toMatch(diskFullText(home));
    expect(existsSync(join(data, 'marker.txt'))).toBe(false);
    // The approval filed before is still there, and deciding it is refused, not half recorded.
    const pending = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] };
    expect(pending.data.map((entry) => entry.id)).toEqual([approvalId]);
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    await expect(client.call('approvals.decide', { id: approvalId, behavior: 'allow' })).rejects.toMatchObject({ type: 'unavailable', message: expect.stringMatching(diskFullText(home)) });
    await sleep(300);
    expect(existsSync(join(data, 'approved-dir'))).toBe(false);
    // The gateway refused that call itself (it measures the device too); the daemon refused the decision.
    await expectOperatorTold(home, false);

    free();
    await expect.poll(async () => (await write('after.txt')).isError ?? false, { timeout: 10_000 }).toBe(false);
    expect(existsSync(join(data, 'after.txt'))).toBe(true);
    await client.call('approvals.decide', { id: approvalId, behavior: 'allow' });
    expect((await waiting).isError).toBeFalsy();
    expect(existsSync(join(data, 'approved-dir'))).toBe(true);
    expect(existsSync(join(data, 'marker.txt'))).toBe(false);
    await expectRecovered(home, pid);
    expect(gatewayStderr).not.toMatch(/Uncaught|ERR_UNHANDLED/);
    // The refusal is audited once the disk took it; the allowed calls ran and are audited too.
    await expect.poll(() => auditLines(home).some((line) => line['tool'] === 'write_file' && line['outcome'] === 'denied'), { timeout: 10_000 }).toBe(true);
  }, 120_000);

  it('export: while the disk is full the sink never gets a line that is not on disk; afterwards it gets every seq, each exactly as in the file', async () => {
    const certificate = await makeLoopbackCertificate();
    const keys = mkdtempSync(join(tmpdir(), 'as-df-keys-'));
    cleanups.push(() => rmSync(keys, { recursive: true, force: true }));
    const KEY = 'disk-full-export-key-0123456789abcdef0123456789';
    writeFileSync(join(keys, 'ca.pem'), certificate.cert);
    writeFileSync(join(keys, 'key'), KEY, { mode: 0o600 });
    const webhook = await startWebhookReceiver(KEY, certificate);
    cleanups.push(() => webhook.close());
    const { home, fill, free } = await homeOnTmpfs({
      servers: { fs: { command: 'true' } },
      policy: { default: 'allow' },
      audit: { export: [{ kind: 'webhook', name: 'hook', url: webhook.url, secretFile: join(keys, 'key'), ca: join(keys, 'ca.pem'), batchSize: 5 }] },
    });
    const pid = daemonPid(home);
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    const call = async (n: number): Promise<string> => {
      try {
        const { callId } = await client.call<{ callId: string }>('calls.authorize', { sessionId: 'export', server: 'fs', tool: 'read_file', args: { n, pad: 'x'.repeat(300) }, annotations: { readOnlyHint: true } });
        await client.call('calls.finish', { callId, outcome: 'ok' });
        return 'allowed';
      } catch (error) {
        return (error as { details?: { detail?: string } }).details?.detail ?? String(error);
      }
    };
    for (let n = 0; n < 7; n += 1) expect(await call(n)).toBe('allowed');
    await expect.poll(() => webhook.records().length, { timeout: 10_000 }).toBe(7);

    fill();
    /** Every exported record names a line that is in the file now, with the same digest. */
    const exportedMatchDisk = (): void => {
      const onDisk = new Map(readAuditFileLines(home).map((line) => [(JSON.parse(line) as { seq: number }).seq, lineDigest(line)]));
      for (const record of webhook.records()) expect(onDisk.get(Number(record['seq']))).toBe(record['lineSha256']);
    };
    // Bursts of refusals: their lines are larger than what is left of the file's last page, so writes fail part way.
    for (let round = 0; round < 4; round += 1) {
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => call(100 + round * 12 + i)));
      expect(new Set(outcomes)).toEqual(new Set(['disk_full']));
      await sleep(300);
      exportedMatchDisk();
      const file = readFileSync(auditFileOf(home), 'utf8');
      expect(file.endsWith('\n')).toBe(true);
      expect((await home.runCli(['audit', 'verify'])).code).toBe(0);
    }
    const during = await client.call<{ export: Record<string, { cursor: number }>; storage: { heldAuditRecords: number } }>('daemon.status', {});
    // Held in memory, but for any that fitted in what was left of the file's last page.
    expect(during.storage.heldAuditRecords).toBeGreaterThan(40);
    expect(during.storage.heldAuditRecords + readAuditFileLines(home).length).toBe(7 + 48);
    expect(during.export['hook']!.cursor).toBeLessThanOrEqual(readAuditFileLines(home).length);
    await expectOperatorTold(home);

    free();
    await expectRecovered(home, pid);
    await expect.poll(() => readAuditFileLines(home).length, { timeout: 10_000 }).toBe(7 + 48);
    await expect.poll(() => new Set(webhook.records().map((record) => Number(record['seq']))).size, { timeout: 30_000 }).toBe(7 + 48);
    const seqs = [...new Set(webhook.records().map((record) => Number(record['seq'])))].sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 7 + 48 }, (_, i) => i + 1));
    exportedMatchDisk();
    expect(auditLines(home).filter((line) => line['deniedReason'] === 'disk_full')).toHaveLength(48);
  }, 120_000);

  it('start: a daemon started on a full disk refuses to start naming the file and the fix, leaves no half-written state behind, and starts once there is room', async () => {
    const { home, fill, free } = await homeOnTmpfs({ policy: { agents: { default: 'allow' } } }, 2048, false);
    fill();
    const refused = await home.runCli(['daemon', 'run'], { timeoutMs: 20_000 });
    expect(refused.code).toBe(69);
    expect(refused.stderr).toMatch(new RegExp(`cannot write ${escaped(home.paths.identity)} \\(ENOSPC\\); its device has no space left: free space there and retry`));
    // Nothing it could not finish stays to be read as damage at the next start: no empty identity.json, no empty pid file.
    expect(existsSync(home.paths.identity)).toBe(false);
    expect(existsSync(home.paths.pid)).toBe(false);
    free();
    await home.startDaemon();
    const result = await runHook(['claude-code'], shellEvent('claude-code', 'ls', { cwd: home.home }), home.env);
    expect(answerOf(result.stdout).decision).toBe('allow');
    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout).toBe(0);
  }, 60_000);
});

const LOSETUP = ['/usr/sbin/losetup', '/sbin/losetup'].find((path) => existsSync(path));
const MKFS = ['/usr/sbin/mkfs.ext4', '/sbin/mkfs.ext4'].find((path) => existsSync(path));
/** Whether a loop device can be set up here (root, /dev/loop-control): the I/O-error test needs one. */
function loopDevices(): boolean {
  if (LOSETUP === undefined || MKFS === undefined) return false;
  try {
    execFileSync(LOSETUP, ['-f'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}
const HAS_LOOP = loopDevices();
if (!HAS_LOOP) process.stderr.write('skipping the I/O-error test: no loop device can be set up here (losetup -f, mkfs.ext4, root)\n');

describe.skipIf(!HAS_LOOP)('issue 35: I/O errors under ASSENT_HOME', () => {
  it('the device fails its writes while the file system has room: calls are refused naming the device once a write failed, never run, and are served again once its writes succeed', async () => {
    const home = makeTempHome();
    const root = dirname(home.home);
    const back = join(root, 'back');
    const scratch = mkdtempSync(join(tmpdir(), 'as-io-'));
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    cleanups.push(() => unmount(back));
    mkdirSync(back, { recursive: true });
    mountTmpfs(back, 24 * 1024);
    // A 64 MiB sparse image on 24 MiB: the ext4 on it sees room the device cannot give once its backing is full.
    const image = join(back, 'disk.img');
    writeFileSync(image, '');
    truncateSync(image, 64 * 1024 * 1024);
    const loop = execFileSync(LOSETUP!, ['-f', '--show', image], { encoding: 'utf8' }).trim();
    cleanups.push(() => execFileSync(LOSETUP!, ['-d', loop], { stdio: 'pipe' }));
    execFileSync(MKFS!, ['-q', loop], { stdio: 'pipe' });
    mkdirSync(home.home);
    execFileSync('mount', ['-o', 'errors=continue', loop, home.home], { stdio: 'pipe' });
    mounts.add(home.home);
    cleanups.push(() => unmount(home.home));
    cleanups.push(() => home.cleanup());
    chmodSync(home.home, 0o700);
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, servers: { fs: { command: 'true' } }, policy: { default: 'allow', agents: { default: 'allow' } } }), { mode: 0o600 });
    await home.startDaemon();
    const pid = daemonPid(home);
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    const call = async (n: number): Promise<string> => {
      try {
        const { callId } = await client.call<{ callId: string }>('calls.authorize', { sessionId: 'io', server: 'fs', tool: 'read_file', args: { n }, annotations: { readOnlyHint: true } });
        await client.call('calls.finish', { callId, outcome: 'ok' });
        return 'allowed';
      } catch (error) {
        return (error as { details?: { detail?: string } }).details?.detail ?? String(error);
      }
    };
    expect(await call(0)).toBe('allowed');

    fillUp(join(back, 'filler'));
    // Each allowed call had its row in the journal, synced; the first write the device fails holds every call after it.
    let outcome = 'allowed';
    for (let n = 1; n < 100 && outcome === 'allowed'; n += 1) outcome = await call(n);
    expect(['disk_error', 'disk_full']).toContain(outcome);
    const marker = join(scratch, 'marker');
    const hook = answerOf((await runHook(['claude-code'], shellEvent('claude-code', `touch ${marker}`, { cwd: scratch }), home.env)).stdout);
    expect(hook.decision).toBe('deny');
    expect(hook.reason).toMatch(new RegExp(`^assent did not run claude/Bash: unavailable\\. .*the device holding ${escaped(home.home)}.*no restart needed`));
    expect(existsSync(marker)).toBe(false);
    const status = (JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { storage: { ok: boolean; cause: string } } }).data.storage;
    expect(status.ok).toBe(false);
    expect(status.cause).toMatch(new RegExp(`device holding ${escaped(home.home)} .*(Check that device|Free space on that device).*no restart needed`));

    rmSync(join(back, 'filler'));
    await expect.poll(async () => (JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { storage: { ok: boolean } } }).data.storage.ok, { timeout: 15_000 }).toBe(true);
    expect(await call(1000)).toBe('allowed');
    const after = join(scratch, 'after');
    const allowed = answerOf((await runHook(['claude-code'], shellEvent('claude-code', `touch ${after}`, { cwd: scratch }), home.env)).stdout);
    expect(allowed.decision).toBe('allow');
    expect(existsSync(marker)).toBe(false);
    expect(daemonPid(home)).toBe(pid);
    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(readFileSync(home.paths.log, 'utf8')).toMatch(/cannot write to its state directory; every call is refused until it can.*device holding/);
  }, 90_000);
});

function auditFileOf(home: TempHome): string {
  const name = execFileSync('ls', [home.paths.auditDir], { encoding: 'utf8' })
    .split('\n')
    .filter((entry) => entry.endsWith('.jsonl'))
    .sort()
    .at(-1);
  return join(home.paths.auditDir, name ?? 'missing.jsonl');
}

function readAuditFileLines(home: TempHome): string[] {
  return readFileSync(auditFileOf(home), 'utf8').split('\n').filter(Boolean);
}
