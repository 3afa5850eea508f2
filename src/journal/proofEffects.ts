// Proofs and the effects their consumption records (R-J-2..6), written once for
// both engines: the tables and each query (kysely, in sql/queries.ts, compiled
// per dialect into sql/compiled.ts) and each operation, proof consumption among them. An
// operation is a sequence of steps (a query and its values); the engine runs the
// steps, synchronously inside BEGIN IMMEDIATE on SQLite (proofs.ts) or
// asynchronously inside a transaction on PostgreSQL (postgres/postgresProofs.ts).
// The one thing that truly differs is how racing consumers serialize: SQLite's
// write lock taken up front, PostgreSQL's row lock (SELECT … FOR UPDATE).
import { AssentError } from '../core/base/errors.js';
import { decideConsumption, PROOF_REFUSAL_HELP } from '../core/approval/proof.js';
import type { ConsumptionRequest, EffectRecord, EffectState, ProofAudience, ProofRecord, ProofState } from '../core/approval/proof.js';
import { COMPILED } from './sql/compiled.js';
import type { Engine } from './sql/prepared.js';
import { changed, insertUnique, one, type Steps } from './sql/steps.js';

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

/** Every query of this concern, compiled for each engine (written once in sql/queries.ts). */
export const PROOF_QUERIES = COMPILED.proofs;

/** The two tables and their indexes, for each engine. `host_id` is NOT NULL; a journal whose tables predate it gains it as a nullable column (proofs.ts), which every query allows for. */
export const PROOF_TABLES = COMPILED.proofTables;

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
  const values = {
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
  };
  yield* insertUnique(ctx.q.insertProof, values, ctx.isUniqueViolation, () =>
    new AssentError('conflict', `approval ${proof.approvalId} has already produced its one proof; ask for a new approval to run the action again`, {
      details: { approvalId: proof.approvalId },
    }),
  );
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
  const row = (yield { query: ctx.q.lockProofByHash, values: { hash } }).rows[0] as ProofRow | undefined;
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
    const effectRow = (yield { query: ctx.q.effectByProof, values: { hash } }).rows[0] as EffectRow | undefined;
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
