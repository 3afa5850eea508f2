// The team store's approval proofs and the effects their consumption records
// (R-J-2..6): the PostgreSQL engine of the concern written once in
// ../proofEffects.ts. Each step runs as one statement; consuming runs its steps
// in one transaction, where the proof's row lock (SELECT … FOR UPDATE) makes
// racing consumers on any host wait for the first, then find it consumed and
// get its effect (R-J-4). The intent is committed before `consume` returns, and
// carries this host's id (R-TEAM-6).
//
// Hosts' clocks differ; the database server's clock is the one the team shares.
// So a proof's expiry is judged against the later of the consuming host's time
// and the server's (a host whose clock runs behind cannot stretch a proof), and a
// proof is stored with the earlier of the issuing host's expiry and the server's
// time plus its lifetime (a host whose clock runs ahead cannot issue a proof that
// outlives its lifetime). Both only ever shorten a proof: fail closed.
import type { ProofRecord } from '../../core/approval/proof.js';
import * as ops from '../proofEffects.js';
import type { ProofEffectStore } from '../store.js';
import { clientQuery, isUniqueViolation, runPgSteps, type PgContext, type PgQuery } from './postgresQuery.js';

/** The database server's time, epoch milliseconds: clock_timestamp(), the time of this statement, not of its transaction. */
const SERVER_NOW = 'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms';

async function serverClock(query: PgQuery): Promise<number> {
  const row = (await query<{ now_ms: number }>(SERVER_NOW)).rows[0];
  if (row === undefined || !Number.isFinite(row.now_ms)) throw new Error('the team database did not tell its time');
  return row.now_ms;
}

/** The proof as stored: it expires no later than the server's time plus its lifetime. */
export function boundedByServer(proof: ProofRecord, now: number): ProofRecord {
  const latest = now + (proof.expiresAt - proof.issuedAt);
  return proof.expiresAt <= latest ? proof : { ...proof, expiresAt: latest };
}

/** `teamClock`: the shared clock when it is not the server's (a test's fake clock). */
export function postgresProofs(db: PgContext, teamClock?: () => number): ProofEffectStore {
  const ctx: ops.ProofContext = { q: ops.PROOF_QUERIES.postgres, hostId: db.hostId, shared: true, isUniqueViolation };
  const serverNow = (query: PgQuery): Promise<number> => (teamClock === undefined ? serverClock(query) : Promise.resolve(teamClock()));
  const steps = <T>(operation: ops.Steps<T>): Promise<T> => runPgSteps(db.query, operation);
  return {
    // A monotonic expiry is one host's and the team's clock is the server's: none is kept (the row is bounded by the server instead).
    insertProof: async (proof) => steps(ops.insertProof(ctx, boundedByServer(proof, await serverNow(db.query)))),
    proofMonotonicExpiry: () => Promise.resolve(undefined),
    getProofByHash: (hash) => steps(ops.proofBy(ctx, 'hash', hash)),
    getProof: (id) => steps(ops.proofBy(ctx, 'id', id)),
    getProofForApproval: (approvalId) => steps(ops.proofBy(ctx, 'approval_id', approvalId)),
    proofsForAction: (principal, audience, digest) => steps(ops.proofsForAction(ctx, principal, audience, digest)),
    listProofs: (limit) => steps(ops.listProofs(ctx, limit)),
    consume: (hash, request, effectId) =>
      db.transaction(async (client) => {
        const query = clientQuery(client);
        const now = Math.max(request.now, await serverNow(query));
        return runPgSteps(query, ops.consume(ctx, hash, { ...request, now }, effectId));
      }),
    finishEffect: (id, outcome) => steps(ops.finishEffect(ctx, id, outcome)),
    getEffect: (id) => steps(ops.getEffect(ctx, id)),
    getEffectResult: (id) => steps(ops.getEffectResult(ctx, id)),
    reconcileIntents: (at, hostId = db.hostId) => steps(ops.reconcileIntents(ctx, at, hostId)),
    revokeProof: (id, at) => steps(ops.revokeProof(ctx, id, at)),
  };
}
