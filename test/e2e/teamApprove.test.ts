// `assent approve` in a real terminal under the team rules (SPEC §20, R-TEAM-3):
// with policy.quorum the operator's typed code records one approval and says
// "1 of 2, still pending"; approving again changes nothing and says so; a
// reviewer's token completes it. With approvals.fourEyes the owner's approval is
// refused with exit 77 and the approval stays pending.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome, waitForAudit } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';
import { callApi, createToken, webUrl } from '../helpers/reviewer.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];
const ptys: PtySession[] = [];

afterEach(async () => {
  for (const pty of ptys.splice(0)) pty.kill();
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

const LOCAL = `${userInfo().username}@team-a`;

async function setup(extra: Record<string, unknown>): Promise<{ home: TempHome; client: DaemonClient }> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  const config = {
    notifications: false,
    host: { name: 'team-a' },
    web: { listen: '127.0.0.1:0' },
    servers: { fs: { command: 'true' } },
    ...extra,
  };
  writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return { home, client };
}

async function waitForPendingId(client: DaemonClient): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const [first] = await client.call<{ id: string }[]>('approvals.list', {});
    if (first !== undefined) return first.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no pending approval appeared');
}

/** `assent approve ID` at a terminal, the shown code typed back; returns its exit code and screen. */
async function approveAtTerminal(home: TempHome, id: string, name: string): Promise<{ exitCode: number; screen: string }> {
  const outFile = join(home.home, `${name}.out`);
  const pty = new PtySession(['approve', id], { outFile, env: { ASSENT_HOME: home.home } });
  ptys.push(pty);
  const match = await pty.waitFor(/Type ([a-z]{4}) to approve/);
  pty.type(`${match[1]}\r`);
  const { exitCode } = await pty.finish(outFile);
  return { exitCode, screen: pty.screen };
}

describe('R-TEAM-3 assent approve under team rules', () => {
  it('R-TEAM-3 policy.quorum {"fs/write_file": 2}: approve at the terminal says "1 of 2, still pending" (exit 0); again says nothing changed; a reviewer token completes it', async () => {
    const { home, client } = await setup({ policy: { tools: { 'fs/write_file': 'prompt' }, quorum: { 'fs/write_file': 2 } } });
    const call = client.call<{ callId: string }>('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/tmp/q' } });
    const id = await waitForPendingId(client);

    const first = await approveAtTerminal(home, id, 'first');
    expect(first.exitCode, first.screen).toBe(0);
    expect(first.screen).toContain('approved  by nobody yet (0 of 2)');
    expect(first.screen).toContain(`Approved ${id} as ${LOCAL}: 1 of 2, still pending.`);
    expect((await client.call<{ state: string }>('approvals.get', { id })).state).toBe('pending');

    const again = await approveAtTerminal(home, id, 'again');
    expect(again.exitCode, again.screen).toBe(0);
    expect(again.screen).toContain(`approved  by ${LOCAL} (1 of 2)`);
    expect(again.screen).toContain(`${LOCAL} approved ${id} already; nothing changed: 1 of 2, still pending.`);

    const token = await createToken(home, 'reviewer');
    const done = await callApi(await webUrl(home), token, 'approvals.decide', { id, behavior: 'allow' });
    expect(done.json).toMatchObject({ state: 'approved', approvedBy: [LOCAL, 'token:reviewer'] });
    const admitted = await call;
    await client.call('calls.finish', { callId: admitted.callId, outcome: 'ok' });
    await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'ok');
  });

  it('R-TEAM-3 approvals.fourEyes: the owner typing the code at its own terminal is refused with exit 77 and reason four_eyes; the approval stays pending', async () => {
    const { home, client } = await setup({ approvals: { fourEyes: true }, policy: { tools: { 'fs/write_file': 'prompt' } } });
    void client.call('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/tmp/own' } }).catch(() => undefined);
    const id = await waitForPendingId(client);
    const own = await approveAtTerminal(home, id, 'own');
    expect(own.exitCode, own.screen).toBe(77);
    expect(own.screen).toContain(`owner     ${LOCAL} (four-eyes: may deny, not approve)`);
    expect(own.screen).toContain(`approval ${id} was not approved (four_eyes): approvals.fourEyes is on`);
    expect(own.screen).toContain('another principal must approve it');
    expect((await client.call<{ state: string }>('approvals.get', { id })).state).toBe('pending');
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'refused');
    expect(line).toMatchObject({ deniedReason: 'four_eyes', decidedBy: LOCAL });
  });
});
