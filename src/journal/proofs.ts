// Proof and effect records in journal.db (R-J-2..6). The store keeps its own
// connection to the same WAL database and creates its two tables idempotently,
// so it needs nothing from the Journal class; every write is synchronous=FULL.
import Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';
import { decideConsumption, PROOF_REFUSAL_HELP } from '../core/approval/proof.js';
import type { ConsumptionRequest, EffectRecord, EffectState, ProofAudience, ProofRecord, ProofState } from '../core/approval/proof.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS proofs (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    approval_id TEXT NOT NULL UNIQUE,
    principal TEXT NOT NULL,
    session_id TEXT NOT NULL,
    action_kind TEXT NOT NULL,
    action_digest TEXT NOT NULL,
    revision TEXT NOT NULL,
    decision TEXT NOT NULL,
    channel TEXT NOT NULL,
    audience TEXT NOT NULL,
    issued_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    consumed_at INTEGER,
    revoked_at INTEGER,
    effect_id TEXT
  );
  CREATE INDEX IF NOT EXISTS proofs_by_action ON proofs (principal, audience, action_digest, state);
  CREATE TABLE IF NOT EXISTS effects (
    id TEXT PRIMARY KEY,
    proof_hash TEXT NOT NULL UNIQUE,
    proof_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    action_digest TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    result_digest TEXT,
    result TEXT
  );
  CREATE INDEX IF NOT EXISTS effects_by_state ON effects (state);
`;

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
}

export interface EffectRow {
  id: string;
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

/** A public view of a proof for `proofs.list`: no hash, never the token. */
export type ProofView = Omit<ProofRecord, 'hash'>;

export function toProofView(proof: ProofRecord): ProofView {
  const { hash: _hash, ...view } = proof;
  return view;
}

export interface ProofStoreOptions {
  busyTimeoutMs?: number;
}

export class ProofStore {
  private readonly statements;

  private constructor(private readonly db: Database.Database) {
    this.statements = {
      insertProof: db.prepare(
        `INSERT INTO proofs (id, hash, approval_id, principal, session_id, action_kind, action_digest, revision, decision, channel, audience, issued_at, expires_at, state)
         VALUES (@id, @hash, @approval_id, @principal, @session_id, @action_kind, @action_digest, @revision, 'allow', @channel, @audience, @issued_at, @expires_at, 'issued')`,
      ),
      proofByHash: db.prepare<[string], ProofRow>('SELECT * FROM proofs WHERE hash = ?'),
      proofById: db.prepare<[string], ProofRow>('SELECT * FROM proofs WHERE id = ?'),
      proofByApproval: db.prepare<[string], ProofRow>('SELECT * FROM proofs WHERE approval_id = ?'),
      proofsForAction: db.prepare<[string, string, string], ProofRow>(
        'SELECT * FROM proofs WHERE principal = ? AND audience = ? AND action_digest = ? ORDER BY issued_at DESC, id',
      ),
      listProofs: db.prepare<[number], ProofRow>('SELECT * FROM proofs ORDER BY issued_at DESC, id LIMIT ?'),
      markConsumed: db.prepare("UPDATE proofs SET state = 'consumed', consumed_at = ?, effect_id = ? WHERE hash = ? AND state = 'issued'"),
      insertEffect: db.prepare(
        "INSERT INTO effects (id, proof_hash, proof_id, approval_id, action_digest, state, started_at) VALUES (?, ?, ?, ?, ?, 'intent', ?)",
      ),
      effectById: db.prepare<[string], EffectRow>('SELECT * FROM effects WHERE id = ?'),
      effectByProof: db.prepare<[string], EffectRow>('SELECT * FROM effects WHERE proof_hash = ?'),
      finishEffect: db.prepare("UPDATE effects SET state = ?, finished_at = ?, result_digest = ?, result = ? WHERE id = ? AND state = 'intent'"),
      openIntents: db.prepare<[], EffectRow>("SELECT * FROM effects WHERE state = 'intent' ORDER BY started_at, id"),
      markUncertain: db.prepare("UPDATE effects SET state = 'uncertain', finished_at = ? WHERE id = ? AND state = 'intent'"),
      revoke: db.prepare("UPDATE proofs SET state = 'revoked', revoked_at = ? WHERE id = ? AND state = 'issued'"),
    };
  }

  /** Opens journal.db (already created 0600 by the Journal) with its own connection and the same durability. */
  static open(path: string, options: ProofStoreOptions = {}): ProofStore {
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: true });
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.transaction(() => db.exec(SCHEMA)).immediate();
    } catch (cause) {
      throw new AssentError('state_insecure', `cannot open the proof tables in ${path}: ${(cause as Error).message}; check the journal is intact, or move it aside`, {
        cause,
        details: { path },
      });
    }
    return new ProofStore(db);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Stores a newly issued proof. One approval yields at most one proof (`conflict` otherwise). */
  insertProof(proof: ProofRecord): void {
    try {
      this.statements.insertProof.run({
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
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) {
        throw new AssentError('conflict', `approval ${proof.approvalId} has already produced its one proof; ask for a new approval to run the action again`, {
          details: { approvalId: proof.approvalId },
        });
      }
      throw error;
    }
  }

  getProofByHash(hash: string): ProofRecord | undefined {
    const row = this.statements.proofByHash.get(hash);
    return row === undefined ? undefined : rowToProof(row);
  }

  getProof(id: string): ProofRecord | undefined {
    const row = this.statements.proofById.get(id);
    return row === undefined ? undefined : rowToProof(row);
  }

  getProofForApproval(approvalId: string): ProofRecord | undefined {
    const row = this.statements.proofByApproval.get(approvalId);
    return row === undefined ? undefined : rowToProof(row);
  }

  /** Proofs bound to one exact action of one principal and audience, newest first (handoff retries find theirs here). */
  proofsForAction(principal: string, audience: ProofAudience, actionDigest: string): ProofRecord[] {
    return this.statements.proofsForAction.all(principal, audience, actionDigest).map(rowToProof);
  }

  listProofs(limit = 1000): ProofRecord[] {
    return this.statements.listProofs.all(limit).map(rowToProof);
  }

  /**
   * R-J-3: one BEGIN IMMEDIATE transaction authenticates the proof (hash lookup),
   * checks principal, audience, digest, revision, revocation and expiry, marks it
   * consumed and records the effect intent; it commits before the caller may start
   * the effect. Racing processes serialize on the write lock, so exactly one of
   * them consumes; the others find the proof consumed and get the recorded effect.
   * Refusals throw `proof_invalid` with `details.reason` and write nothing.
   */
  consume(hash: string, request: ConsumptionRequest, effectId: string): ConsumptionOutcome {
    return this.db
      .transaction((): ConsumptionOutcome => {
        const row = this.statements.proofByHash.get(hash);
        const proof = row === undefined ? undefined : rowToProof(row);
        const verdict = decideConsumption(proof, request);
        if (verdict.kind === 'refuse' || proof === undefined) {
          const reason = verdict.kind === 'refuse' ? verdict.reason : 'unknown';
          throw new AssentError('proof_invalid', `the approval proof was refused (${reason}): ${PROOF_REFUSAL_HELP[reason]}; nothing was run`, {
            details: proof === undefined ? { reason } : { reason, proofId: proof.id, approvalId: proof.approvalId },
          });
        }
        if (verdict.kind === 'replay') {
          const effectRow = this.statements.effectByProof.get(hash);
          if (effectRow === undefined) {
            throw new AssentError('internal', `proof ${proof.id} is consumed but has no effect record; inspect the journal`, { details: { proofId: proof.id } });
          }
          const replay: ConsumptionOutcome = { kind: 'replay', proof, effect: rowToEffect(effectRow) };
          if (effectRow.result !== null) replay.result = JSON.parse(effectRow.result) as unknown;
          return replay;
        }
        this.statements.markConsumed.run(request.now, effectId, hash);
        this.statements.insertEffect.run(effectId, hash, proof.id, proof.approvalId, proof.actionDigest, request.now);
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
      })
      .immediate();
  }

  /** Records the outcome of an effect that is still an intent; false when it already has one (e.g. marked uncertain). */
  finishEffect(id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): boolean {
    const result = outcome.result === undefined ? null : JSON.stringify(outcome.result);
    return this.statements.finishEffect.run(outcome.state, outcome.at, outcome.resultDigest ?? null, result, id).changes === 1;
  }

  getEffect(id: string): EffectRecord | undefined {
    const row = this.statements.effectById.get(id);
    return row === undefined ? undefined : rowToEffect(row);
  }

  /** The recorded result (tool result JSON) of a finished effect, kept for identical retries. */
  getEffectResult(id: string): unknown {
    const row = this.statements.effectById.get(id);
    return row?.result === null || row === undefined ? undefined : (JSON.parse(row.result) as unknown);
  }

  /**
   * R-J-5: every intent without an outcome becomes `uncertain`, in one
   * transaction; the effects returned are reported, never retried.
   */
  reconcileIntents(at: number): EffectRecord[] {
    return this.db
      .transaction(() => {
        const open = this.statements.openIntents.all().map(rowToEffect);
        for (const effect of open) this.statements.markUncertain.run(at, effect.id);
        return open.map((effect) => ({ ...effect, state: 'uncertain' as const, finishedAt: at }));
      })
      .immediate();
  }

  /** Revokes an unused proof; false when it is unknown or no longer `issued`. */
  revoke(id: string, at: number): boolean {
    return this.statements.revoke.run(at, id).changes === 1;
  }
}
