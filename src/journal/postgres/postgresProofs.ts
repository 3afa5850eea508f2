// The team store's approval proofs and the effects their consumption records (R-J-2..6).
import { AssentError } from '../../core/base/errors.js';
import { decideConsumption, PROOF_REFUSAL_HELP, type ConsumptionRequest, type EffectRecord, type ProofAudience, type ProofRecord } from '../../core/approval/proof.js';
import { rowToEffect, rowToProof, type ConsumptionOutcome, type EffectRow, type ProofRow } from '../proofs.js';
import type { ProofEffectStore } from '../store.js';
import { isUniqueViolation, type PgContext } from './postgresQuery.js';

async function insertProof(db: PgContext, proof: ProofRecord): Promise<void> {
  try {
    await db.query(
      `INSERT INTO proofs (id, hash, approval_id, principal, session_id, action_kind, action_digest, revision, decision, channel, audience, issued_at, expires_at, state, host_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'allow', $9, $10, $11, $12, 'issued', $13)`,
      [
        proof.id,
        proof.hash,
        proof.approvalId,
        proof.principal,
        proof.sessionId,
        proof.actionKind,
        proof.actionDigest,
        proof.revision,
        proof.channel,
        proof.audience,
        proof.issuedAt,
        proof.expiresAt,
        proof.hostId ?? db.hostId,
      ],
    );
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AssentError('conflict', `approval ${proof.approvalId} has already produced its one proof; ask for a new approval to run the action again`, {
        details: { approvalId: proof.approvalId },
      });
    }
    throw error;
  }
}

async function getProofByHash(db: PgContext, hash: string): Promise<ProofRecord | undefined> {
  const row = (await db.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE hash = $1', [hash])).rows[0];
  return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
}

async function getProof(db: PgContext, id: string): Promise<ProofRecord | undefined> {
  const row = (await db.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
}

async function getProofForApproval(db: PgContext, approvalId: string): Promise<ProofRecord | undefined> {
  const row = (await db.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE approval_id = $1', [approvalId])).rows[0];
  return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
}

async function proofsForAction(db: PgContext, principal: string, audience: ProofAudience, actionDigest: string): Promise<ProofRecord[]> {
  const result = await db.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE principal = $1 AND audience = $2 AND action_digest = $3 ORDER BY issued_at DESC, id', [
    principal,
    audience,
    actionDigest,
  ]);
  return result.rows.map((row) => withHost(rowToProof(row), row.host_id));
}

async function listProofs(db: PgContext, limit = 1000): Promise<ProofRecord[]> {
  const result = await db.query<ProofRow & { host_id: string }>('SELECT * FROM proofs ORDER BY issued_at DESC, id LIMIT $1', [limit]);
  return result.rows.map((row) => withHost(rowToProof(row), row.host_id));
}

/**
 * R-J-3 across hosts: the proof's row is locked (SELECT … FOR UPDATE) for the
 * whole transaction, so racing consumers on any host wait for the first, then
 * find it consumed and get its effect (R-J-4). The intent is committed before
 * this returns, and carries this host's id (R-TEAM-6).
 */
function consume(db: PgContext, hash: string, request: ConsumptionRequest, effectId: string): Promise<ConsumptionOutcome> {
  return db.transaction(async (client): Promise<ConsumptionOutcome> => {
    const row = (await client.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE hash = $1 FOR UPDATE', [hash])).rows[0];
    const proof = row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
    // A tool proof another host issued binds that host's configuration: it holds while that host still runs the revision
    // it approved under (R-TEAM-6). An exec proof binds the policy file's own digest, which any host can present.
    let checked = request;
    if (proof !== undefined && proof.actionKind === 'tool' && proof.hostId !== db.hostId) {
      const issuer = (await client.query<{ revision: string }>('SELECT revision FROM hosts WHERE host_id = $1', [proof.hostId])).rows[0];
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
      const effectRow = (await client.query<EffectRow>('SELECT * FROM effects WHERE proof_hash = $1', [hash])).rows[0];
      if (effectRow === undefined) {
        throw new AssentError('internal', `proof ${proof.id} is consumed but has no effect record; inspect the journal`, { details: { proofId: proof.id } });
      }
      const replay: ConsumptionOutcome = { kind: 'replay', proof, effect: rowToEffect(effectRow) };
      if (effectRow.result !== null) replay.result = JSON.parse(effectRow.result) as unknown;
      return replay;
    }
    await client.query("UPDATE proofs SET state = 'consumed', consumed_at = $1, effect_id = $2 WHERE hash = $3 AND state = 'issued'", [request.now, effectId, hash]);
    await client.query(
      "INSERT INTO effects (id, host_id, proof_hash, proof_id, approval_id, action_digest, state, started_at) VALUES ($1, $2, $3, $4, $5, $6, 'intent', $7)",
      [effectId, db.hostId, hash, proof.id, proof.approvalId, proof.actionDigest, request.now],
    );
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
  });
}

async function finishEffect(db: PgContext, id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): Promise<boolean> {
  const result = outcome.result === undefined ? null : JSON.stringify(outcome.result);
  const updated = await db.query("UPDATE effects SET state = $1, finished_at = $2, result_digest = $3, result = $4 WHERE id = $5 AND state = 'intent'", [
    outcome.state,
    outcome.at,
    outcome.resultDigest ?? null,
    result,
    id,
  ]);
  return updated.rowCount === 1;
}

async function getEffect(db: PgContext, id: string): Promise<EffectRecord | undefined> {
  const row = (await db.query<EffectRow>('SELECT * FROM effects WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToEffect(row);
}

async function getEffectResult(db: PgContext, id: string): Promise<unknown> {
  const row = (await db.query<{ result: string | null }>('SELECT result FROM effects WHERE id = $1', [id])).rows[0];
  return row?.result === null || row === undefined ? undefined : (JSON.parse(row.result) as unknown);
}

/** R-J-5 for one host: only `hostId`'s open intents (this host's unless named), in one statement. */
async function reconcileIntents(db: PgContext, at: number, hostId: string): Promise<EffectRecord[]> {
  const result = await db.query<EffectRow>(
    "UPDATE effects SET state = 'uncertain', finished_at = $1 WHERE host_id = $2 AND state = 'intent' RETURNING *",
    [at, hostId],
  );
  return result.rows.map(rowToEffect).sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
}

async function revokeProof(db: PgContext, id: string, at: number): Promise<boolean> {
  return (await db.query("UPDATE proofs SET state = 'revoked', revoked_at = $1 WHERE id = $2 AND state = 'issued'", [at, id])).rowCount === 1;
}

function withHost(proof: ProofRecord, hostId: string): ProofRecord {
  proof.hostId = hostId;
  return proof;
}

export function postgresProofs(db: PgContext): ProofEffectStore {
  return {
    insertProof: (proof) => insertProof(db, proof),
    getProofByHash: (hash) => getProofByHash(db, hash),
    getProof: (id) => getProof(db, id),
    getProofForApproval: (approvalId) => getProofForApproval(db, approvalId),
    proofsForAction: (principal, audience, digest) => proofsForAction(db, principal, audience, digest),
    listProofs: (limit) => listProofs(db, limit),
    consume: (hash, request, effectId) => consume(db, hash, request, effectId),
    finishEffect: (id, outcome) => finishEffect(db, id, outcome),
    getEffect: (id) => getEffect(db, id),
    getEffectResult: (id) => getEffectResult(db, id),
    reconcileIntents: (at, hostId = db.hostId) => reconcileIntents(db, at, hostId),
    revokeProof: (id, at) => revokeProof(db, id, at),
  };
}
