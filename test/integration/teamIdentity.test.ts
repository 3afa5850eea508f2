// Host identity and principals through a real daemon (SPEC §20, R-TEAM-3):
// identity.json's hostId and `host.name` in `daemon status`, the principal of
// every decision, four-eyes and quorum checked in the deciding transaction.
// The socket client here is the local principal `<os user>@<host.name>` (the
// CLI's); a bearer token named "reviewer" is the other principal, over HTTP.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { auditLines, makeTempHome, type TempHome, waitForAudit } from '../helpers/daemon.js';
import { callApi, createToken, webUrl } from '../helpers/reviewer.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

const USER = userInfo().username;
const LOCAL = `${USER}@team-a`;

async function setup(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

/** A daemon whose fs/write_file prompts, with the web head on a free port; `extra` adds team keys. */
function teamConfig(extra: { approvals?: Record<string, unknown>; quorum?: Record<string, number> } = {}): Record<string, unknown> {
  return {
    host: { name: 'team-a' },
    web: { listen: '127.0.0.1:0' },
    servers: { fs: { command: 'true' } },
    approvals: extra.approvals ?? {},
    policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, ...(extra.quorum === undefined ? {} : { quorum: extra.quorum }) },
  };
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return client;
}

interface Failure {
  type?: string;
  message: string;
  details?: Record<string, unknown>;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: Failure };

function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: Failure) => ({ ok: false as const, error }),
  );
}

interface Admitted {
  callId: string;
  consent?: { channel: string; approvalId?: string };
  effectId?: string;
}

function authorize(client: DaemonClient, args: Record<string, unknown>): Promise<Outcome<Admitted>> {
  return settle(client.call<Admitted>('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args, caller: { name: 'agent' } }));
}

interface View {
  id: string;
  state: string;
  owner?: string;
  hostId?: string;
  fourEyes?: true;
  quorum?: number;
  approvedBy?: string[];
  decidedBy?: string;
  decision?: { result: string; principal: string; approvals: number; required: number };
}

async function waitForPendingId(client: DaemonClient): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const [first] = await client.call<View[]>('approvals.list', {});
    if (first !== undefined) return first.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no pending approval appeared');
}

describe('R-TEAM-3 host identity', () => {
  it('R-TEAM-3 identity.json holds a random hostId (0600), and daemon status shows host.name beside it with the local principal', async () => {
    const home = await setup({ host: { name: 'build-01' } });
    const identity = JSON.parse(readFileSync(home.paths.identity, 'utf8')) as { hostId: string };
    expect(identity.hostId).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(home.paths.identity).mode & 0o777).toBe(0o600);
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { host: unknown } };
    expect(status.data.host).toEqual({ id: identity.hostId, name: 'build-01', principal: `${USER}@build-01` });
    const human = await home.runCli(['daemon', 'status']);
    expect(human.stdout).toContain(`host         build-01 (hostId ${identity.hostId})`);
    expect(human.stdout).toContain(`principal    ${USER}@build-01`);
  });

  it('R-TEAM-3 without host.name the host is labelled with the OS host name', async () => {
    const home = await setup({});
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { host: { name: string; principal: string } } };
    expect(status.data.host.name).toBe(hostname());
    expect(status.data.host.principal).toBe(`${USER}@${hostname()}`);
  });

  it('R-TEAM-3 a decision records its principal and host on the approval, its event and the audit line', async () => {
    const home = await setup(teamConfig());
    const hostId = (JSON.parse(readFileSync(home.paths.identity, 'utf8')) as { hostId: string }).hostId;
    const client = await connect(home);
    const call = authorize(client, { path: '/tmp/a' });
    const id = await waitForPendingId(client);
    // Without four-eyes or a quorum the owner is this host's own and the view leaves it out (SPEC §14 list budget).
    const listed = (await client.call<View[]>('approvals.list', {}))[0];
    expect(listed?.owner).toBeUndefined();
    const decided = await client.call<View>('approvals.decide', { id, behavior: 'allow' });
    expect(decided).toMatchObject({ state: 'approved', decidedBy: LOCAL, decidedHost: hostId, approvedBy: [LOCAL] });
    expect(decided.decision).toEqual({ result: 'resolved', principal: LOCAL, approvals: 1, required: 1 });
    const admitted = await call;
    expect(admitted.ok).toBe(true);
    if (!admitted.ok) return;
    await client.call('calls.finish', { callId: admitted.value.callId, outcome: 'ok' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'ok');
    expect(line).toMatchObject({ principal: LOCAL, decidedBy: LOCAL, approvedBy: [LOCAL], channel: 'cli' });
    const events = await client.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0 });
    expect(events.find((e) => e.kind === 'approval_resolved' && e.data['id'] === id)?.data).toMatchObject({ decidedBy: LOCAL, approvedBy: [LOCAL] });
  });
});

describe('R-TEAM-3 approvals.fourEyes', () => {
  it('R-TEAM-3 the principal that owns the agent session cannot approve its own request (forbidden, four_eyes, audited, still pending); a token named "reviewer" can', async () => {
    const home = await setup(teamConfig({ approvals: { fourEyes: true } }));
    const client = await connect(home);
    const call = authorize(client, { path: '/tmp/four-eyes' });
    const id = await waitForPendingId(client);
    const hostId = (JSON.parse(readFileSync(home.paths.identity, 'utf8')) as { hostId: string }).hostId;
    expect(await client.call<View>('approvals.get', { id })).toMatchObject({ fourEyes: true, owner: LOCAL, hostId });

    const own = await settle(client.call<View>('approvals.decide', { id, behavior: 'allow' }));
    expect(own.ok).toBe(false);
    if (own.ok) return;
    expect(own.error.type).toBe('forbidden');
    expect(own.error.details).toMatchObject({ reason: 'four_eyes', principal: LOCAL, owner: LOCAL });
    expect(own.error.message).toContain('approvals.fourEyes');
    expect(own.error.message).toContain('another principal must approve it');
    expect((await client.call<View>('approvals.get', { id })).state).toBe('pending');
    const refused = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'refused');
    expect(refused).toMatchObject({ deniedReason: 'four_eyes', decidedBy: LOCAL, channel: 'cli', server: 'fs', tool: 'write_file' });

    const url = await webUrl(home);
    const token = await createToken(home, 'reviewer');
    const approved = await callApi(url, token, 'approvals.decide', { id, behavior: 'allow' });
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    expect(approved.json).toMatchObject({ state: 'approved', decidedBy: 'token:reviewer', approvedBy: ['token:reviewer'], channel: 'web' });
    const admitted = await call;
    expect(admitted.ok).toBe(true);
    if (!admitted.ok) return;
    await client.call('calls.finish', { callId: admitted.value.callId, outcome: 'ok' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'ok');
    expect(line).toMatchObject({ principal: LOCAL, decidedBy: 'token:reviewer', approvedBy: ['token:reviewer'] });
  });

  it('R-TEAM-3 under four-eyes the owner may still deny (`assent deny`, exit 0), recorded as decided by the owner', async () => {
    const home = await setup(teamConfig({ approvals: { fourEyes: true } }));
    const client = await connect(home);
    const call = authorize(client, { path: '/tmp/deny-own' });
    const id = await waitForPendingId(client);
    const denied = await home.runCli(['deny', id, '--reason', 'not this one']);
    expect(denied.code, denied.stderr).toBe(0);
    const outcome = await call;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.details).toMatchObject({ reason: 'consent_denied' });
    expect((await client.call<View>('approvals.get', { id })).decidedBy).toBe(LOCAL);
  });
});

describe('R-TEAM-3 policy.quorum', () => {
  it('R-TEAM-3 quorum {"fs/write_file": 2} needs two distinct principals: the first is "1 of 2, still pending", a repeat changes nothing, the second admits the call', async () => {
    const home = await setup(teamConfig({ quorum: { 'fs/write_file': 2 } }));
    const client = await connect(home);
    const call = authorize(client, { path: '/tmp/quorum' });
    const id = await waitForPendingId(client);
    expect((await client.call<View>('approvals.get', { id })).quorum).toBe(2);

    const first = await client.call<View>('approvals.decide', { id, behavior: 'allow' });
    expect(first.state).toBe('pending');
    expect(first.decision).toEqual({ result: 'partial', principal: LOCAL, approvals: 1, required: 2 });
    const pending = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: View[] };
    expect(pending.data[0]).toMatchObject({ id, approvedBy: [LOCAL], quorum: 2 });
    const human = await home.runCli(['pending']);
    expect(human.stdout).toContain(`  approved  by ${LOCAL} (1 of 2)`);

    const repeat = await client.call<View>('approvals.decide', { id, behavior: 'allow', scope: 'session' });
    expect(repeat.decision).toEqual({ result: 'repeat', principal: LOCAL, approvals: 1, required: 2 });
    expect(repeat).toMatchObject({ state: 'pending', approvedBy: [LOCAL] });

    const url = await webUrl(home);
    const token = await createToken(home, 'reviewer');
    const listedOverHttp = await callApi(url, token, 'approvals.list', {});
    expect((listedOverHttp.json as unknown as View[])[0]?.approvedBy).toEqual([LOCAL]);
    const second = await callApi(url, token, 'approvals.decide', { id, behavior: 'allow' });
    expect(second.status, JSON.stringify(second.json)).toBe(200);
    expect(second.json).toMatchObject({
      state: 'approved',
      scope: 'call',
      decidedBy: 'token:reviewer',
      approvedBy: [LOCAL, 'token:reviewer'],
      decision: { result: 'resolved', principal: 'token:reviewer', approvals: 2, required: 2 },
    });
    const admitted = await call;
    expect(admitted.ok).toBe(true);
    if (!admitted.ok) return;
    await client.call('calls.finish', { callId: admitted.value.callId, outcome: 'ok' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'ok');
    expect(line).toMatchObject({ decidedBy: 'token:reviewer', approvedBy: [LOCAL, 'token:reviewer'] });
    const events = await client.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0 });
    expect(events.filter((e) => e.kind === 'approval_voted').map((e) => e.data)).toEqual([
      { id, principal: LOCAL, approvals: 1, required: 2, approvedBy: [LOCAL] },
    ]);
  });

  it('R-TEAM-3 under a quorum one deny denies, whoever sends it, even after an approval', async () => {
    const home = await setup(teamConfig({ quorum: { 'fs/write_file': 2 } }));
    const client = await connect(home);
    const call = authorize(client, { path: '/tmp/quorum-deny' });
    const id = await waitForPendingId(client);
    expect((await client.call<View>('approvals.decide', { id, behavior: 'allow' })).decision?.result).toBe('partial');
    const url = await webUrl(home);
    const token = await createToken(home, 'reviewer');
    const denied = await callApi(url, token, 'approvals.decide', { id, behavior: 'deny', reason: 'no' });
    expect(denied.status).toBe(200);
    expect(denied.json).toMatchObject({ state: 'denied', decidedBy: 'token:reviewer', approvedBy: [LOCAL] });
    const outcome = await call;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.details).toMatchObject({ reason: 'consent_denied' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'consent_denied');
    expect(line).toMatchObject({ decidedBy: 'token:reviewer', approvedBy: [LOCAL] });
    // Decided: nothing more can be recorded.
    const late = await settle(client.call<View>('approvals.decide', { id, behavior: 'allow' }));
    expect(late.ok).toBe(false);
    if (!late.ok) expect(late.error.message).toContain('already denied by token:reviewer');
  });

  it('R-TEAM-3 R-MCP-8 with handoff, the proof is issued only when the quorum is met; the identical retry then runs once', async () => {
    const home = await setup(teamConfig({ approvals: { handoff: true }, quorum: { 'fs/write_file': 2 } }));
    const client = await connect(home);
    const args = { path: '/tmp/handoff-quorum' };
    const filed = await authorize(client, args);
    expect(filed.ok).toBe(false);
    if (filed.ok) return;
    expect(filed.error.details).toMatchObject({ reason: 'approval_pending' });
    const id = filed.error.details?.['approvalId'] as string;

    expect((await client.call<View>('approvals.decide', { id, behavior: 'allow' })).decision?.result).toBe('partial');
    expect(await client.call<unknown[]>('proofs.list', {})).toEqual([]);
    const early = await authorize(client, args);
    expect(early.ok).toBe(false);
    if (!early.ok) expect(early.error.details).toMatchObject({ reason: 'approval_pending', approvalId: id });

    const url = await webUrl(home);
    const token = await createToken(home, 'reviewer');
    expect((await callApi(url, token, 'approvals.decide', { id, behavior: 'allow' })).json).toMatchObject({ state: 'approved' });
    const proofs = await client.call<{ approvalId: string; state: string }[]>('proofs.list', {});
    expect(proofs).toEqual([expect.objectContaining({ approvalId: id, state: 'issued' })]);
    const retry = await authorize(client, args);
    expect(retry.ok).toBe(true);
    if (retry.ok) expect(retry.value.effectId).toBeDefined();
  });

  it('R-TEAM-3 R-J-7 `--export-proof` on a quorum approval that would stay pending records nothing and issues no proof', async () => {
    const home = await setup(teamConfig({ quorum: { 'fs/write_file': 2 } }));
    const client = await connect(home);
    void authorize(client, { path: '/tmp/export' });
    const id = await waitForPendingId(client);
    const issued = await settle(client.call('proofs.issue', { id }));
    expect(issued.ok).toBe(false);
    if (!issued.ok) {
      expect(issued.error.type).toBe('conflict');
      expect(issued.error.message).toContain('needs 2 distinct approvals');
    }
    expect((await client.call<View>('approvals.get', { id })).approvedBy).toBeUndefined();
    expect(await client.call<unknown[]>('proofs.list', {})).toEqual([]);
    expect(auditLines(home).filter((r) => r['approvalId'] === id)).toEqual([]);
  });
});
