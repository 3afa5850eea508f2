// R-TEAM-7 (hardening 19.6) on a real PostgreSQL server: a database URL that
// carries its password the libpq way, as a query parameter, shows it nowhere —
// not in `daemon status` (human or --json), not in daemon.log, not in the
// configuration the daemon hands to gateways.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { startTeam, teamServer } from '../helpers/team.js';

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

// The server trusts local connections, so it ignores these; the driver still reads them.
const QUERY_PASSWORD = 'Query-S3cret-pw';
const ODD_KEY_PASSWORD = 'Cased-S3cret-pw';

describe('R-TEAM-7 a password in the URL query (the libpq form) is masked', () => {
  it('R-TEAM-7 postgresql://…?password=… shows in neither daemon status (human, --json) nor daemon.log nor config.get', async () => {
    const base = await server.createDatabase('query_password');
    const url = `${base}&password=${encodeURIComponent(QUERY_PASSWORD)}&PassWord=${encodeURIComponent(ODD_KEY_PASSWORD)}`;
    const { hosts } = await startTeam(cleanups, server, ['host-q'], { policy: { default: 'allow' } }, { url });
    const [host] = hosts;
    if (host === undefined) throw new Error('no host started');

    const json = await host.home.runCli(['daemon', 'status', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout) as { data: { journal: { kind: string; database?: string; available: boolean } } };
    expect(status.data.journal).toMatchObject({ kind: 'postgres', available: true });
    expect(status.data.journal.database).toContain('password=***');
    const human = await host.home.runCli(['daemon', 'status']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('password=***');

    const client = await host.connect();
    const pinned = await client.call<{ config: { journal: { url?: string } } }>('config.get', {});
    expect(pinned.config.journal.url).toContain('password=***');

    const log = readFileSync(host.home.paths.log, 'utf8');
    expect(log).toContain('using the team database');
    for (const secret of [QUERY_PASSWORD, ODD_KEY_PASSWORD]) {
      for (const [where, text] of [
        ['status --json', json.stdout + json.stderr],
        ['status', human.stdout + human.stderr],
        ['config.get', JSON.stringify(pinned)],
        ['daemon.log', log],
      ] as const) {
        expect(text, `${where} shows ${secret}`).not.toContain(secret);
      }
    }
  }, 60_000);
});
