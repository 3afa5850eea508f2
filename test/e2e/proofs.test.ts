// R-J-3..7 through the built binary and a real daemon: `action run --via-daemon`,
// `approve --export-proof`, `--approval-proof[-file]`, `proofs list|revoke`,
// `effects show`, kill -9 during an effect, and a scan for leaked tokens.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { CLI_ENTRY, makeTempHome, processesForHome, type CliResult, type TempHome, auditLines } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';
import { makeActionDir, writePolicy, writeRequest, type ActionDir } from './actionFixtures.js';
import type { ExecAction } from '../../src/core/exec/action.js';

const homes: TempHome[] = [];
const dirs: ActionDir[] = [];
const clients: DaemonClient[] = [];
const ptys: PtySession[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const pty of ptys.splice(0)) pty.kill();
  for (const client of clients.splice(0)) client.close();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const home of homes.splice(0)) await home.cleanup();
  for (const dir of dirs.splice(0)) dir.cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything any process printed in this file's tests, scanned for tokens at the end of each test. */
const transcripts: string[] = [];
/** /proc cmdline + environ of every assent process seen while proofs were alive. */
const procSamples: string[] = [];

function sampleProcs(home: TempHome): void {
  for (const pid of processesForHome(home.home)) {
    try {
      procSamples.push(readFileSync(`/proc/${pid}/cmdline`, 'latin1'), readFileSync(`/proc/${pid}/environ`, 'latin1'));
    } catch {
      // Exited meanwhile.
    }
  }
}

async function setup(config: Record<string, unknown> = {}): Promise<{ home: TempHome; dir: ActionDir; daemon: ChildProcess }> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, ...config }), { mode: 0o600 });
  const daemon = await home.startDaemon();
  const dir = makeActionDir();
  dirs.push(dir);
  return { home, dir, daemon };
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return client;
}

function effectsAction(dir: ActionDir, script = `echo ran >> '${join(dir.dir, 'effects')}'`): ExecAction {
  return { executable: '/bin/sh', cwd: dir.dir, args: ['-c', script], env: {} };
}

function effectCount(dir: ActionDir): number {
  const file = join(dir.dir, 'effects');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

async function cli(home: TempHome, args: string[], input?: string): Promise<CliResult> {
  const result = await home.runCli(args, { env: { ASSENT_NO_AUTOSPAWN: '1' }, ...(input === undefined ? {} : { input }), timeoutMs: 30_000 });
  transcripts.push(result.stdout, result.stderr);
  return result;
}

/** Starts `action run --via-daemon` in the background (it waits for an approval). */
function runViaDaemonInBackground(home: TempHome, dir: ActionDir): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_ENTRY, 'action', 'run', '--via-daemon', dir.policy, dir.request], {
      env: { ...home.env, ASSENT_NO_AUTOSPAWN: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.on('close', (code, signal) => {
      transcripts.push(stdout, stderr);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function waitForPending(client: DaemonClient, count = 1): Promise<{ id: string; kind: string }[]> {
  for (let i = 0; i < 400; i += 1) {
    const list = await client.call<{ id: string; kind: string }[]>('approvals.list', {});
    if (list.length >= count) return list;
    await sleep(25);
  }
  throw new Error('no pending approval appeared');
}

/** `assent approve ID --export-proof FILE` in a real terminal, typing the code back. */
async function exportProof(home: TempHome, id: string, file: string): Promise<{ exitCode: number; screen: string }> {
  const outFile = join(home.home, `approve-${id}-${Date.now()}.out`);
  const pty = new PtySession(['approve', id, '--export-proof', file], { outFile, env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' } });
  ptys.push(pty);
  const match = await pty.waitFor(/Type ([a-z]{4}) to approve|assent: .*/);
  if (match[1] !== undefined) pty.type(`${match[1]}\r`);
  const { exitCode } = await pty.finish(outFile);
  transcripts.push(pty.screen, existsSync(outFile) ? readFileSync(outFile, 'utf8') : '');
  return { exitCode, screen: pty.screen };
}

/** Files an exec approval from a test client (as `action run --via-daemon` would) and returns its id. */
async function fileExecApproval(home: TempHome, dir: ActionDir): Promise<string> {
  const waiter = await connect(home);
  const action = JSON.parse(readFileSync(dir.request, 'utf8')).action as ExecAction;
  const { effectiveExecAction } = await import('../../src/exec/environment.js');
  const { sha256Hex } = await import('../../src/core/base/canonical.js');
  const revision = `v1:sha256:${sha256Hex(readFileSync(dir.policy))}`;
  waiter.call('actions.request', { action: effectiveExecAction(action), revision }).catch(() => undefined);
  const operator = await connect(home);
  const [pending] = await waitForPending(operator);
  return pending!.id;
}

/** R-J-7 secret scan over everything this home produced. */
async function scanForTokens(home: TempHome): Promise<void> {
  const haystacks: string[] = [...transcripts, ...procSamples];
  if (existsSync(home.paths.log)) haystacks.push(readFileSync(home.paths.log, 'utf8'));
  if (existsSync(home.paths.auditDir)) {
    for (const f of readdirSync(home.paths.auditDir)) haystacks.push(readFileSync(join(home.paths.auditDir, f), 'utf8'));
  }
  try {
    const client = await connect(home);
    haystacks.push(JSON.stringify(await client.call('events.since', { cursor: 0, limit: 10_000 })));
  } catch {
    // The daemon is gone in some tests; the journal's event rows are checked below instead.
  }
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(home.paths.journal, { readonly: true });
  try {
    haystacks.push(JSON.stringify(db.prepare('SELECT * FROM events').all()));
  } finally {
    db.close();
  }
  for (const text of haystacks) expect(text).not.toMatch(/asp1_[A-Za-z0-9_-]{10,}/);
}

describe('action run --via-daemon', () => {
  it('R-J-3 an ask action waits for the operator, records the intent before the spawn and the outcome after; it runs once', async () => {
    const { home, dir } = await setup();
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');
    const client = await connect(home);
    const events: { kind: string; data: Record<string, unknown> }[] = [];
    client.onNotification('event', (e) => events.push(e as { kind: string; data: Record<string, unknown> }));
    await client.call('events.subscribe', {});
    const run = runViaDaemonInBackground(home, dir);
    const [pending] = await waitForPending(client);
    expect(pending?.kind).toBe('exec');
    sampleProcs(home);
    expect(effectCount(dir)).toBe(0);
    await client.call('approvals.decide', { id: pending!.id, behavior: 'allow', channel: 'cli' });
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ decision: 'allow', authorization: 'operator-confirmed', policyDecision: 'ask', execution: { state: 'exited', exitCode: 0 } });
    expect(effectCount(dir)).toBe(1);

    const consumed = events.find((e) => e.kind === 'proof_consumed');
    expect(consumed).toBeDefined();
    const effectId = consumed!.data['effectId'] as string;
    const shown = await cli(home, ['effects', 'show', effectId, '--json']);
    expect(JSON.parse(shown.stdout).data).toMatchObject({ id: effectId, state: 'completed', approvalId: pending!.id });
    const listed = await cli(home, ['proofs', 'list', '--json']);
    expect(JSON.parse(listed.stdout).data).toEqual([expect.objectContaining({ approvalId: pending!.id, audience: 'cli', state: 'consumed', effectId })]);
    expect(auditLines(home)).toContainEqual(expect.objectContaining({ kind: 'exec', outcome: 'ok', approvalId: pending!.id }));
    await scanForTokens(home);
  }, 60_000);

  it('R-J-3 a denied ask action never starts', async () => {
    const { home, dir } = await setup();
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');
    const client = await connect(home);
    const run = runViaDaemonInBackground(home, dir);
    const [pending] = await waitForPending(client);
    await client.call('approvals.decide', { id: pending!.id, behavior: 'deny', channel: 'cli' });
    const result = await run;
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ decision: 'deny', reason: 'confirmation-denied', execution: { state: 'not-started' } });
    expect(effectCount(dir)).toBe(0);
  }, 60_000);
});

describe('exported proofs', () => {
  it('R-J-7 --export-proof writes a new 0600 file and refuses an existing path; the proof runs once, then replays', async () => {
    const { home, dir } = await setup();
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');
    const id = await fileExecApproval(home, dir);

    const taken = join(dir.dir, 'taken.proof');
    writeFileSync(taken, 'keep me');
    const refused = await exportProof(home, id, taken);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.screen).toMatch(/already exists/);
    expect(readFileSync(taken, 'utf8')).toBe('keep me');
    const client = await connect(home);
    expect((await client.call<{ state: string }>('approvals.get', { id })).state).toBe('pending');

    const file = join(dir.dir, 'approval.proof');
    const exported = await exportProof(home, id, file);
    expect(exported.exitCode, exported.screen).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const proof = readFileSync(file, 'utf8').trim();
    expect(proof).toMatch(/^asp1_[A-Za-z0-9_-]{43}$/);
    expect(exported.screen).not.toContain(proof);

    const first = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', file, dir.policy, dir.request]);
    expect(first.code, first.stderr).toBe(0);
    expect(effectCount(dir)).toBe(1);
    const again = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof', '-', dir.policy, dir.request], proof);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already used for this exact action .*completed/);
    expect(effectCount(dir)).toBe(1);
    await scanForTokens(home);
  }, 60_000);

  it('R-J-7 a proof is never taken from the command line', async () => {
    const { home, dir } = await setup();
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');
    const fake = `asp1_${'A'.repeat(43)}`;
    const result = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof', fake, dir.policy, dir.request]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('{"error":"expected-action-exec-arguments"}\n');
    expect(result.stderr).not.toContain(fake);
    expect(effectCount(dir)).toBe(0);
  }, 30_000);

  it('R-J-4 R-J-6 refusals run nothing: unknown, revoked, consumed for another action, revision changed', async () => {
    const { home, dir } = await setup();
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');

    const unknown = join(dir.dir, 'unknown.proof');
    writeFileSync(unknown, `asp1_${'B'.repeat(43)}\n`, { mode: 0o600 });
    const r1 = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', unknown, dir.policy, dir.request]);
    expect(r1.stderr).toMatch(/refused \(unknown\)/);
    expect(JSON.parse(r1.stdout)).toMatchObject({ decision: 'deny', execution: { state: 'not-started' } });

    const revokedFile = join(dir.dir, 'revoked.proof');
    const revokedId = await fileExecApproval(home, dir);
    expect((await exportProof(home, revokedId, revokedFile)).exitCode).toBe(0);
    const revoke = await cli(home, ['proofs', 'revoke', revokedId, '--json']);
    expect(JSON.parse(revoke.stdout).data).toMatchObject({ approvalId: revokedId, state: 'revoked' });
    const r2 = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', revokedFile, dir.policy, dir.request]);
    expect(r2.stderr).toMatch(/refused \(revoked\)/);

    const usedFile = join(dir.dir, 'used.proof');
    const usedId = await fileExecApproval(home, dir);
    expect((await exportProof(home, usedId, usedFile)).exitCode).toBe(0);
    expect((await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', usedFile, dir.policy, dir.request])).code).toBe(0);
    expect(effectCount(dir)).toBe(1);
    const otherRequest = join(dir.dir, 'other.json');
    writeFileSync(otherRequest, JSON.stringify({ schemaVersion: 1, action: effectsAction(dir, `echo other >> '${join(dir.dir, 'effects')}'`) }));
    const r3 = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', usedFile, dir.policy, otherRequest]);
    expect(r3.stderr).toMatch(/refused \(consumed-for-other-action\)/);

    const staleFile = join(dir.dir, 'stale.proof');
    const staleId = await fileExecApproval(home, dir);
    expect((await exportProof(home, staleId, staleFile)).exitCode).toBe(0);
    writePolicy(dir, 'ask', [{ action: effectsAction(dir, 'true'), decision: 'deny' }]);
    const r4 = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', staleFile, dir.policy, dir.request]);
    expect(r4.stderr).toMatch(/refused \(revision-changed\)/);
    expect(JSON.parse(r4.stdout)).toMatchObject({ reason: 'configuration-changed', execution: { state: 'not-started' } });

    expect(effectCount(dir)).toBe(1);
    await scanForTokens(home);
  }, 90_000);
});

describe('R-J-4 expiry end to end', () => {
  it('an exported proof presented after approvals.proofTtlSeconds is refused (expired) and runs nothing', async () => {
    const { home, dir } = await setup({ approvals: { proofTtlSeconds: 1 } });
    writeRequest(dir, effectsAction(dir));
    writePolicy(dir, 'ask');
    const id = await fileExecApproval(home, dir);
    const file = join(dir.dir, 'expired.proof');
    expect((await exportProof(home, id, file)).exitCode).toBe(0);
    await sleep(1500);
    const run = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', file, dir.policy, dir.request]);
    expect(run.stderr).toMatch(/refused \(expired\)/);
    expect(JSON.parse(run.stdout)).toMatchObject({ decision: 'deny', execution: { state: 'not-started' } });
    expect(effectCount(dir)).toBe(0);
  }, 30_000);
});

describe('crash safety', () => {
  it('R-J-5 kill -9 of the daemon while an approved effect runs leaves an uncertain effect, event and audit line; the proof runs nothing again', async () => {
    const { home, dir, daemon } = await setup();
    const started = join(dir.dir, 'effects');
    writeRequest(dir, effectsAction(dir, `echo ran >> '${started}'; sleep 3`));
    writePolicy(dir, 'ask');
    const id = await fileExecApproval(home, dir);
    const file = join(dir.dir, 'crash.proof');
    expect((await exportProof(home, id, file)).exitCode).toBe(0);

    const run = cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', file, dir.policy, dir.request]);
    for (let i = 0; i < 1500 && effectCount(dir) === 0; i += 1) await sleep(10);
    expect(effectCount(dir)).toBe(1);
    sampleProcs(home);
    for (const client of clients.splice(0)) client.close();
    daemon.kill('SIGKILL');
    const result = await run;
    expect(result.stderr).toMatch(/could not be recorded/);

    await home.startDaemon();
    const client = await connect(home);
    const events = await client.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0, limit: 10_000 });
    const uncertain = events.find((e) => e.kind === 'effect_uncertain');
    expect(uncertain?.data['approvalId']).toBe(id);
    const effectId = uncertain!.data['effectId'] as string;
    expect((await client.call<{ state: string }>('effects.get', { id: effectId })).state).toBe('uncertain');
    for (let i = 0; i < 100 && !auditLines(home).some((l) => l['outcome'] === 'uncertain'); i += 1) await sleep(20);
    expect(auditLines(home)).toContainEqual(expect.objectContaining({ outcome: 'uncertain', approvalId: id, kind: 'exec' }));

    const again = await cli(home, ['action', 'run', '--via-daemon', '--approval-proof-file', file, dir.policy, dir.request]);
    expect(again.stderr).toMatch(/already used for this exact action .*uncertain/);
    await sleep(3500);
    expect(effectCount(dir)).toBe(1);
    await scanForTokens(home);
  }, 90_000);
});
