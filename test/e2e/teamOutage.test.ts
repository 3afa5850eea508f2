// R-TEAM-7 and R-TEAM-6 on a real PostgreSQL server: the database stops while a
// call waits (new prompt calls fail closed, the waiting one is decided once it is
// back), and a daemon is killed mid-effect (the effect ends uncertain in the
// shared journal and no retry on either host runs it again).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { connectGateway, type Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { runInTerminal } from '../helpers/pty.js';
import { pendingOn, startTeam, teamServer, type TeamHost } from '../helpers/team.js';

const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  server = await teamServer(fileCleanups);
});
afterEach(async () => {
  await server.start();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

const PASSWORD = 'Outage-S3cret-pw';

function text(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
}

async function status(host: TeamHost): Promise<{ journal: { available: boolean; database?: string } } & Record<string, unknown>> {
  const result = await host.home.runCli(['daemon', 'status', '--json']);
  return (JSON.parse(result.stdout) as { data: { journal: { available: boolean } } & Record<string, unknown> }).data;
}

async function hostIdOf(host: TeamHost): Promise<string> {
  return ((await status(host))['host'] as { id: string }).id;
}

describe('R-TEAM-7 the team database goes away while a call waits', () => {
  it('new prompt calls fail closed with `unavailable` within 5 s and nothing runs; after it returns the daemons reconnect and the waiting call is decided normally; the password shows nowhere', async () => {
    const { url } = { url: await server.createDatabase('outage') };
    const withPassword = new URL(url);
    withPassword.password = PASSWORD;
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } }, { url: withPassword.toString() });
    const [a, b] = hosts as [TeamHost, TeamHost];
    const { client } = await connectGateway(cleanups, a.home);
    const waitingTarget = join(a.dir, 'waited.txt');
    const waiting = client.callTool({ name: 'write_file', arguments: { path: waitingTarget, content: 'survived the outage' } }, undefined, { timeout: 120_000 });
    const [pending] = await pendingOn(b);

    await server.stop();
    await expect.poll(async () => (await status(a)).journal.available, { timeout: 10_000 }).toBe(false);

    // A new prompt call on either host fails closed, fast, and the upstream never sees it.
    const refusedTarget = join(a.dir, 'refused.txt');
    const started = performance.now();
    const refused = await client.callTool({ name: 'write_file', arguments: { path: refusedTarget, content: 'never' } }, undefined, { timeout: 30_000 });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('unavailable');
    expect(text(refused)).toContain('team database');
    expect(existsSync(refusedTarget)).toBe(false);
    const { client: onB } = await connectGateway(cleanups, b.home);
    const refusedOnB = await onB.callTool({ name: 'write_file', arguments: { path: join(b.dir, 'refused.txt'), content: 'never' } }, undefined, { timeout: 30_000 });
    expect(text(refusedOnB)).toContain('unavailable');
    expect(existsSync(join(b.dir, 'refused.txt'))).toBe(false);
    // Deciding needs the database too: refused, nothing changes.
    const early = await b.home.runCli(['deny', pending!.id]);
    expect(early.code).toBe(69);
    expect(early.stderr + early.stdout).not.toContain(PASSWORD);

    await server.start();
    for (const host of hosts) await expect.poll(async () => (await status(host)).journal.available, { timeout: 15_000 }).toBe(true);
    expect((await pendingOn(b)).map((item) => item.id)).toContain(pending!.id);
    const approved = await runInTerminal(['approve', pending!.id], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(approved.exitCode, approved.screen).toBe(0);
    const result = await waiting;
    expect(result.isError, text(result)).toBeFalsy();
    expect(readFileSync(waitingTarget, 'utf8')).toBe('survived the outage');

    // R-TEAM-7: never in a log, the status, or what a refusal said.
    for (const host of hosts) {
      expect(readFileSync(host.home.paths.log, 'utf8')).not.toContain(PASSWORD);
      const shown = JSON.stringify(await status(host));
      expect(shown).not.toContain(PASSWORD);
      expect(shown).toContain('***');
    }
    expect(text(refused) + text(refusedOnB)).not.toContain(PASSWORD);
  }, 120_000);

  it('a call whose deadline passes during the outage ends as consent_timeout; nothing runs', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], { policy: { default: 'allow', consentTimeoutSeconds: 3, tools: { 'fs/write_file': 'prompt' } } });
    const [a, b] = hosts as [TeamHost, TeamHost];
    const { client } = await connectGateway(cleanups, a.home);
    const target = join(a.dir, 'late.txt');
    const waiting = client.callTool({ name: 'write_file', arguments: { path: target, content: 'too late' } }, undefined, { timeout: 60_000 });
    const [pending] = await pendingOn(b);
    await server.stop();
    const result = await waiting;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('consent_timeout');
    await server.start();
    for (const host of hosts) await expect.poll(async () => (await status(host)).journal.available, { timeout: 15_000 }).toBe(true);
    // Once the database is back the approval is expired there too, and cannot be approved any more.
    await expect.poll(async () => (await server.query<{ state: string }>('SELECT state FROM approvals WHERE id = $1', [pending!.id], dbName(a)))[0]?.state, { timeout: 10_000 }).toBe('expired');
    expect((await b.home.runCli(['deny', pending!.id])).code).toBe(65);
    expect(existsSync(target)).toBe(false);
  }, 90_000);
});

describe('R-J-5 R-TEAM-6 kill -9 of a daemon mid-effect', () => {
  /** Handoff: files the approval on A, approves it on B, and lets A's retry start the effect (its intent recorded, never finished). */
  async function startEffect(a: TeamHost, b: TeamHost, content: string): Promise<{ args: Record<string, unknown>; effectId: string; retryOnA: DaemonClient }> {
    const args = { path: join(a.dir, 'effect.txt'), content };
    const filer = await a.connect();
    const refusal = (await filer.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args }).catch((error: unknown) => error)) as { details?: { approvalId?: string } };
    const approvalId = refusal.details?.approvalId;
    expect(approvalId).toMatch(/^[a-z]{5}$/);
    await (await b.connect()).call('approvals.decide', { id: approvalId, behavior: 'allow' });
    const retryOnA = await a.connect();
    const admitted = await retryOnA.call<{ effectId?: string }>('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args });
    expect(admitted.effectId).toMatch(/.+/);
    return { args, effectId: admitted.effectId ?? '', retryOnA };
  }

  async function effectState(host: TeamHost, id: string): Promise<string> {
    return (JSON.parse((await host.home.runCli(['effects', 'show', id, '--json'])).stdout) as { data: { state: string } }).data.state;
  }

  async function retry(host: TeamHost, args: Record<string, unknown>): Promise<{ replay?: { state: string } }> {
    return (await host.connect()).call('calls.authorize', { sessionId: 'again', server: 'fs', tool: 'write_file', args });
  }

  const HANDOFF = { approvals: { handoff: true }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } };

  it('the restarted daemon marks its own open intent uncertain, not the other host\u2019s; no retry on either host runs it again', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], HANDOFF);
    const [a, b] = hosts as [TeamHost, TeamHost];
    const onA = await startEffect(a, b, 'mid-effect on a');
    const onB = await startEffect(b, a, 'mid-effect on b');
    expect(await effectState(b, onA.effectId)).toBe('intent');

    process.kill(Number(readFileSync(a.home.paths.pid, 'utf8').trim()), 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await a.home.startDaemon();

    expect(await effectState(b, onA.effectId)).toBe('uncertain');
    // Host B's own effect may still be running: A's start leaves it alone.
    expect(await effectState(a, onB.effectId)).toBe('intent');
    for (const host of hosts) expect(await retry(host, onA.args)).toMatchObject({ replay: { state: 'uncertain' } });
    expect(existsSync(onA.args['path'] as string)).toBe(false);
  }, 90_000);

  it('`assent effects reconcile --host ID` on another host (typed code) marks a host that will not come back; its own host id and an unknown one are refused', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], HANDOFF);
    const [a, b] = hosts as [TeamHost, TeamHost];
    const hostA = await hostIdOf(a);
    const hostB = await hostIdOf(b);
    const onA = await startEffect(a, b, 'host a never returns');
    process.kill(Number(readFileSync(a.home.paths.pid, 'utf8').trim()), 'SIGKILL');

    const own = await runInTerminal(['effects', 'reconcile', '--host', hostB], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(own.exitCode).toBe(65);
    expect(own.screen).toContain('is this host');
    const unknown = await runInTerminal(['effects', 'reconcile', '--host', 'f'.repeat(32)], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(unknown.exitCode).toBe(65);
    expect(unknown.screen).toContain(hostA);
    const notATerminal = await b.home.runCli(['effects', 'reconcile', '--host', hostA]);
    expect(notATerminal.code).toBe(77);
    expect(await effectState(b, onA.effectId)).toBe('intent');

    const done = await runInTerminal(['effects', 'reconcile', '--host', hostA, '--json'], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(done.exitCode, done.screen).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ ok: true, data: { hostId: hostA, hostName: 'host-a', effects: [{ id: onA.effectId, state: 'uncertain' }] } });
    expect(await effectState(b, onA.effectId)).toBe('uncertain');
    expect(await retry(b, onA.args)).toMatchObject({ replay: { state: 'uncertain' } });
  }, 90_000);
});

function dbName(host: { home: { paths: { config: string } } }): string {
  const config = JSON.parse(readFileSync(host.home.paths.config, 'utf8')) as { journal: { url: string } };
  return new URL(config.journal.url).pathname.slice(1);
}
