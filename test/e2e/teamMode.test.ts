// Team mode end to end (R-TEAM-2, R-TEAM-6): two hosts — separate ASSENT_HOMEs,
// each with its own daemon and upstream — on one real PostgreSQL database.
// The upstream's side effect (a written file) proves how often a call ran.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditLines } from '../helpers/daemon.js';
import { connectGateway, type Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { runInTerminal } from '../helpers/pty.js';
import { pendingOn, startTeam, teamServer, type TeamHost } from '../helpers/team.js';
import type { DaemonClient } from '../../src/heads/daemon/rpcClient.js';

const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  server = await teamServer(fileCleanups);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

const PROMPT_WRITES = { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } };

function text(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('R-TEAM-2 one approval queue for two hosts', () => {
  it('an MCP call waiting on host A is listed by `assent pending --json` on host B, approved there with the typed code, and completes on A once', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], PROMPT_WRITES);
    const [a, b] = hosts as [NonNullable<(typeof hosts)[0]>, NonNullable<(typeof hosts)[1]>];
    const { client } = await connectGateway(cleanups, a.home);
    const target = join(a.dir, 'from-a.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'decided on b' } }, undefined, { timeout: 60_000 });

    const [pending] = await pendingOn(b);
    expect(pending).toMatchObject({ tool: 'write_file', args: { path: target, content: 'decided on b' } });
    const [onA] = await pendingOn(a);
    expect(onA?.id).toBe(pending?.id);
    expect(existsSync(target)).toBe(false);

    const approved = await runInTerminal(['approve', pending!.id], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(approved.exitCode, approved.screen).toBe(0);

    const result = await call;
    expect(result.isError, text(result)).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('decided on b');
    await expect.poll(() => auditLines(a.home).filter((l) => l['approvalId'] === pending!.id && l['outcome'] === 'ok').length, { timeout: 5000 }).toBe(1);
    // Resolved: neither host lists it any more, and the database no longer holds its arguments (R-TEAM-6).
    for (const host of hosts) expect(JSON.parse((await host.home.runCli(['pending', '--json'])).stdout).data).toEqual([]);
    const database = await server.query<{ args: string | null; decided_by: string | null }>('SELECT args, decided_by FROM approvals WHERE id = $1', [pending!.id], dbName(a));
    expect(database).toEqual([{ args: null, decided_by: expect.stringContaining('@host-b') }]);
  });
});

/** Files a prompt call through `caller` and resolves with its approval id as soon as the daemon filed it; `call` settles when it is decided. */
async function fileCall(caller: DaemonClient, round: number): Promise<{ id: string; call: Promise<{ ok: boolean; value?: unknown; error?: unknown }> }> {
  const requestKey = `r${round}`;
  let stop: () => void = () => undefined;
  const filed = new Promise<string>((resolve) => {
    stop = caller.onNotification('calls.pending', (params) => {
      const pending = params as { requestKey?: string; approval?: { id?: string } };
      if (pending.requestKey === requestKey && typeof pending.approval?.id === 'string') resolve(pending.approval.id);
    });
  });
  const call = caller
    .call('calls.authorize', { sessionId: 'race', server: 'fs', tool: 'write_file', args: { path: '/x', content: String(round) }, requestKey })
    .then((value) => ({ ok: true, value }), (error: unknown) => ({ ok: false, error }));
  const id = await Promise.race([filed, call.then((outcome) => Promise.reject(new Error(`the call ended before it was filed: ${JSON.stringify(outcome)}`)))]);
  stop();
  return { id, call };
}

describe('R-TEAM-6 two hosts decide one approval at the same moment', () => {
  it('200 times: exactly one decision is recorded, the loser gets conflict naming who decided, and the call follows the winner, once', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], PROMPT_WRITES);
    const [a, b] = hosts as [TeamHost, TeamHost];
    const caller = await a.connect();
    const deciderA = await a.connect();
    const deciderB = await b.connect();
    let allowedCalls = 0;
    for (let round = 0; round < 200; round += 1) {
      const { id, call } = await fileCall(caller, round);
      // Host A allows, host B denies, sent together: whichever lands first is the decision.
      const [onA, onB] = await Promise.allSettled([
        deciderA.call<{ state: string }>('approvals.decide', { id, behavior: 'allow' }),
        deciderB.call<{ state: string }>('approvals.decide', { id, behavior: 'deny', reason: `lost race ${round}` }),
      ]);
      const won = [onA, onB].filter((outcome) => outcome.status === 'fulfilled');
      const lost = [onA, onB].filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      expect(won, `round ${round}`).toHaveLength(1);
      expect(lost[0]?.reason).toMatchObject({ type: 'conflict', message: expect.stringMatching(/was already (approved|denied) by \S+@host-[ab]/) });
      const outcome = await call;
      const allowWon = onA.status === 'fulfilled';
      expect(outcome.ok, `round ${round}`).toBe(allowWon);
      if (outcome.ok) {
        allowedCalls += 1;
        await caller.call('calls.finish', { callId: (outcome.value as { callId: string }).callId, outcome: 'ok' });
      } else {
        expect(outcome.error).toMatchObject({ type: 'policy_denied', details: { reason: 'consent_denied' } });
      }
      const stored = await server.query<{ state: string }>('SELECT state FROM approvals WHERE id = $1', [id], dbName(a));
      expect(stored).toEqual([{ state: allowWon ? 'approved' : 'denied' }]);
    }
    // Each allowed call was let through once, and audited once on the host that ran it.
    await expect.poll(() => auditLines(a.home).filter((line) => line['outcome'] === 'ok').length, { timeout: 10_000 }).toBe(allowedCalls);
    expect(auditLines(b.home).filter((line) => line['outcome'] === 'ok')).toEqual([]);
  });

  it('`assent deny` on host B after host A approved exits 65 and says who decided', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], PROMPT_WRITES);
    const [a, b] = hosts as [TeamHost, TeamHost];
    const { id, call } = await fileCall(await a.connect(), 0);
    await (await a.connect()).call('approvals.decide', { id, behavior: 'allow' });
    expect((await call).ok).toBe(true);
    const late = await b.home.runCli(['deny', id]);
    expect(late.code).toBe(65);
    expect(late.stderr).toMatch(new RegExp(`approval ${id} was already approved by \\S+@host-a`));
  });
});

describe('R-TEAM-3 four-eyes and quorum across two hosts on one database', () => {
  it('approvals.fourEyes: the owning host\u2019s principal cannot approve its own agent\u2019s request (four_eyes, exit 77, audited, still pending); the other host\u2019s can', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], { ...PROMPT_WRITES, approvals: { fourEyes: true } });
    const [a, b] = hosts as [TeamHost, TeamHost];
    const { id, call } = await fileCall(await a.connect(), 0);
    const own = await (await a.connect()).call('approvals.decide', { id, behavior: 'allow' }).catch((error: unknown) => error);
    expect(own).toMatchObject({ type: 'forbidden', details: { reason: 'four_eyes' } });
    await expect.poll(() => auditLines(a.home).some((line) => line['deniedReason'] === 'four_eyes' && line['approvalId'] === id), { timeout: 5000 }).toBe(true);
    expect((await pendingOn(b)).map((item) => item.id)).toContain(id);
    const approved = await (await b.connect()).call<{ state: string; decidedBy: string }>('approvals.decide', { id, behavior: 'allow' });
    expect(approved).toMatchObject({ state: 'approved', decidedBy: expect.stringMatching(/@host-b$/) });
    expect((await call).ok).toBe(true);
  });

  it('policy.quorum fs/write_file 2: one host\u2019s approval is 1 of 2 (a repeat changes nothing), the other host\u2019s meets it; a deny on either denies', async () => {
    const quorum = { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, quorum: { 'fs/write_file': 2 } } };
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], quorum);
    const [a, b] = hosts as [TeamHost, TeamHost];
    const onA = await a.connect();
    const onB = await b.connect();
    const first = await fileCall(onA, 0);
    const partial = await onA.call<{ state: string; decision: { result: string; approvals: number; required: number } }>('approvals.decide', { id: first.id, behavior: 'allow' });
    expect(partial).toMatchObject({ state: 'pending', decision: { result: 'partial', approvals: 1, required: 2 } });
    const repeat = await onA.call<{ decision: { result: string } }>('approvals.decide', { id: first.id, behavior: 'allow' });
    expect(repeat.decision.result).toBe('repeat');
    // Host B lists it with who has approved so far.
    await expect.poll(async () => (await pendingOn(b)).find((item) => item.id === first.id), { timeout: 5000 }).toMatchObject({ approvedBy: [expect.stringMatching(/@host-a$/)] });
    const met = await onB.call<{ state: string; decision: { result: string } }>('approvals.decide', { id: first.id, behavior: 'allow' });
    expect(met).toMatchObject({ state: 'approved', decision: { result: 'resolved' } });
    expect((await first.call).ok).toBe(true);

    const second = await fileCall(onA, 1);
    await onA.call('approvals.decide', { id: second.id, behavior: 'allow' });
    await onB.call('approvals.decide', { id: second.id, behavior: 'deny' });
    expect(await second.call).toMatchObject({ ok: false, error: { type: 'policy_denied' } });
  });
});

function dbName(host: { home: { paths: { config: string } } }): string {
  const config = JSON.parse(readFileSync(host.home.paths.config, 'utf8')) as { journal: { url: string } };
  return new URL(config.journal.url).pathname.slice(1);
}
