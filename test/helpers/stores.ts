// The journal-level tests run against both stores (R-TEAM-1): the embedded
// SQLite journal in a temp dir, and a PostgreSQL database on a real private
// server (test/helpers/postgres.ts), one fresh database per fixture.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Clock } from '../../src/core/base/clock.js';
import { Journal } from '../../src/journal/journal.js';
import { resolveDatabaseUrl } from '../../src/journal/postgres/databaseUrl.js';
import { PostgresStore } from '../../src/journal/postgres/postgresStore.js';
import { SqliteStore } from '../../src/journal/sqliteStore.js';
import type { ApprovalRecord } from '../../src/journal/journalRecords.js';
import type { Store } from '../../src/journal/store.js';
import { startPostgres, type PostgresServer } from './postgres.js';

/** A pending tool approval for the store tests; `overrides` sets any field. */
export function sampleApproval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'abcde',
    sessionId: 's1',
    kind: 'tool',
    server: 'fs',
    tool: 'write_file',
    args: { path: '/srv/data/a', content: 'x', n: 1 },
    argsSha256: 'v1:sha256:00',
    requestedAt: 1000,
    expiresAt: 91_000,
    caller: { pid: 1 },
    handoff: false,
    state: 'pending',
    ...overrides,
  };
}

export type StoreKind = 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres'];

export interface StoreFixture {
  kind: StoreKind;
  store: Store;
  /** Another connection to the same store, as another process or host (`hostId`) would open it. */
  openAnother(hostId?: string): Promise<Store>;
  /** Everything the store keeps, as text, to check that a secret is not in it. */
  dump(): Promise<string>;
  close(): Promise<void>;
}

export const HOST_A = 'a'.repeat(32);
export const HOST_B = 'b'.repeat(32);

let server: Promise<PostgresServer> | undefined;

/** The test file's one private PostgreSQL server, started on first use. */
export function sharedPostgres(): Promise<PostgresServer> {
  server ??= startPostgres();
  return server;
}

/** Opens a PostgreSQL store on `url` as host `hostId`. */
export function openPostgresStore(url: string, hostId: string, clock?: Clock): Promise<PostgresStore> {
  return PostgresStore.open({ database: resolveDatabaseUrl({ kind: 'postgres', url }), hostId, ...(clock === undefined ? {} : { now: () => clock.now(), teamClock: () => clock.now() }) });
}

export async function openStoreFixture(kind: StoreKind, clock: Clock): Promise<StoreFixture> {
  if (kind === 'postgres') return openPostgresFixture(clock);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-store-'));
  const file = path.join(tmp, 'journal.db');
  const journals: Journal[] = [];
  const stores: Store[] = [];
  const open = (hostId: string): Store => {
    const journal = Journal.open(file, { clock });
    journals.push(journal);
    const store = SqliteStore.open(journal, hostId);
    stores.push(store);
    return store;
  };
  const store = open(HOST_A);
  return {
    kind,
    store,
    openAnother: async (hostId = HOST_A) => open(hostId),
    dump: async () => {
      const parts = [file, `${file}-wal`].filter((name) => fs.existsSync(name)).map((name) => fs.readFileSync(name));
      return Buffer.concat(parts).toString('latin1');
    },
    close: async () => {
      for (const each of stores) await each.close();
      for (const journal of journals) journal.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

async function openPostgresFixture(clock: Clock): Promise<StoreFixture> {
  const pgServer = await sharedPostgres();
  const url = await pgServer.createDatabase('store');
  const stores: Store[] = [];
  const open = async (hostId: string): Promise<Store> => {
    const store = await openPostgresStore(url, hostId, clock);
    stores.push(store);
    return store;
  };
  const store = await open(HOST_A);
  const database = new URL(url).pathname.slice(1);
  return {
    kind: 'postgres',
    store,
    openAnother: (hostId = HOST_A) => open(hostId),
    dump: async () => {
      const tables = await pgServer.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", [], database);
      const parts: string[] = [];
      for (const { tablename } of tables) {
        const rows = await pgServer.query(`SELECT row_to_json(t)::text AS row FROM ${tablename} t`, [], database);
        parts.push(...rows.map((row) => String(row['row'])));
      }
      return parts.join('\n');
    },
    close: async () => {
      for (const each of stores) await each.close();
    },
  };
}

/** Stops what the fixtures started for this test file (the PostgreSQL server); for afterAll. */
export async function closeStoreServers(): Promise<void> {
  const started = server;
  server = undefined;
  if (started !== undefined) await (await started).remove();
}
