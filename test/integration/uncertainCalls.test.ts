// Calls the daemon admitted and never saw finish (hardening 4, R-J-5 for calls,
// R-AUD-1): a daemon killed while such a call runs audits it `uncertain` when
// it starts again — once, never silently dropped, never "ok".
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/base/canonical.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { runInTerminal } from '../helpers/pty.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function setup(): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return client;
}

function killDaemon(home: TempHome): void {
  process.kill(Number(readFileSync(home.paths.pid, 'utf8').trim()), 'SIGKILL');
}

describe('R-J-5 calls admitted before a crash are audited uncertain (hardening 4)', () => {
  it('a call authorized (by policy and by an approval) and killed before calls.finish gets one uncertain audit line after the restart', async () => {
    const home = await setup();
    const client = await connect(home);
    // Admitted by policy: the daemon decided it (a head without a snapshot), then died before the end.
    const byPolicy = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's-crash', server: 'fs', tool: 'read_file', args: { path: '/srv/a' }, annotations: { readOnlyHint: true } });
    expect(byPolicy.callId).toBeTruthy();
    // Admitted by a human: approved in a terminal, running upstream when the daemon dies.
    const waiting = client.call<{ callId: string }>('calls.authorize', { sessionId: 's-crash', server: 'fs', tool: 'write_file', args: { path: '/srv/b', content: 'x' } });
    let approvalId: string | undefined;
    for (let i = 0; i < 200 && approvalId === undefined; i += 1) {
      const pending = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] };
      approvalId = pending.data[0]?.id;
      if (approvalId === undefined) await sleep(25);
    }
    expect((await runInTerminal(['approve', approvalId!], { env: { ASSENT_HOME: home.home }, typeCode: true })).exitCode).toBe(0);
    await waiting;
    // A finished call leaves nothing behind.
    const finished = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's-crash', server: 'fs', tool: 'list', args: {}, annotations: { readOnlyHint: true } });
    await client.call('calls.finish', { callId: finished.callId, outcome: 'ok' });
    await sleep(200);

    killDaemon(home);
    await sleep(200);
    expect(auditLines(home).filter((l) => l['outcome'] === 'uncertain')).toEqual([]);
    await home.startDaemon();

    await expect.poll(() => auditLines(home).filter((l) => l['outcome'] === 'uncertain').length, { timeout: 5000 }).toBe(2);
    const uncertain = auditLines(home).filter((l) => l['outcome'] === 'uncertain');
    expect(uncertain).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ sessionId: 's-crash', server: 'fs', tool: 'read_file', argsSha256: digestOf({ path: '/srv/a' }) }),
        expect.objectContaining({ sessionId: 's-crash', server: 'fs', tool: 'write_file', argsSha256: digestOf({ path: '/srv/b', content: 'x' }), approvalId, channel: 'cli' }),
      ]),
    );
    expect(auditLines(home).filter((l) => l['tool'] === 'list')).toHaveLength(1);
    // R-POL-10: a reconciled line carries a level too; its rating was not kept, so it is elevated, never missing.
    expect(uncertain.map((line) => line['risk'])).toEqual(['elevated', 'elevated']);

    // Recorded once: a further restart writes nothing new.
    const restarted = await connect(home);
    await restarted.call('daemon.shutdown', {});
    await expect.poll(() => existsSync(home.paths.pid), { timeout: 5000 }).toBe(false);
    await home.startDaemon();
    await sleep(300);
    expect(auditLines(home).filter((l) => l['outcome'] === 'uncertain')).toHaveLength(2);
    const verify = await home.runCli(['audit', 'verify', '--json']);
    expect(verify.code, verify.stdout).toBe(0);
  });
});
