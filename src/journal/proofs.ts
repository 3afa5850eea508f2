// Proof and effect records in journal.db (R-J-2..6): the SQLite engine of the
// concern written once in proofEffects.ts. The store keeps its own connection
// to the same WAL database and creates its two tables idempotently; only
// proof_monotonic, this engine's alone, comes from the journal's migrations
// (sql/migrations.ts), which run when the Journal opens the file first. Every
// write is synchronous=FULL. Each operation's steps run synchronously, the
// consuming and reconciling ones in one BEGIN IMMEDIATE transaction: racing
// processes serialize on the write lock.
import Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';
import type { ConsumptionRequest, EffectRecord, ProofAudience, ProofMonotonicExpiry, ProofRecord } from '../core/approval/proof.js';
import * as ops from './proofEffects.js';
import { isSqliteConstraint, SqliteSteps } from './sql/sqliteSteps.js';

export { rowToEffect, rowToProof, type ConsumptionOutcome, type EffectRow, type ProofRow } from './proofEffects.js';

/** A public view of a proof for `proofs.list`: no hash, never the token. */
export type ProofView = Omit<ProofRecord, 'hash'>;

export function toProofView(proof: ProofRecord): ProofView {
  const { hash: _hash, ...view } = proof;
  return view;
}

export interface ProofStoreOptions {
  busyTimeoutMs?: number;
  /** The host whose proofs and effect intents these are (identity.json); recorded on each row. */
  hostId?: string;
}

type MonotonicRow = ProofMonotonicExpiry & { wallExpiresAt: number };

/** The tables in SQLite, and `host_id` added to tables created before it was recorded (those rows keep NULL). */
function createTables(db: Database.Database): void {
  const { tables, indexes } = ops.PROOF_TABLES.sqlite;
  for (const statement of tables) db.exec(statement);
  for (const table of ['proofs', 'effects']) {
    const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all();
    if (!columns.some((column) => column.name === 'host_id')) db.exec(`ALTER TABLE ${table} ADD COLUMN host_id TEXT`);
  }
  for (const statement of indexes) db.exec(statement);
}

export class ProofStore {
  private readonly ctx: ops.ProofContext;
  private readonly steps: SqliteSteps;
  /** proof_monotonic's statements, prepared on first use. */
  private monotonicStatements?: { prune: Database.Statement<[string]>; insert: Database.Statement<[string, string, number]>; get: Database.Statement<[string], MonotonicRow> };

  private constructor(
    private readonly db: Database.Database,
    hostId: string,
  ) {
    this.ctx = { q: ops.PROOF_QUERIES.sqlite, hostId, shared: false, isUniqueViolation: isSqliteConstraint };
    this.steps = new SqliteSteps(db);
  }

  private run<T>(steps: ops.Steps<T>): T {
    return this.steps.run(steps);
  }

  private runLocked<T>(steps: () => ops.Steps<T>): T {
    return this.steps.runLocked(steps);
  }

  /** Opens journal.db (already created 0600 by the Journal) with its own connection and the same durability. */
  static open(path: string, options: ProofStoreOptions = {}): ProofStore {
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: true });
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.transaction(() => createTables(db)).immediate();
    } catch (cause) {
      throw new AssentError('state_insecure', `cannot open the proof tables in ${path}: ${(cause as Error).message}; check the journal is intact, or move it aside`, {
        cause,
        details: { path },
      });
    }
    return new ProofStore(db, options.hostId ?? '');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Stores a newly issued proof. One approval yields at most one proof
   * (`conflict` otherwise). With `monotonic`, its expiry on the machine's
   * monotonic clock is kept beside it in the same transaction (proof_monotonic,
   * which the journal's migrations create), and the rows of earlier boots, which
   * no longer mean anything, are dropped.
   */
  insertProof(proof: ProofRecord, monotonic?: ProofMonotonicExpiry): void {
    if (monotonic === undefined) {
      this.run(ops.insertProof(this.ctx, proof));
      return;
    }
    const statements = this.monotonic();
    this.db
      .transaction(() => {
        this.run(ops.insertProof(this.ctx, proof));
        statements.prune.run(monotonic.bootId);
        // Whole milliseconds, rounded down: a proof may expire up to 1 ms early, never late.
        statements.insert.run(proof.hash, monotonic.bootId, Math.floor(monotonic.at));
      })
      .immediate();
  }

  /** The monotonic expiry kept with a proof, and its wall expiry; undefined when none was kept (issued by an older assent, or with no boot id). */
  monotonicExpiry(hash: string): MonotonicRow | undefined {
    return this.monotonic().get.get(hash);
  }

  private monotonic(): NonNullable<ProofStore['monotonicStatements']> {
    this.monotonicStatements ??= {
      prune: this.db.prepare('DELETE FROM proof_monotonic WHERE boot_id <> ?'),
      insert: this.db.prepare('INSERT INTO proof_monotonic (proof_hash, boot_id, expires_ms) VALUES (?, ?, ?)'),
      get: this.db.prepare('SELECT m.boot_id AS bootId, m.expires_ms AS at, p.expires_at AS wallExpiresAt FROM proof_monotonic m JOIN proofs p ON p.hash = m.proof_hash WHERE m.proof_hash = ?'),
    };
    return this.monotonicStatements;
  }

  getProofByHash(hash: string): ProofRecord | undefined {
    return this.run(ops.proofBy(this.ctx, 'hash', hash));
  }

  getProof(id: string): ProofRecord | undefined {
    return this.run(ops.proofBy(this.ctx, 'id', id));
  }

  getProofForApproval(approvalId: string): ProofRecord | undefined {
    return this.run(ops.proofBy(this.ctx, 'approval_id', approvalId));
  }

  proofsForAction(principal: string, audience: ProofAudience, actionDigest: string): ProofRecord[] {
    return this.run(ops.proofsForAction(this.ctx, principal, audience, actionDigest));
  }

  listProofs(limit = 1000): ProofRecord[] {
    return this.run(ops.listProofs(this.ctx, limit));
  }

  /** R-J-3 (proofEffects.ts `consume`) in one BEGIN IMMEDIATE transaction, committed before the caller may start the effect. */
  consume(hash: string, request: ConsumptionRequest, effectId: string): ops.ConsumptionOutcome {
    return this.runLocked(() => ops.consume(this.ctx, hash, request, effectId));
  }

  finishEffect(id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): boolean {
    return this.run(ops.finishEffect(this.ctx, id, outcome));
  }

  getEffect(id: string): EffectRecord | undefined {
    return this.run(ops.getEffect(this.ctx, id));
  }

  getEffectResult(id: string): unknown {
    return this.run(ops.getEffectResult(this.ctx, id));
  }

  /** R-J-5: every intent of this host without an outcome becomes `uncertain`, in one transaction; reported, never retried. */
  reconcileIntents(at: number): EffectRecord[] {
    return this.runLocked(() => ops.reconcileIntents(this.ctx, at, this.ctx.hostId));
  }

  revoke(id: string, at: number): boolean {
    return this.run(ops.revokeProof(this.ctx, id, at));
  }
}
