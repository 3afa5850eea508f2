// Issue 35 item 3 with the real daemon under libfaketime: its wall clock is set
// back 1 h, or forward 1 h, while an approval waits (FAKETIME_TIMESTAMP_FILE,
// re-read at every call; the monotonic clock left alone, as a real clock jump
// leaves it). Back: the wait still ends at its consent timeout, and the expired
// approval cannot be approved afterwards. Forward: approving it is refused as
// expired and the call is not allowed. Back after a restart: a proof that
// expired before the daemon stopped stays expired in the next one (its
// monotonic expiry is in the journal). The audit chain verifies after each.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { makeTempHome } from '../../helpers/daemon.js';

const FAKETIME_LIB = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1'].find((path) => existsSync(path));
if (FAKETIME_LIB === undefined) process.stderr.write('skipping the clock-jump tests: libfaketime is not installed (apt install faketime)\n');

const cleanups = cleanupsAfterEach();

interface MovableDaemon {
  client: DaemonClient;
  setOffset: (offset: string) => void;
  verify: () => Promise<number | null>;
  /** Stops the daemon (SIGTERM, as `daemon stop` does) and starts it again on the same home and clock; the new client. */
  restart: () => Promise<DaemonClient>;
}

async function daemonWithMovableClock(config: Record<string, unknown> = {}): Promise<MovableDaemon> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'prompt', consentTimeoutSeconds: 3 }, ...config }), { mode: 0o600 });
  const offsetFile = join(home.home, 'faketime.rc');
  const setOffset = (offset: string): void => writeFileSync(offsetFile, `${offset}\n`);
  setOffset('+0');
  const env = { LD_PRELOAD: FAKETIME_LIB, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
  let daemon = await home.startDaemon(env);
  const connect = async (): Promise<DaemonClient> => {
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    return client;
  };
  const restart = async (): Promise<DaemonClient> => {
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
    daemon = await home.startDaemon(env);
    return connect();
  };
  return { client: await connect(), setOffset, verify: async () => (await home.runCli(['audit', 'verify'])).code, restart };
}

/** `calls.authorize` for a write, as a gateway sends it: allowed, or refused with its reason and approval. */
async function authorize(client: DaemonClient, path: string): Promise<{ allowed: true } | { allowed: false; reason: string; approvalId?: string }> {
  try {
    await client.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { path } });
    return { allowed: true };
  } catch (error) {
    const details = (error as { details?: { reason?: string; approvalId?: string } }).details ?? {};
    return { allowed: false, reason: details.reason ?? (error as Error).message, ...(details.approvalId === undefined ? {} : { approvalId: details.approvalId }) };
  }
}

async function pendingId(client: DaemonClient): Promise<string> {
  for (let i = 0; i < 100; i += 1) {
    const list = await client.call<{ id: string }[]>('approvals.list', {});
    if (list[0] !== undefined) return list[0].id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no approval was filed');
}

describe.skipIf(FAKETIME_LIB === undefined)('clock jumps under libfaketime', () => {
  it('the wall clock set back 1 h while an approval waits: the wait ends at its 3 s timeout, and the expired approval cannot be approved', async () => {
    const { client, setOffset, verify } = await daemonWithMovableClock();
    const started = performance.now();
    const call = client.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/x' } }).then(
      () => 'allowed',
      (error: { type?: string; message?: string }) => `${error.type ?? 'error'}: ${error.message ?? ''}`,
    );
    const id = await pendingId(client);
    setOffset('-1h');
    expect(await call).toMatch(/^policy_denied: No one answered before/);
    expect(performance.now() - started).toBeLessThan(15_000);
    await expect(client.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'conflict', message: expect.stringMatching(/already expired/) });
    expect(await verify()).toBe(0);
  }, 40_000);

  it('the wall clock set forward 1 h while an approval waits: approving it is refused as expired, and the call is not allowed', async () => {
    const { client, setOffset, verify } = await daemonWithMovableClock();
    const call = client.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/y' } }).then(
      () => 'allowed',
      (error: { type?: string }) => error.type ?? 'error',
    );
    const id = await pendingId(client);
    setOffset('+1h');
    const decided = await client.call('approvals.decide', { id, behavior: 'allow' }).then(
      () => 'decided',
      (error: { type?: string; message?: string }) => `${error.type ?? 'error'}: ${error.message ?? ''}`,
    );
    expect(decided).toMatch(/expired/);
    expect(await call).not.toBe('allowed');
    expect(await verify()).toBe(0);
  }, 40_000);

  it('a proof that expired before a daemon restart stays refused by the next daemon with the wall clock set back 1 h', async () => {
    const ttlSeconds = 2;
    const { client, setOffset, verify, restart } = await daemonWithMovableClock({ approvals: { handoff: true, proofTtlSeconds: ttlSeconds } });
    // A handoff call files its approval; approving it issues the proof its identical retry would consume.
    const filed = await authorize(client, '/z');
    expect(filed).toMatchObject({ allowed: false, reason: 'approval_pending' });
    const approvalId = (filed as { approvalId: string }).approvalId;
    await client.call('approvals.decide', { id: approvalId, behavior: 'allow' });
    const proofState = async (on: DaemonClient): Promise<string | undefined> =>
      (await on.call<{ approvalId: string; state: string }[]>('proofs.list', {})).find((proof) => proof.approvalId === approvalId)?.state;
    expect(await proofState(client)).toBe('issued');
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 500));
    const next = await restart();
    setOffset('-1h');
    // By its recorded wall time the proof has almost an hour left; its monotonic expiry, kept in the journal, has passed.
    const retry = await authorize(next, '/z');
    expect(retry, 'the restarted daemon let an expired proof through after the clock was set back').toMatchObject({ allowed: false, reason: 'approval_pending' });
    // The person decides again: the refused retry filed a new approval; the proof is listed as expired.
    expect((retry as { approvalId?: string }).approvalId).not.toBe(approvalId);
    expect(await proofState(next)).toBe('expired');
    expect(await verify()).toBe(0);
  }, 40_000);
});
