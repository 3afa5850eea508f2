// The team store's approval proofs and the effects their consumption records
// (R-J-2..6): the PostgreSQL engine of the concern written once in
// ../proofEffects.ts. Each step runs as one statement; consuming runs its steps
// in one transaction, where the proof's row lock (SELECT … FOR UPDATE) makes
// racing consumers on any host wait for the first, then find it consumed and
// get its effect (R-J-4). The intent is committed before `consume` returns, and
// carries this host's id (R-TEAM-6).
import * as ops from '../proofEffects.js';
import type { ProofEffectStore } from '../store.js';
import { clientQuery, isUniqueViolation, runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresProofs(db: PgContext): ProofEffectStore {
  const ctx: ops.ProofContext = { q: ops.PROOF_QUERIES.postgres, hostId: db.hostId, shared: true, isUniqueViolation };
  const steps = <T>(operation: ops.Steps<T>): Promise<T> => runPgSteps(db.query, operation);
  return {
    insertProof: (proof) => steps(ops.insertProof(ctx, proof)),
    getProofByHash: (hash) => steps(ops.proofBy(ctx, 'hash', hash)),
    getProof: (id) => steps(ops.proofBy(ctx, 'id', id)),
    getProofForApproval: (approvalId) => steps(ops.proofBy(ctx, 'approval_id', approvalId)),
    proofsForAction: (principal, audience, digest) => steps(ops.proofsForAction(ctx, principal, audience, digest)),
    listProofs: (limit) => steps(ops.listProofs(ctx, limit)),
    consume: (hash, request, effectId) =>
      db.transaction((client) => runPgSteps(clientQuery(client), ops.consume(ctx, hash, request, effectId))),
    finishEffect: (id, outcome) => steps(ops.finishEffect(ctx, id, outcome)),
    getEffect: (id) => steps(ops.getEffect(ctx, id)),
    getEffectResult: (id) => steps(ops.getEffectResult(ctx, id)),
    reconcileIntents: (at, hostId = db.hostId) => steps(ops.reconcileIntents(ctx, at, hostId)),
    revokeProof: (id, at) => steps(ops.revokeProof(ctx, id, at)),
  };
}
