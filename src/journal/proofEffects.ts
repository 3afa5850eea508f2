// Proofs and the effects their consumption records (R-J-2..6), written once for
// both engines: the tables, each query (kysely, compiled once per dialect, see
// sql/prepared.ts) and each operation, proof consumption among them. An
// operation is a sequence of steps (a query and its values); the engine runs the
// steps, synchronously inside BEGIN IMMEDIATE on SQLite (proofs.ts) or
// asynchronously inside a transaction on PostgreSQL (postgres/postgresProofs.ts).
// The one thing that truly differs is how racing consumers serialize: SQLite's
// write lock taken up front, PostgreSQL's row lock (SELECT … FOR UPDATE).
import type { Kysely } from 'kysely';
import { AssentError } from '../core/base/errors.js';
import { decideConsumption, PROOF_REFUSAL_HELP } from '../core/approval/proof.js';
import type { ConsumptionRequest, EffectRecord, EffectState, ProofAudience, ProofRecord, ProofState } from '../core/approval/proof.js';
import { param, prepareForEngines, type Engine } from './sql/prepared.js';
import { changed, one, type Steps } from './sql/steps.js';

export type { Steps } from './sql/steps.js';

export interface ProofRow {
  id: string;
  hash: string;
  approval_id: string;
  principal: string;
  session_id: string;
  action_kind: string;
  action_digest: string;
  revision: string;
  decision: string;
  channel: string;
  audience: string;
  issued_at: number;
  expires_at: number;
  state: string;
  consumed_at: number | null;
  revoked_at: number | null;
  effect_id: string | null;
  /** The host that issued it (R-TEAM-6); null in a journal written before hosts were recorded. */
  host_id: string | null;
}

export interface EffectRow {
  id: string;
  /** The host whose consumption started it; null in a journal written before hosts were recorded. */
  host_id: string | null;
  proof_hash: string;
  proof_id: string;
  approval_id: string;
  action_digest: string;
  state: string;
  started_at: number;
  finished_at: number | null;
  result_digest: string | null;
  result: string | null;
}

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

/** Every query of this concern, compiled for each engine. */
export const PROOF_QUERIES = prepareForEngines<ProofTables, ReturnType<typeof buildQueries>>(buildQueries);

function buildQueries(db: Kysely<ProofTables>, engine: Engine) {
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

export type ProofQueries = (typeof PROOF_QUERIES)[Engine];

export function rowToProof(row: ProofRow): ProofRecord {
  const proof: ProofRecord = {
    id: row.id,
    hash: row.hash,
    approvalId: row.approval_id,
    principal: row.principal,
    sessionId: row.session_id,
    actionKind: row.action_kind as ProofRecord['actionKind'],
    actionDigest: row.action_digest,
    revision: row.revision,
    decision: 'allow',
    channel: row.channel,
    audience: row.audience as ProofAudience,
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    state: row.state as ProofState,
  };
  if (row.consumed_at !== null) proof.consumedAt = row.consumed_at;
  if (row.revoked_at !== null) proof.revokedAt = row.revoked_at;
  if (row.effect_id !== null) proof.effectId = row.effect_id;
  if (row.host_id !== null && row.host_id !== undefined) proof.hostId = row.host_id;
  return proof;
}

export function rowToEffect(row: EffectRow): EffectRecord {
  const effect: EffectRecord = {
    id: row.id,
    proofHash: row.proof_hash,
    proofId: row.proof_id,
    approvalId: row.approval_id,
    actionDigest: row.action_digest,
    state: row.state as EffectState,
    startedAt: row.started_at,
  };
  if (row.finished_at !== null) effect.finishedAt = row.finished_at;
  if (row.result_digest !== null) effect.resultDigest = row.result_digest;
  return effect;
}

/** A consumption either started a new effect (intent recorded) or found the recorded one (replay). */
export type ConsumptionOutcome =
  | { kind: 'consumed'; proof: ProofRecord; effect: EffectRecord }
  | { kind: 'replay'; proof: ProofRecord; effect: EffectRecord; result?: unknown };

// ------------------------------------------------------------ operations, as steps each engine runs (sql/steps.ts)

/** Who runs the steps: this host, and whether the store is shared (a proof may then come from another host). */
export interface ProofContext {
  q: ProofQueries;
  hostId: string;
  shared: boolean;
  /** The engine's error for a duplicate key. */
  isUniqueViolation(error: unknown): boolean;
}

export function* insertProof(ctx: ProofContext, proof: ProofRecord): Steps<void> {
  try {
    yield {
      query: ctx.q.insertProof,
      values: {
        id: proof.id,
        hash: proof.hash,
        approval_id: proof.approvalId,
        principal: proof.principal,
        session_id: proof.sessionId,
        action_kind: proof.actionKind,
        action_digest: proof.actionDigest,
        revision: proof.revision,
        channel: proof.channel,
        audience: proof.audience,
        issued_at: proof.issuedAt,
        expires_at: proof.expiresAt,
        host_id: proof.hostId ?? ctx.hostId,
      },
    };
  } catch (error) {
    if (ctx.isUniqueViolation(error)) {
      throw new AssentError('conflict', `approval ${proof.approvalId} has already produced its one proof; ask for a new approval to run the action again`, {
        details: { approvalId: proof.approvalId },
      });
    }
    throw error;
  }
}

export function* proofBy(ctx: ProofContext, key: 'hash' | 'id' | 'approval_id', value: string): Steps<ProofRecord | undefined> {
  const query = key === 'hash' ? ctx.q.proofByHash : key === 'id' ? ctx.q.proofById : ctx.q.proofByApproval;
  const row = yield* one<ProofRow>(query, { [key]: value });
  return row === undefined ? undefined : rowToProof(row);
}

/** Proofs bound to one exact action of one principal and audience, newest first (handoff retries find theirs here). */
export function* proofsForAction(ctx: ProofContext, principal: string, audience: ProofAudience, actionDigest: string): Steps<ProofRecord[]> {
  const { rows } = yield { query: ctx.q.proofsForAction, values: { principal, audience, action_digest: actionDigest } };
  return (rows as ProofRow[]).map(rowToProof);
}

export function* listProofs(ctx: ProofContext, limit = 1000): Steps<ProofRecord[]> {
  const { rows } = yield { query: ctx.q.listProofs, values: { limit } };
  return (rows as ProofRow[]).map(rowToProof);
}

/**
 * R-J-3, the one consumption algorithm: inside the engine's transaction, the
 * proof is read under the lock (authentication is the hash lookup), principal,
 * audience, digest, revision, revocation and expiry are checked, it is marked
 * consumed and the effect intent recorded (this host's), all before the caller
 * may start the effect. Racing consumers serialize on the lock, so exactly one
 * consumes; the others find it consumed and get the recorded effect (R-J-4).
 * Refusals throw `proof_invalid` with `details.reason` and write nothing.
 */
export function* consume(ctx: ProofContext, hash: string, request: ConsumptionRequest, effectId: string): Steps<ConsumptionOutcome> {
  const row = yield* one<ProofRow>(ctx.q.lockProofByHash, { hash });
  const proof = row === undefined ? undefined : rowToProof(row);
  // A tool proof another host issued binds that host's configuration: it holds while that host still runs the revision
  // it approved under (R-TEAM-6). An exec proof binds the policy file's own digest, which any host can present.
  let checked = request;
  if (ctx.shared && proof !== undefined && proof.actionKind === 'tool' && proof.hostId !== ctx.hostId) {
    const issuer = yield* one<{ revision: string }>(ctx.q.hostRevision, { host_id: proof.hostId ?? '' });
    checked = { ...request, revision: issuer?.revision ?? '' };
  }
  const verdict = decideConsumption(proof, checked);
  if (verdict.kind === 'refuse' || proof === undefined) {
    const reason = verdict.kind === 'refuse' ? verdict.reason : 'unknown';
    throw new AssentError('proof_invalid', `the approval proof was refused (${reason}): ${PROOF_REFUSAL_HELP[reason]}; nothing was run`, {
      details: proof === undefined ? { reason } : { reason, proofId: proof.id, approvalId: proof.approvalId },
    });
  }
  if (verdict.kind === 'replay') {
    const effectRow = yield* one<EffectRow>(ctx.q.effectByProof, { hash });
    if (effectRow === undefined) {
      throw new AssentError('internal', `proof ${proof.id} is consumed but has no effect record; inspect the journal`, { details: { proofId: proof.id } });
    }
    const replay: ConsumptionOutcome = { kind: 'replay', proof, effect: rowToEffect(effectRow) };
    if (effectRow.result !== null) replay.result = JSON.parse(effectRow.result) as unknown;
    return replay;
  }
  yield { query: ctx.q.markConsumed, values: { now: request.now, effect_id: effectId, hash } };
  yield {
    query: ctx.q.insertEffect,
    values: { id: effectId, host_id: ctx.hostId, proof_hash: hash, proof_id: proof.id, approval_id: proof.approvalId, action_digest: proof.actionDigest, started_at: request.now },
  };
  const effect: EffectRecord = {
    id: effectId,
    proofHash: hash,
    proofId: proof.id,
    approvalId: proof.approvalId,
    actionDigest: proof.actionDigest,
    state: 'intent',
    startedAt: request.now,
  };
  return { kind: 'consumed', proof: { ...proof, state: 'consumed', consumedAt: request.now, effectId }, effect };
}

/** Records the outcome of an effect that is still an intent; false when it already has one (e.g. marked uncertain). */
export function* finishEffect(ctx: ProofContext, id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): Steps<boolean> {
  const result = outcome.result === undefined ? null : JSON.stringify(outcome.result);
  return yield* changed(ctx.q.finishEffect, { state: outcome.state, at: outcome.at, result_digest: outcome.resultDigest ?? null, result, id });
}

export function* getEffect(ctx: ProofContext, id: string): Steps<EffectRecord | undefined> {
  const row = yield* one<EffectRow>(ctx.q.effectById, { id });
  return row === undefined ? undefined : rowToEffect(row);
}

/** The recorded result (tool result JSON) of a finished effect, kept for identical retries. */
export function* getEffectResult(ctx: ProofContext, id: string): Steps<unknown> {
  const row = yield* one<EffectRow>(ctx.q.effectById, { id });
  return row?.result === null || row === undefined ? undefined : (JSON.parse(row.result) as unknown);
}

/** R-J-5 for one host: `hostId`'s intents without an outcome become `uncertain`, in one statement; reported, never retried. */
export function* reconcileIntents(ctx: ProofContext, at: number, hostId: string): Steps<EffectRecord[]> {
  const { rows } = yield { query: ctx.q.markUncertain, values: { at, host_id: hostId } };
  return (rows as EffectRow[]).map(rowToEffect).sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
}

/** Revokes an unused proof; false when it is unknown or no longer `issued`. */
export function* revokeProof(ctx: ProofContext, id: string, at: number): Steps<boolean> {
  return yield* changed(ctx.q.revoke, { at, id });
}
