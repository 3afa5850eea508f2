// Issue 35 item 3 with the real daemon under libfaketime: its wall clock is set
// back 1 h, or forward 1 h, while an approval waits (FAKETIME_TIMESTAMP_FILE,
// re-read at every call; the monotonic clock left alone, as a real clock jump
// leaves it). Back: the wait still ends at its consent timeout, and the expired
// approval cannot be approved afterwards. Forward: approving it is refused as
// expired and the call is not allowed. The audit chain verifies after both.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { makeTempHome } from '../../helpers/daemon.js';

const FAKETIME_LIB = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1'].find((path) => existsSync(path));
if (FAKETIME_LIB === undefined) process.stderr.write('skipping the clock-jump tests: libfaketime is not installed (apt install faketime)\n');

const cleanups = cleanupsAfterEach();

async function daemonWithMovableClock(): Promise<{ client: DaemonClient; setOffset: (offset: string) => void; verify: () => Promise<number | null> }> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'prompt', consentTimeoutSeconds: 3 } }), { mode: 0o600 });
  const offsetFile = join(home.home, 'faketime.rc');
  const setOffset = (offset: string): void => writeFileSync(offsetFile, `${offset}\n`);
  setOffset('+0');
  await home.startDaemon({ LD_PRELOAD: FAKETIME_LIB, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  return { client, setOffset, verify: async () => (await home.runCli(['audit', 'verify'])).code };
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
});
