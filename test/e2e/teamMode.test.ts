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
import { pendingOn, startTeam, teamServer } from '../helpers/team.js';

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

function dbName(host: { home: { paths: { config: string } } }): string {
  const config = JSON.parse(readFileSync(host.home.paths.config, 'utf8')) as { journal: { url: string } };
  return new URL(config.journal.url).pathname.slice(1);
}
