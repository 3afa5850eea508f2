// Every query and table written once for both engines, with kysely's typed
// builder. Run only to write sql/compiled.ts (scripts/writeQueries.mjs, `npm run
// queries`) and in the test that fails when compiled.ts is stale; at run time
// the engines read compiled.ts, so the daemon and the gateway never load kysely.
import type { Kysely } from 'kysely';
import type { EffectRow, ProofRow } from '../proofEffects.js';
import type { RuleRow, TokenRow } from '../journalRecords.js';
import { approvalQueries } from './approvalQueries.js';
import { compileOnly, prepareForEngines } from './compile.js';
import { eventCallQueries } from './eventQueries.js';
import { param, type Engine } from './prepared.js';

// ------------------------------------------------------------ proofs and effects (proofEffects.ts)

interface ProofTables {
  proofs: ProofRow;
  effects: EffectRow;
  hosts: { host_id: string; name: string; revision: string; updated_at: number };
}

/**
 * The two tables and their indexes, for either engine. `host_id` is NOT NULL
 * here; a journal whose tables predate it gains it as a nullable column
 * (proofs.ts), which every query below allows for.
 */
export function proofTablesDdl(db: Kysely<ProofTables>): { tables: string[]; indexes: string[] } {
  const proofs = db.schema
    .createTable('proofs')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('approval_id', 'text', (c) => c.notNull().unique())
    .addColumn('principal', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('action_kind', 'text', (c) => c.notNull())
    .addColumn('action_digest', 'text', (c) => c.notNull())
    .addColumn('revision', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('effect_id', 'text')
    .addColumn('host_id', 'text', (c) => c.notNull());
  const effects = db.schema
    .createTable('effects')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('host_id', 'text', (c) => c.notNull())
    .addColumn('proof_hash', 'text', (c) => c.notNull().unique())
    .addColumn('proof_id', 'text', (c) => c.notNull())
    .addColumn('approval_id', 'text', (c) => c.notNull())
    .addColumn('action_digest', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('result_digest', 'text')
    .addColumn('result', 'text');
  return {
    tables: [proofs.compile().sql, effects.compile().sql],
    indexes: [
      db.schema.createIndex('proofs_by_action').ifNotExists().on('proofs').columns(['principal', 'audience', 'action_digest', 'state']).compile().sql,
      db.schema.createIndex('effects_open').ifNotExists().on('effects').columns(['host_id', 'state']).compile().sql,
    ],
  };
}

function proofQueries(db: Kysely<ProofTables>, engine: Engine) {
  const byHash = db.selectFrom('proofs').selectAll().where('hash', '=', param('hash'));
  return {
    insertProof: db
      .insertInto('proofs')
      .values({
        id: param('id'),
        hash: param('hash'),
        approval_id: param('approval_id'),
        principal: param('principal'),
        session_id: param('session_id'),
        action_kind: param('action_kind'),
        action_digest: param('action_digest'),
        revision: param('revision'),
        decision: 'allow',
        channel: param('channel'),
        audience: param('audience'),
        issued_at: param<number>('issued_at'),
        expires_at: param<number>('expires_at'),
        state: 'issued',
        host_id: param('host_id'),
      })
      .compile(),
    proofByHash: byHash.compile(),
    // What truly differs: PostgreSQL serializes consumers on the proof's row; SQLite's BEGIN IMMEDIATE already holds the write lock.
    lockProofByHash: (engine === 'postgres' ? byHash.forUpdate() : byHash).compile(),
    proofById: db.selectFrom('proofs').selectAll().where('id', '=', param('id')).compile(),
    proofByApproval: db.selectFrom('proofs').selectAll().where('approval_id', '=', param('approval_id')).compile(),
    proofsForAction: db
      .selectFrom('proofs')
      .selectAll()
      .where('principal', '=', param('principal'))
      .where('audience', '=', param('audience'))
      .where('action_digest', '=', param('action_digest'))
      .orderBy('issued_at', 'desc')
      .orderBy('id')
      .compile(),
    listProofs: db.selectFrom('proofs').selectAll().orderBy('issued_at', 'desc').orderBy('id').limit(param<number>('limit')).compile(),
    hostRevision: db.selectFrom('hosts').select('revision').where('host_id', '=', param('host_id')).compile(),
    markConsumed: db
      .updateTable('proofs')
      .set({ state: 'consumed', consumed_at: param<number>('now'), effect_id: param('effect_id') })
      .where('hash', '=', param('hash'))
      .where('state', '=', 'issued')
      .compile(),
    insertEffect: db
      .insertInto('effects')
      .values({
        id: param('id'),
        host_id: param('host_id'),
        proof_hash: param('proof_hash'),
        proof_id: param('proof_id'),
        approval_id: param('approval_id'),
        action_digest: param('action_digest'),
        state: 'intent',
        started_at: param<number>('started_at'),
      })
      .compile(),
    effectById: db.selectFrom('effects').selectAll().where('id', '=', param('id')).compile(),
    effectByProof: db.selectFrom('effects').selectAll().where('proof_hash', '=', param('hash')).compile(),
    finishEffect: db
      .updateTable('effects')
      .set({ state: param('state'), finished_at: param<number>('at'), result_digest: param<string | null>('result_digest'), result: param<string | null>('result') })
      .where('id', '=', param('id'))
      .where('state', '=', 'intent')
      .compile(),
    // A journal from before hosts were recorded has intents with no host: they are this (the only) host's.
    markUncertain: db
      .updateTable('effects')
      .set({ state: 'uncertain', finished_at: param<number>('at') })
      .where((eb) => eb.or([eb('host_id', '=', param('host_id')), eb('host_id', 'is', null)]))
      .where('state', '=', 'intent')
      .returningAll()
      .compile(),
    revoke: db.updateTable('proofs').set({ state: 'revoked', revoked_at: param<number>('at') }).where('id', '=', param('id')).where('state', '=', 'issued').compile(),
  };
}

// ------------------------------------------------------------ tokens and rules (tokenRules.ts)

interface Tables {
  tokens: TokenRow;
  rules: RuleRow;
}

function tokenRuleQueries(db: Kysely<Tables>) {
  return {
    insertToken: db
      .insertInto('tokens')
      .values({
        id: param('id'),
        name: param('name'),
        token_sha256: param('token_sha256'),
        audience: param('audience'),
        created_at: param<number>('created_at'),
        expires_at: param<number>('expires_at'),
        revoked_at: param<number | null>('revoked_at'),
      })
      .compile(),
    tokenByHash: db.selectFrom('tokens').selectAll().where('token_sha256', '=', param('token_sha256')).compile(),
    tokenById: db.selectFrom('tokens').selectAll().where('id', '=', param('id')).compile(),
    listTokens: db.selectFrom('tokens').selectAll().orderBy('created_at').orderBy('id').compile(),
    revokeToken: db.updateTable('tokens').set({ revoked_at: param<number>('at') }).where('id', '=', param('id')).where('revoked_at', 'is', null).compile(),
    insertRule: db
      .insertInto('rules')
      .values({
        id: param('id'),
        version: param<number>('version'),
        tool: param('tool'),
        args: param('args'),
        created_at: param<number>('created_at'),
        expires_at: param<number | null>('expires_at'),
        revoked_at: param<number | null>('revoked_at'),
        form: param('form'),
        pattern: param<string | null>('pattern'),
        access: param<string | null>('access'),
        agent: param<string | null>('agent'),
      })
      .compile(),
    ruleById: db.selectFrom('rules').selectAll().where('id', '=', param('id')).compile(),
    listAllRules: db.selectFrom('rules').selectAll().orderBy('created_at').orderBy('id').compile(),
    listActiveRules: db
      .selectFrom('rules')
      .selectAll()
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', param<number>('now'))]))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', param<number>('now'))]))
      .orderBy('created_at')
      .orderBy('id')
      .compile(),
    revokeRule: db.updateTable('rules').set({ revoked_at: param<number>('at') }).where('id', '=', param('id')).where('revoked_at', 'is', null).compile(),
  };
}


/** What compiled.ts holds: each concern's queries for each engine, and the DDL written once. */
export function compileAll() {
  return {
    proofs: prepareForEngines(proofQueries),
    tokenRules: prepareForEngines(tokenRuleQueries),
    approvals: prepareForEngines(approvalQueries),
    eventsCalls: prepareForEngines(eventCallQueries),
    proofTables: { sqlite: proofTablesDdl(compileOnly('sqlite')), postgres: proofTablesDdl(compileOnly('postgres')) },
  };
}

/** The compiled data with one line per query or statement list, so that the file reads as a table. */
function render(value: unknown, depth = 0): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'sql' in value) return JSON.stringify(value);
  const pad = '  '.repeat(depth + 1);
  const entries = Object.entries(value).map(([key, inner]) => `${pad}${JSON.stringify(key)}: ${render(inner, depth + 1)},`);
  return `{\n${entries.join('\n')}\n${'  '.repeat(depth)}}`;
}

/** compiled.ts as it must read: the compiled queries as data, typed by their names. */
export function renderCompiled(compiled: ReturnType<typeof compileAll>): string {
  const names = (set: Record<string, unknown>): string =>
    Object.keys(set)
      .map((name) => `'${name}'`)
      .join(' | ');
  return `// Written by scripts/writeQueries.mjs (\`npm run queries\`) from sql/queries.ts; do not edit.
// Each query and table of the store written once with kysely, compiled for each
// engine ahead of time so that nothing at run time loads kysely or compiles.
import type { Engine, Prepared } from './prepared.js';

type Compiled<K extends string> = Record<Engine, Record<K, Prepared>>;

export const COMPILED: {
  proofs: Compiled<${names(compiled.proofs.sqlite)}>;
  tokenRules: Compiled<${names(compiled.tokenRules.sqlite)}>;
  approvals: Compiled<${names(compiled.approvals.sqlite)}>;
  eventsCalls: Compiled<${names(compiled.eventsCalls.sqlite)}>;
  proofTables: Record<Engine, { tables: string[]; indexes: string[] }>;
} = ${render(compiled)};
`;
}
