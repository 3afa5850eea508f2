// The one migration list of both engines (R-J-1, R-TEAM-1): each step's tables,
// columns and indexes written once as data and rendered per engine here, with
// the few types that truly differ mapped in TYPES. A step, a column or an index
// marked `only` exists on that engine alone (web devices and passkeys are the
// embedded daemon's; hosts, the audit mirror and the event push are the team
// database's). The version of a schema is the number of steps applied, the same
// number on both engines. Each engine's runner (journalSchema.ts, postgres/
// postgresSchema.ts) applies the steps it lacks; never edit a shipped step,
// append a new one. Nothing here loads kysely: the proof tables come compiled.
import type { Engine } from './prepared.js';
import { COMPILED } from './compiled.js';

/** Column kinds: `time` is epoch milliseconds; `flag` a boolean; `seq` an ascending row number that is the key. */
type Kind = 'text' | 'int' | 'time' | 'flag' | 'seq';

const TYPES: Record<Engine, Record<Kind, string>> = {
  sqlite: { text: 'TEXT', int: 'INTEGER', time: 'INTEGER', flag: 'INTEGER', seq: 'INTEGER PRIMARY KEY AUTOINCREMENT' },
  postgres: { text: 'TEXT', int: 'INTEGER', time: 'BIGINT', flag: 'BOOLEAN', seq: 'BIGSERIAL PRIMARY KEY' },
};
const FLAG: Record<Engine, Record<'true' | 'false', string>> = { sqlite: { true: '1', false: '0' }, postgres: { true: 'true', false: 'false' } };

interface Column {
  name: string;
  kind: Kind;
  /** NOT NULL; 'postgres' where only the team database requires it (rows an older journal wrote may lack it). */
  notNull?: boolean | Engine;
  unique?: boolean;
  /** A text default is quoted; a flag's is true or false; an int's a number. */
  default?: string | number | boolean;
  only?: Engine;
}

type Op =
  /** A table; `key` is its primary key, its columns absent on an engine left out there. */
  | { table: string; columns: Column[]; key?: string[]; only?: Engine }
  | { addColumn: Column; to: string }
  | { index: string; on: string; columns: string[]; only?: Engine }
  /** What no description covers (a generated id, a trigger), written for the engines that have it. */
  | { sql: Partial<Record<Engine, string>> };

interface Step {
  /** Why the step exists, as its comment in the schema's history. */
  why: string;
  only?: Engine;
  ops: Op[];
}

const text = (name: string, more: Omit<Column, 'name' | 'kind'> = {}): Column => ({ name, kind: 'text', ...more });
const int = (name: string, more: Omit<Column, 'name' | 'kind'> = {}): Column => ({ name, kind: 'int', ...more });
const time = (name: string, more: Omit<Column, 'name' | 'kind'> = {}): Column => ({ name, kind: 'time', ...more });
const flag = (name: string, more: Omit<Column, 'name' | 'kind'> = {}): Column => ({ name, kind: 'flag', ...more });
const req = { notNull: true } as const;

const PROOF_DDL = COMPILED.proofTables.postgres;

/** The list; step n brings a schema from version n - 1 to n. */
export const MIGRATIONS: readonly Step[] = [
  {
    why: 'approvals, the event log and the rules',
    ops: [
      {
        table: 'approvals',
        key: ['id'],
        columns: [
          text('id'), text('session_id', req), text('kind', req), text('server'), text('tool'), text('args'), text('action'),
          text('args_sha256', req), time('requested_at', req), time('expires_at', req), text('caller', req), flag('handoff', req),
          text('state', req), text('channel'), text('reason'), text('scope'), time('decided_at'),
        ],
      },
      { index: 'approvals_by_state', on: 'approvals', columns: ['state', 'requested_at', 'id'] },
      {
        table: 'events',
        columns: [{ name: 'seq', kind: 'seq' }, text('host_id', { notNull: true, only: 'postgres' }), text('kind', req), time('ts', req), text('session_id'), text('data', req)],
      },
      {
        table: 'rules',
        key: ['id'],
        columns: [text('id'), int('version', req), text('tool', req), text('args', req), time('created_at', req), time('expires_at'), time('revoked_at')],
      },
      { index: 'rules_by_tool', on: 'rules', columns: ['tool'], only: 'sqlite' },
    ],
  },
  {
    why: 'the daemon instance id, and the bearer tokens',
    ops: [
      { table: 'daemon_meta', key: ['key'], columns: [text('key'), text('value', req)], only: 'sqlite' },
      { sql: { sqlite: "INSERT INTO daemon_meta (key, value) VALUES ('instance_id', lower(hex(randomblob(16))))" } },
      {
        table: 'tokens',
        key: ['id'],
        columns: [text('id'), text('name', req), text('token_sha256', { notNull: true, unique: true }), text('audience', req), time('created_at', req), time('expires_at', req), time('revoked_at')],
      },
    ],
  },
  {
    why: 'calls admitted and not seen finish (R-J-5 for calls): a restart audits each as uncertain; per host in a team',
    ops: [
      {
        table: 'calls_in_progress',
        key: ['host_id', 'call_id'],
        columns: [
          text('host_id', { notNull: true, only: 'postgres' }), text('call_id'), text('session_id', req), text('server', req), text('tool', req),
          text('args_sha256', req), text('caller', req), text('channel'), text('approval_id'), text('rule_id'), time('waited_ms', req), time('authorized_at', req),
        ],
      },
    ],
  },
  {
    why: 'remembered web devices (R-REM-3), kept as the SHA-256 of the cookie only; the embedded daemon alone serves the web page',
    only: 'sqlite',
    ops: [
      {
        table: 'web_devices',
        key: ['id'],
        columns: [text('id'), text('cookie_sha256', { notNull: true, unique: true }), text('name', req), text('user_agent', req), time('paired_at', req), time('last_seen_at', req), time('expires_at', req), time('revoked_at')],
      },
    ],
  },
  {
    why: 'team identity (R-TEAM-3): owner, filing host, four-eyes and quorum, who resolved and where; one vote per approving principal',
    ops: [
      { addColumn: text('owner'), to: 'approvals' },
      { addColumn: text('host_id', { notNull: 'postgres' }), to: 'approvals' },
      { addColumn: flag('four_eyes', { notNull: true, default: false }), to: 'approvals' },
      { addColumn: int('quorum', { notNull: true, default: 1 }), to: 'approvals' },
      { addColumn: text('decided_by'), to: 'approvals' },
      { addColumn: text('decided_host'), to: 'approvals' },
      {
        table: 'approval_votes',
        key: ['approval_id', 'principal'],
        columns: [text('approval_id', req), text('principal', req), text('host_id'), text('channel', req), text('scope', req), time('voted_at', req)],
      },
    ],
  },
  {
    why: 'passkeys for passkey-confirmed approvals (R-REM-6): the public key and counter, never a secret; enrolled through the embedded web page',
    only: 'sqlite',
    ops: [
      {
        table: 'passkeys',
        key: ['id'],
        columns: [
          text('id'), text('credential_id', { notNull: true, unique: true }), text('public_key', req), int('counter', req), text('transports', req),
          text('enrolled_by', req), text('rp_id', req), time('created_at', req), time('last_used_at'),
        ],
      },
    ],
  },
  {
    why: "rules for the parts of agent actions (R-POL-6): form is tool, command, path or url; tool is '' for the other forms",
    ops: [
      { addColumn: text('form', { notNull: true, default: 'tool' }), to: 'rules' },
      { addColumn: text('pattern'), to: 'rules' },
      { addColumn: text('access'), to: 'rules' },
      { addColumn: text('agent'), to: 'rules' },
    ],
  },
  {
    why: 'the passkey requirement an approval was filed under (R-REM-6), judged from the row, never the configuration in force; NULL: none or not recorded',
    ops: [{ addColumn: text('presence'), to: 'approvals' }],
  },
  {
    why: 'export sinks’ cursors (R-AUD-5), per sink and host: delivery resumes there after a restart',
    ops: [{ table: 'export_cursors', key: ['sink', 'host_id'], columns: [text('sink', req), text('host_id', req), time('seq', req), time('updated_at', req)] }],
  },
  {
    // Idempotent, because a team database from before the one list already holds all of it (postgresSchema.ts).
    why: 'what a team shares beyond the embedded schema: its instance id, hosts, the audit mirror, proofs and effects, the push of every event (LISTEN/NOTIFY, R-TEAM-2); the embedded journal creates the same proof tables when its proof store opens (proofs.ts)',
    only: 'postgres',
    ops: [
      { table: 'team_meta', key: ['key'], columns: [text('key'), text('value', req)] },
      { sql: { postgres: "INSERT INTO team_meta (key, value) VALUES ('instance_id', replace(gen_random_uuid()::text, '-', '')) ON CONFLICT (key) DO NOTHING" } },
      { table: 'hosts', key: ['host_id'], columns: [text('host_id'), text('name', req), text('revision', req), time('updated_at', req)] },
      { table: 'audit', key: ['host_id', 'seq'], columns: [text('host_id', req), time('seq', req), text('ts', req), text('line', req)] },
      { sql: { postgres: [...PROOF_DDL.tables, ...PROOF_DDL.indexes].join(';\n') } },
      {
        sql: {
          postgres: `CREATE OR REPLACE FUNCTION assent_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload TEXT;
BEGIN
  payload := json_build_object('seq', NEW.seq, 'host', NEW.host_id, 'kind', NEW.kind, 'ts', NEW.ts, 'session', NEW.session_id, 'data', NEW.data)::text;
  -- NOTIFY carries at most 8000 bytes: a bigger event is announced by seq and read by the listener.
  IF octet_length(payload) > 7900 THEN
    payload := json_build_object('seq', NEW.seq, 'host', NEW.host_id)::text;
  END IF;
  PERFORM pg_notify('assent_events', payload);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS events_notify ON events;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION assent_event_notify()`,
        },
      },
    ],
  },
  {
    // A table of its own: the proof tables are the same compiled DDL on both engines (proofEffects.ts), and the team database needs none of this.
    why: "a solo host's proofs' expiry on the machine's monotonic clock (CLOCK_MONOTONIC, ms since boot) and the boot it counts from: a daemon restarted in the same boot still refuses a proof past it, whatever the wall clock says; team proofs are judged by the database server's clock",
    only: 'sqlite',
    ops: [{ table: 'proof_monotonic', key: ['proof_hash'], columns: [text('proof_hash'), text('boot_id', req), int('expires_ms', req)] }],
  },
];

/** The schema version this assent writes, on either engine. */
export const SCHEMA_VERSION = MIGRATIONS.length;

const on = (engine: Engine, only: Engine | undefined): boolean => only === undefined || only === engine;

function columnSql(engine: Engine, column: Column): string {
  let sql = `${column.name} ${TYPES[engine][column.kind]}`;
  if (column.notNull === true || column.notNull === engine) sql += ' NOT NULL';
  if (column.unique === true) sql += ' UNIQUE';
  if (typeof column.default === 'boolean') sql += ` DEFAULT ${FLAG[engine][column.default ? 'true' : 'false']}`;
  else if (typeof column.default === 'number') sql += ` DEFAULT ${column.default}`;
  else if (typeof column.default === 'string') sql += ` DEFAULT '${column.default.replaceAll("'", "''")}'`;
  return sql;
}

function opSql(engine: Engine, op: Op): string[] {
  if ('sql' in op) return op.sql[engine] === undefined ? [] : [op.sql[engine]];
  if ('addColumn' in op) return on(engine, op.addColumn.only) ? [`ALTER TABLE ${op.to} ADD COLUMN ${columnSql(engine, op.addColumn)}`] : [];
  if (!on(engine, op.only)) return [];
  if ('index' in op) return [`CREATE INDEX IF NOT EXISTS ${op.index} ON ${op.on} (${op.columns.join(', ')})`];
  const columns = op.columns.filter((column) => on(engine, column.only));
  const key = (op.key ?? []).filter((name) => columns.some((column) => column.name === name));
  const parts = columns.map((column) => columnSql(engine, column));
  if (key.length > 0) parts.push(`PRIMARY KEY (${key.join(', ')})`);
  return [`CREATE TABLE IF NOT EXISTS ${op.table} (\n  ${parts.join(',\n  ')}\n)`];
}

/** The statements of step `version` (1-based) for one engine, in order; none for a step of the other engine only. */
export function migrationStatements(engine: Engine, version: number): string[] {
  const step = MIGRATIONS[version - 1];
  if (step === undefined) throw new RangeError(`no migration ${version}: the list has ${MIGRATIONS.length}`);
  if (!on(engine, step.only)) return [];
  return step.ops.flatMap((op) => opSql(engine, op));
}

/** The tables and columns each engine has at SCHEMA_VERSION, by the list (for the test that both engines' schemas match it). */
export function expectedTables(engine: Engine): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  for (const step of MIGRATIONS) {
    if (!on(engine, step.only)) continue;
    for (const op of step.ops) {
      if ('table' in op && on(engine, op.only)) tables.set(op.table, op.columns.filter((column) => on(engine, column.only)).map((column) => column.name));
      if ('addColumn' in op && on(engine, op.addColumn.only)) tables.get(op.to)?.push(op.addColumn.name);
    }
  }
  return tables;
}
