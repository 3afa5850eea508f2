// The embedded store: journal.db in the private state directory (SQLite, WAL,
// synchronous=FULL), through the Journal and ProofStore connections. One host
// uses it, so nothing arrives from elsewhere and there are no audit rows (the
// host's own audit files are the whole log). Each method runs its statement
// before it returns, so the order of writes is the order of calls.
import type { ConsumptionRequest, EffectRecord, ProofAudience, ProofRecord } from '../core/approval/proof.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import type { Journal } from './journal.js';
import { AssentError } from '../core/base/errors.js';
import type { ApprovalRecord, ApprovalResolution, ApprovalState, ApprovalVote, CallInProgressRecord, EventRecord, TokenRecord } from './journalRecords.js';
import { ProofStore, type ConsumptionOutcome } from './proofs.js';
import type { AuditRow, DecisionJudge, EventInput, HostRecord, Store, StoreChange } from './store.js';

/** Runs a synchronous statement as a settled promise: its error becomes the rejection, never a throw. */
function settle<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly shared = false;
  readonly instanceId: string;

  private constructor(
    readonly journal: Journal,
    private readonly proofs: ProofStore,
    readonly hostId: string,
  ) {
    this.instanceId = journal.instanceId();
  }

  /** Wraps an open journal; opens the proof tables with their own connection to the same file. */
  static open(journal: Journal, hostId: string, options: { busyTimeoutMs?: number } = {}): SqliteStore {
    return new SqliteStore(journal, ProofStore.open(journal.path, options), hostId);
  }

  describe(): Record<string, unknown> {
    return { kind: 'sqlite', path: this.journal.path };
  }

  available(): boolean {
    return true;
  }

  insertApproval(record: ApprovalRecord): Promise<void> {
    return settle(() => this.journal.insertApproval(record));
  }

  getApproval(id: string): Promise<ApprovalRecord | undefined> {
    return settle(() => this.journal.getApproval(id));
  }

  listApprovals(filter: { state?: ApprovalState; limit?: number } = {}): Promise<ApprovalRecord[]> {
    return settle(() => this.journal.listApprovals(filter));
  }

  resolveApproval(id: string, resolution: ApprovalResolution): Promise<boolean> {
    return settle(() => this.journal.resolveApproval(id, resolution));
  }

  /** One BEGIN IMMEDIATE transaction: another process deciding the same approval waits for the write lock. */
  decideApproval<T>(id: string, judge: DecisionJudge<T>): Promise<T> {
    return settle(() =>
      this.journal.transaction(() => {
        const record = this.journal.getApproval(id);
        const votes = record === undefined ? [] : this.journal.listApprovalVotes(id);
        const { writes, result } = judge({ record, votes });
        if (writes.vote !== undefined) this.journal.recordApprovalVote(writes.vote);
        if (writes.resolution !== undefined && !this.journal.resolveApproval(id, writes.resolution)) {
          throw new AssentError('conflict', `approval ${id} was already resolved`, { details: { state: this.journal.getApproval(id)?.state } });
        }
        // Same database, same transaction: a throw here rolls the vote and the resolution back.
        if (writes.localWrite !== undefined && (writes.vote !== undefined || writes.resolution !== undefined)) writes.localWrite();
        return result;
      }),
    );
  }

  listApprovalVotes(approvalId: string): Promise<ApprovalVote[]> {
    return settle(() => this.journal.listApprovalVotes(approvalId));
  }

  listPendingApprovalVotes(): Promise<ApprovalVote[]> {
    return settle(() => this.journal.listPendingApprovalVotes());
  }

  appendEvent(event: EventInput): Promise<number> {
    return settle(() => this.journal.appendEvent(event));
  }

  eventsSince(cursor: number, limit: number): Promise<EventRecord[]> {
    return settle(() => this.journal.eventsSince(cursor, limit));
  }

  insertRule(rule: Rule): Promise<void> {
    return settle(() => this.journal.insertRule(rule));
  }

  getRule(id: string): Promise<Rule | undefined> {
    return settle(() => this.journal.getRule(id));
  }

  listRules(options: { includeInactive?: boolean; now?: number } = {}): Promise<Rule[]> {
    return settle(() => this.journal.listRules(options));
  }

  revokeRule(id: string, at: number): Promise<boolean> {
    return settle(() => this.journal.revokeRule(id, at));
  }

  recordCallInProgress(record: CallInProgressRecord): Promise<void> {
    return settle(() => this.journal.recordCallInProgress(record));
  }

  endCallInProgress(callId: string): Promise<boolean> {
    return settle(() => this.journal.endCallInProgress(callId));
  }

  listCallsInProgress(): Promise<CallInProgressRecord[]> {
    return settle(() => this.journal.listCallsInProgress());
  }

  insertToken(token: TokenRecord): Promise<void> {
    return settle(() => this.journal.insertToken(token));
  }

  findTokenByHash(tokenSha256: string): Promise<TokenRecord | undefined> {
    return settle(() => this.journal.findTokenByHash(tokenSha256));
  }

  getToken(id: string): Promise<TokenRecord | undefined> {
    return settle(() => this.journal.getToken(id));
  }

  listTokens(): Promise<TokenRecord[]> {
    return settle(() => this.journal.listTokens());
  }

  revokeToken(id: string, at: number): Promise<boolean> {
    return settle(() => this.journal.revokeToken(id, at));
  }

  insertProof(proof: ProofRecord): Promise<void> {
    return settle(() => this.proofs.insertProof(proof));
  }

  getProofByHash(hash: string): Promise<ProofRecord | undefined> {
    return settle(() => this.proofs.getProofByHash(hash));
  }

  getProof(id: string): Promise<ProofRecord | undefined> {
    return settle(() => this.proofs.getProof(id));
  }

  getProofForApproval(approvalId: string): Promise<ProofRecord | undefined> {
    return settle(() => this.proofs.getProofForApproval(approvalId));
  }

  proofsForAction(principal: string, audience: ProofAudience, actionDigest: string): Promise<ProofRecord[]> {
    return settle(() => this.proofs.proofsForAction(principal, audience, actionDigest));
  }

  listProofs(limit?: number): Promise<ProofRecord[]> {
    return settle(() => this.proofs.listProofs(limit));
  }

  consume(hash: string, request: ConsumptionRequest, effectId: string): Promise<ConsumptionOutcome> {
    return settle(() => this.proofs.consume(hash, request, effectId));
  }

  finishEffect(id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): Promise<boolean> {
    return settle(() => this.proofs.finishEffect(id, outcome));
  }

  getEffect(id: string): Promise<EffectRecord | undefined> {
    return settle(() => this.proofs.getEffect(id));
  }

  getEffectResult(id: string): Promise<unknown> {
    return settle(() => this.proofs.getEffectResult(id));
  }

  /** One host writes this journal: its open intents are all of them, and no other host has any. */
  reconcileIntents(at: number, hostId: string = this.hostId): Promise<EffectRecord[]> {
    return settle(() => (hostId === this.hostId ? this.proofs.reconcileIntents(at) : []));
  }

  revokeProof(id: string, at: number): Promise<boolean> {
    return settle(() => this.proofs.revoke(id, at));
  }

  announceHost(_host: { name: string; revision: string; at: number }): Promise<void> {
    return Promise.resolve();
  }

  listHosts(): Promise<HostRecord[]> {
    return Promise.resolve([]);
  }

  appendAuditRows(_rows: readonly AuditRow[]): Promise<void> {
    return Promise.resolve();
  }

  lastAuditSeq(): Promise<number> {
    return Promise.resolve(0);
  }

  listAuditRows(): Promise<AuditRow[]> {
    return Promise.resolve([]);
  }

  exportCursor(sink: string): Promise<number> {
    return settle(() => this.journal.exportCursor(sink, this.hostId));
  }

  advanceExportCursor(sink: string, seq: number, at: number): Promise<void> {
    return settle(() => this.journal.advanceExportCursor(sink, this.hostId, seq, at));
  }

  watch(_listener: (change: StoreChange) => void): () => void {
    return () => undefined;
  }

  /** Closes the proof connection; the journal belongs to whoever opened it (the daemon keeps its pinned configuration there). */
  close(): Promise<void> {
    return settle(() => this.proofs.close());
  }
}
