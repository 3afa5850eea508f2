// Issue 21 item 3: the schema migrations, run by the same test on both engines
// (R-J-1, R-TEAM-1): up from an empty database, and up from the schema assent
// shipped at 2a184de (test/fixtures/schema-2a184de: its DDL and one row of each
// kind) with every row kept and still usable. PostgreSQL runs on a real private
// server (test/helpers/postgres.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Journal, JOURNAL_SCHEMA_VERSION } from '../../src/journal/journal.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/journal/postgres/postgresSchema.js';
import { expectedTables, MIGRATIONS, SCHEMA_VERSION } from '../../src/journal/sql/migrations.js';
import { SqliteStore } from '../../src/journal/sqliteStore.js';
import type { Store } from '../../src/journal/store.js';
import { closeStoreServers, HOST_A, openPostgresStore, sharedPostgres, STORE_KINDS, type StoreKind } from '../helpers/stores.js';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/schema-2a184de');
const fixture = (name: string): string => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const clock = { now: () => 2000, monotonic: () => performance.now() };

/** A database of `kind` opened by this assent: empty, or first given the 2a184de schema and rows. */
interface Opened {
  store: Store;
  journal?: Journal;
  schemaVersion(): Promise<number>;
  columns(table: string): Promise<string[]>;
  /** Every table but schema_version, with its columns sorted. */
  tables(): Promise<Map<string, string[]>>;
  close(): Promise<void>;
}

async function openDatabase(kind: StoreKind, from: 'empty' | '2a184de'): Promise<Opened> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-migrate-'));
    const file = path.join(dir, 'journal.db');
    if (from === '2a184de') {
      const legacy = new Database(file);
      legacy.exec(fixture('sqlite-schema.sql'));
      legacy.exec(fixture('sqlite-rows.sql'));
      legacy.close();
      fs.chmodSync(file, 0o600);
    }
    const journal = Journal.open(file, { clock });
    const store = SqliteStore.open(journal, HOST_A);
    const reader = new Database(file, { readonly: true });
    return {
      store,
      journal,
      schemaVersion: async () => reader.prepare<[], { version: number }>('SELECT version FROM schema_version').get()?.version ?? -1,
      columns: async (table) => reader.prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)').all(table).map((row) => row.name).sort(),
      tables: async () => {
        const names = reader.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_version'").all();
        const columnsOf = reader.prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)');
        return new Map(names.map(({ name }) => [name, columnsOf.all(name).map((row) => row.name).sort()]));
      },
      close: async () => {
        reader.close();
        await store.close();
        journal.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const server = await sharedPostgres();
  const url = await server.createDatabase(from === 'empty' ? 'fresh' : 'legacy');
  if (from === '2a184de') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(fixture('postgres-schema.sql'));
    await client.query(fixture('postgres-rows.sql'));
    await client.end();
  }
  const store = await openPostgresStore(url, HOST_A, clock);
  const database = new URL(url).pathname.slice(1);
  return {
    store,
    schemaVersion: async () => (await server.query<{ version: number }>('SELECT version FROM schema_version', [], database))[0]?.version ?? -1,
    columns: async (table) =>
      (await server.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1", [table], database))
        .map((row) => row.column_name)
        .sort(),
    tables: async () => {
      const rows = await server.query<{ table_name: string; column_name: string }>(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_version'",
        [],
        database,
      );
      const tables = new Map<string, string[]>();
      for (const row of rows) tables.set(row.table_name, [...(tables.get(row.table_name) ?? []), row.column_name].sort());
      return tables;
    },
    close: () => store.close(),
  };
}

const CURRENT: Record<StoreKind, number> = { sqlite: JOURNAL_SCHEMA_VERSION, postgres: POSTGRES_SCHEMA_VERSION };
/** Each engine's tables and columns, fresh and upgraded, as the one list says they are. */
const schemas = new Map<string, Map<string, string[]>>();
const sortedExpected = (kind: StoreKind): Map<string, string[]> => new Map([...expectedTables(kind)].map(([table, columns]) => [table, [...columns].sort()]));
/** The proof and effect tables are written once for both engines: the same columns on each, fresh or upgraded. */
const proofColumns = new Map<string, string[]>();

afterAll(closeStoreServers);

describe.each(STORE_KINDS)('migrations on %s', (kind) => {
  it('up from an empty database: the current version, and every table usable', async () => {
    const db = await openDatabase(kind, 'empty');
    try {
      expect(await db.schemaVersion()).toBe(CURRENT[kind]);
      for (const table of ['proofs', 'effects']) proofColumns.set(`${kind} empty ${table}`, await db.columns(table));
      schemas.set(`${kind} empty`, await db.tables());
      await db.store.insertApproval({ id: 'fresh', sessionId: 's', kind: 'tool', argsSha256: 'd', requestedAt: 1, expiresAt: 9e12, caller: {}, handoff: true, state: 'pending' });
      expect((await db.store.getApproval('fresh'))?.handoff).toBe(true);
      await db.store.insertProof(
        {
          id: 'p', hash: 'h', approvalId: 'fresh', principal: 'me', sessionId: 's', actionKind: 'tool', actionDigest: 'dg', revision: 'r',
          decision: 'allow', channel: 'cli', audience: 'mcp', issuedAt: 1, expiresAt: 9e12, state: 'issued',
        },
        { bootId: 'boot-1', at: 300_000 },
      );
      // The monotonic expiry is the embedded journal's alone (proof_monotonic); the team database judges by its server's clock.
      expect(await db.store.proofMonotonicExpiry('h')).toEqual(kind === 'sqlite' ? { bootId: 'boot-1', at: 300_000, wallExpiresAt: 9e12 } : undefined);
      const consumed = await db.store.consume('h', { principal: 'me', audience: 'mcp', actionDigest: 'dg', revision: 'r', now: 5 }, 'e');
      expect(consumed.kind).toBe('consumed');
      expect((await db.store.getProof('p'))?.hostId).toBe(HOST_A);
      expect((await db.store.reconcileIntents(6)).map((effect) => effect.id)).toEqual(['e']);
    } finally {
      await db.close();
    }
  });

  it('up from the schema shipped at 2a184de: every row is kept and still works', async () => {
    const db = await openDatabase(kind, '2a184de');
    try {
      const { store } = db;
      expect(await db.schemaVersion()).toBe(CURRENT[kind]);
      for (const table of ['proofs', 'effects']) proofColumns.set(`${kind} 2a184de ${table}`, await db.columns(table));
      schemas.set(`${kind} 2a184de`, await db.tables());
      expect(store.instanceId).toBe('f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1');

      expect(await store.getApproval('aaaaa')).toMatchObject({ state: 'pending', quorum: 2, owner: 'alice@box', presence: 'passkey', args: { path: '/tmp/x' }, hostId: HOST_A });
      expect(await store.getApproval('bbbbb')).toMatchObject({ state: 'allow', handoff: true, fourEyes: true, decidedBy: 'bob@box', decidedHost: HOST_A, scope: 'call' });
      expect((await store.listApprovals({ state: 'pending' })).map((approval) => approval.id)).toEqual(['aaaaa']);
      expect(await store.listApprovalVotes('aaaaa')).toMatchObject([{ principal: 'bob@box', channel: 'cli', scope: 'call', votedAt: 1500 }]);
      expect(await store.listPendingApprovalVotes()).toHaveLength(1);
      expect(await store.eventsSince(0, 10)).toMatchObject([{ seq: 1, kind: 'approval_filed', ts: 1000, sessionId: 's1', data: { id: 'aaaaa' } }]);
      expect(await store.appendEvent({ kind: 'daemon_started', ts: 2000, data: {} })).toBe(2);
      expect(await store.listRules({ now: 2000 })).toMatchObject([{ id: 'r1', command: 'git status', agent: 'claude-code' }]);
      expect(await store.getToken('t1')).toMatchObject({ name: 'laptop', tokenSha256: 'sha-t1', expiresAt: 9999999999999 });
      expect(await store.listCallsInProgress()).toMatchObject([{ callId: 'c1', approvalId: 'aaaaa', waitedForConsentMs: 5 }]);
      expect(await store.exportCursor('siem')).toBe(7);

      // The issued proof is still consumable, and the consumption records this host.
      expect(await store.getProof('prf1')).toMatchObject({ state: 'issued', approvalId: 'bbbbb' });
      // Issued before the monotonic expiry was kept: judged by its wall time alone.
      expect(await store.proofMonotonicExpiry('hash1')).toBeUndefined();
      const outcome = await store.consume('hash1', { principal: 'alice@box', audience: 'mcp', actionDigest: 'dig1', revision: 'rev1', now: 2000 }, 'eff1');
      expect(outcome.kind).toBe('consumed');
      const replay = await store.consume('hash2', { principal: 'alice@box', audience: 'mcp', actionDigest: 'dig2', revision: 'rev1', now: 2000 }, 'other');
      expect(replay).toMatchObject({ kind: 'replay', effect: { id: 'eff2', state: 'intent' } });
      // The intent a crash left before the upgrade is this host's, and is reconciled with the new one (R-J-5).
      expect((await store.reconcileIntents(3000)).map((effect) => effect.id)).toEqual(['eff2', 'eff1']);
      expect(await store.getEffect('eff2')).toMatchObject({ state: 'uncertain', finishedAt: 3000 });

      if (kind === 'sqlite') {
        expect(db.journal?.listWebDevices(2000).map((device) => device.id)).toEqual(['dev01']);
        expect(db.journal?.listPasskeys()).toMatchObject([{ id: 'pk1', counter: 3, transports: ['usb'] }]);
      } else {
        expect((await store.listHosts()).map((host) => host.name)).toEqual(['box-a', 'box-b']);
        expect(await store.listAuditRows()).toMatchObject([{ hostId: HOST_A, seq: 1 }]);
        expect(await store.lastAuditSeq()).toBe(1);
      }
    } finally {
      await db.close();
    }
  });
});

describe('one schema for proofs and effects', () => {
  it('both engines, fresh or upgraded from 2a184de, have the same proof and effect columns', () => {
    for (const table of ['proofs', 'effects']) {
      const sets = [...proofColumns.entries()].filter(([key]) => key.endsWith(` ${table}`));
      expect(sets).toHaveLength(4);
      for (const [, columns] of sets) expect(columns).toEqual(sets[0]?.[1]);
      expect(sets[0]?.[1]).toContain('host_id');
    }
  });
});

describe('one migration list for both engines', () => {
  it('both engines end at the same version, the length of the one list', () => {
    expect(JOURNAL_SCHEMA_VERSION).toBe(SCHEMA_VERSION);
    expect(POSTGRES_SCHEMA_VERSION).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it('fresh or upgraded, each engine has exactly the tables and columns the list gives it; the tables of both have the same columns but those marked for one engine', () => {
    expect([...schemas.keys()].sort()).toEqual(['postgres 2a184de', 'postgres empty', 'sqlite 2a184de', 'sqlite empty']);
    // The proof and effect tables are compiled DDL (sql/queries.ts), the same on both engines: the test above.
    const described = (tables: Map<string, string[]> | undefined): Map<string, string[]> => new Map([...(tables ?? [])].filter(([table]) => table !== 'proofs' && table !== 'effects'));
    for (const kind of STORE_KINDS) {
      expect(described(schemas.get(`${kind} empty`))).toEqual(sortedExpected(kind));
      expect(described(schemas.get(`${kind} 2a184de`))).toEqual(sortedExpected(kind));
    }
    const sqlite = sortedExpected('sqlite');
    const postgres = sortedExpected('postgres');
    const shared = [...sqlite.keys()].filter((table) => postgres.has(table));
    expect(shared.sort()).toEqual(['approval_votes', 'approvals', 'calls_in_progress', 'events', 'export_cursors', 'rules', 'tokens']);
    const onlyPostgres = new Set(['events.host_id', 'calls_in_progress.host_id']);
    for (const table of shared) {
      expect(postgres.get(table)?.filter((column) => !onlyPostgres.has(`${table}.${column}`))).toEqual(sqlite.get(table));
    }
  });
});
