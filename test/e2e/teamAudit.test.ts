// R-TEAM-4 on a real PostgreSQL server: each host keeps its own hash-chained
// audit file, and every line is also a row of the shared `audit` table with its
// hostId; `assent audit --all-hosts` reads them all and `assent audit verify
// --all-hosts` recomputes each host's chain from the rows.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditLines } from '../helpers/daemon.js';
import type { Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { startTeam, teamServer, type TeamHost } from '../helpers/team.js';

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

/** Runs `count` allowed calls through the host's daemon, each finished: one audit line each. */
async function allowedCalls(host: TeamHost, count: number): Promise<void> {
  const client = await host.connect();
  for (let i = 0; i < count; i += 1) {
    const admitted = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's', server: 'fs', tool: 'read_file', args: { path: `/x/${i}` }, annotations: { readOnlyHint: true } });
    await client.call('calls.finish', { callId: admitted.callId, outcome: 'ok', durationMs: 1 });
  }
}

function dbName(host: TeamHost): string {
  const config = JSON.parse(readFileSync(host.home.paths.config, 'utf8')) as { journal: { url: string } };
  return new URL(config.journal.url).pathname.slice(1);
}

async function hostIdOf(host: TeamHost): Promise<string> {
  return (JSON.parse((await host.home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { host: { id: string } } }).data.host.id;
}

async function rowsOf(host: TeamHost, hostId: string): Promise<{ seq: number; line: string }[]> {
  return server.query<{ seq: number; line: string }>('SELECT seq::int AS seq, line FROM audit WHERE host_id = $1 ORDER BY seq', [hostId], dbName(host));
}

describe('R-TEAM-4 audit across hosts', () => {
  it('every line of each host\u2019s file is a row with its hostId; `audit` shows this host, `--all-hosts` every host; verify --all-hosts is intact, then names the first broken link (exit 65)', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], { policy: { default: 'allow' } });
    const [a, b] = hosts as [TeamHost, TeamHost];
    await allowedCalls(a, 3);
    await allowedCalls(b, 4);
    const idA = await hostIdOf(a);
    const idB = await hostIdOf(b);
    await expect.poll(async () => (await rowsOf(a, idA)).length, { timeout: 10_000 }).toBe(auditLines(a.home).length);
    await expect.poll(async () => (await rowsOf(b, idB)).length, { timeout: 10_000 }).toBe(auditLines(b.home).length);
    // The rows hold the exact lines of each file.
    const fileA = readFileSync(`${a.home.paths.auditDir}/${new Date().toISOString().slice(0, 10)}.jsonl`, 'utf8').trim().split('\n');
    expect((await rowsOf(a, idA)).map((row) => row.line)).toEqual(fileA);

    const own = JSON.parse((await a.home.runCli(['audit', '--json'])).stdout) as { data: Record<string, unknown>[] };
    expect(own.data.filter((r) => r['outcome'] === 'ok')).toHaveLength(3);
    expect(own.data.every((r) => r['hostId'] === undefined)).toBe(true);
    const all = JSON.parse((await b.home.runCli(['audit', '--all-hosts', '--json'])).stdout) as { data: Record<string, unknown>[] };
    const okByHost = (name: string): number => all.data.filter((r) => r['outcome'] === 'ok' && r['hostName'] === name).length;
    expect([okByHost('host-a'), okByHost('host-b')]).toEqual([3, 4]);
    expect(all.data.find((r) => r['hostName'] === 'host-a')?.['hostId']).toBe(idA);
    expect(JSON.stringify(all.data)).not.toContain('/x/');

    const intact = await b.home.runCli(['audit', 'verify', '--all-hosts']);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toContain(`host-a (${idA}): intact, ${fileA.length} lines.`);
    expect(intact.stdout).toContain(`host-b (${idB}): intact`);

    // Someone edits host A's second row in the database: its digest no longer matches the prev of the third.
    await server.query(`UPDATE audit SET line = replace(line, '"outcome":"ok"', '"outcome":"error"') WHERE host_id = $1 AND seq = 2`, [idA], dbName(a));
    const edited = await b.home.runCli(['audit', 'verify', '--all-hosts']);
    expect(edited.code).toBe(65);
    expect(edited.stderr).toContain(`audit chain of host-a (${idA}) broken at seq 2`);
    expect(edited.stderr).toContain('changed after it was written');
    const asJson = JSON.parse((await a.home.runCli(['audit', 'verify', '--all-hosts', '--json'])).stdout) as { ok: boolean; error: { details: { hosts: { hostId: string; ok: boolean; firstBroken?: { seq: number } }[] } } };
    expect(asJson.ok).toBe(false);
    expect(asJson.error.details.hosts.find((host) => host.hostId === idA)).toMatchObject({ ok: false, firstBroken: { seq: 2 } });
    expect(asJson.error.details.hosts.find((host) => host.hostId === idB)?.ok).toBe(true);
    // The host's own file is untouched and still verifies.
    expect((await a.home.runCli(['audit', 'verify'])).code).toBe(0);

    // A removed row is a gap, in the middle as at the start.
    const brokenOfB = async (): Promise<{ seq: number; reason: string } | undefined> => {
      const gap = await a.home.runCli(['audit', 'verify', '--all-hosts', '--json']);
      const details = (JSON.parse(gap.stdout) as { error: { details: { hosts: { hostId: string; firstBroken?: { seq: number; reason: string } }[] } } }).error.details;
      return details.hosts.find((host) => host.hostId === idB)?.firstBroken;
    };
    await server.query('DELETE FROM audit WHERE host_id = $1 AND seq = 2', [idB], dbName(b));
    expect(await brokenOfB()).toMatchObject({ seq: 3, reason: expect.stringContaining('missing') });
    await server.query('DELETE FROM audit WHERE host_id = $1 AND seq = 1', [idB], dbName(b));
    expect(await brokenOfB()).toMatchObject({ seq: 3, reason: expect.stringContaining('seq 1 to 2 are missing') });
  }, 90_000);

  it('lines written while the database is away are copied once it is back', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a'], { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } });
    const [a] = hosts as [TeamHost];
    const idA = await hostIdOf(a);
    const client = await a.connect();
    await server.stop();
    await expect.poll(async () => (JSON.parse((await a.home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { journal: { available: boolean } } }).data.journal.available, { timeout: 10_000 }).toBe(false);
    const refused = await client.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/y' } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: 'policy_denied', details: { reason: 'unavailable' } });
    await expect.poll(() => auditLines(a.home).some((line) => line['deniedReason'] === 'unavailable'), { timeout: 5000 }).toBe(true);
    await server.start();
    await expect.poll(async () => (await rowsOf(a, idA)).some((row) => row.line.includes('"deniedReason":"unavailable"')), { timeout: 15_000 }).toBe(true);
    expect((await rowsOf(a, idA)).length).toBe(auditLines(a.home).length);
  }, 60_000);
});
