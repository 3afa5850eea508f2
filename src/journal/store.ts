// The one storage interface behind the approval and proof services (R-J-1,
// R-TEAM-1): approvals, events, rules, calls in progress, bearer tokens, proofs
// and effects, and in team mode each host's audit lines and the feed of what the
// other hosts did. Two implementations: sqliteStore.ts (journal.db, the embedded
// default) and postgres/postgresStore.ts (one database shared by several hosts).
// Every method is asynchronous because a database server answers over a socket;
// the SQLite one runs its statement before returning an already settled promise.
import type { ConsumptionRequest, EffectRecord, ProofAudience, ProofRecord } from '../core/approval/proof.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import type { ApprovalRecord, ApprovalResolution, ApprovalState, ApprovalVote, CallInProgressRecord, EventRecord, TokenRecord } from './journalRecords.js';
import type { ConsumptionOutcome } from './proofs.js';

export type { ConsumptionOutcome } from './proofs.js';

/** An event appended by another host of the team, as this host's feed hears it. */
export interface RemoteEvent extends EventRecord {
  hostId: string;
}

/**
 * What the store pushes to its host: another host's event, or the connection
 * to the shared database going away and coming back (after which the host
 * catches up on what it missed, R-TEAM-2). An embedded store pushes nothing.
 */
export type StoreChange = { kind: 'event'; event: RemoteEvent } | { kind: 'connection'; state: 'lost' | 'restored'; reason?: string };

/** One audit line of one host, as the shared database keeps it beside the host's own file (R-TEAM-4). */
export interface AuditRow {
  hostId: string;
  seq: number;
  ts: string;
  /** The line exactly as the host wrote it, so its chain can be recomputed. */
  line: string;
}

/** A host of the team as it last announced itself: its label and the configuration revision it runs (R-TEAM-3, R-TEAM-6). */
export interface HostRecord {
  hostId: string;
  name: string;
  revision: string;
  updatedAt: number;
}

/** What the deciding transaction reads: the approval (undefined when there is none) and the approvals (votes) recorded for it. */
export interface DecisionState {
  record: ApprovalRecord | undefined;
  votes: ApprovalVote[];
}

/** What a judge wants written in the same transaction: a principal's vote, and/or the resolution (a compare-and-set from pending). */
export interface DecisionWrites {
  vote?: ApprovalVote;
  resolution?: ApprovalResolution;
  /**
   * A write to this host's own journal that must land only with the decision (a passkey's
   * signature counter, R-REM-6). It runs inside the deciding transaction, after the vote and
   * the resolution were written and only if there is one of them; a throw rolls them back.
   * In the embedded store it is the same SQLite transaction. In team mode it runs inside the
   * PostgreSQL transaction just before its COMMIT, so a refused or conflicting decision never
   * writes it; only a COMMIT that fails after it leaves it written, which can refuse a later
   * replay of that assertion but never approves anything.
   */
  localWrite?: () => void;
}

/**
 * Judges a decision from what the transaction read (synchronously: nothing else
 * happens between the read and the writes); throws to refuse, writing nothing.
 */
export type DecisionJudge<T> = (state: DecisionState) => { writes: DecisionWrites; result: T };

export interface EventInput {
  kind: string;
  ts: number;
  sessionId?: string;
  data: Record<string, unknown>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** True when other hosts use the same store (team mode): their approvals and decisions arrive through `watch`. */
  readonly shared: boolean;
  /** This host (identity.json): the rows it writes (approvals it files, calls, effect intents, audit lines) carry it. */
  readonly hostId: string;
  /** A random id drawn once per journal or team database: the audience bearer tokens are bound to (R-WEB-4). */
  readonly instanceId: string;
  /** What `daemon status` shows about the store; never a password (R-TEAM-7). */
  describe(): Record<string, unknown>;
  /** False while the shared database cannot be reached; new prompt calls are then refused (R-TEAM-7). */
  available(): boolean;

  // Approvals (R-D-4, R-D-6).
  /** Stores a new approval. Throws `conflict` when the id is taken, so the caller can draw another. */
  insertApproval(record: ApprovalRecord): Promise<void>;
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** Oldest first. */
  listApprovals(filter?: { state?: ApprovalState; limit?: number }): Promise<ApprovalRecord[]>;
  /**
   * Compare-and-set from `pending`: the first resolver wins, whichever process,
   * channel or host it comes from; later ones get false. In a shared store the
   * raw arguments are dropped in the same statement (R-TEAM-6).
   */
  resolveApproval(id: string, resolution: ApprovalResolution): Promise<boolean>;
  /**
   * The deciding transaction (R-D-6, R-TEAM-3): reads the approval and its votes,
   * lets `judge` decide, and writes its vote and resolution, all at once; racing
   * deciders on any host are serialized, so the later one reads the first one's
   * outcome. A resolution that no longer applies (not pending) throws `conflict`.
   */
  decideApproval<T>(id: string, judge: DecisionJudge<T>): Promise<T>;
  /** The approvals (votes) recorded for one approval, oldest first. */
  listApprovalVotes(approvalId: string): Promise<ApprovalVote[]>;
  /** The votes of every pending approval, oldest first. */
  listPendingApprovalVotes(): Promise<ApprovalVote[]>;

  // Events (R-D-9).
  /** Appends to the event log and returns its sequence number, which only ever grows. */
  appendEvent(event: EventInput): Promise<number>;
  eventsSince(cursor: number, limit: number): Promise<EventRecord[]>;

  // Rules (R-POL-4).
  insertRule(rule: Rule): Promise<void>;
  getRule(id: string): Promise<Rule | undefined>;
  /** Active rules (not revoked, not expired at `now`) unless includeInactive. Oldest first. */
  listRules(options?: { includeInactive?: boolean; now?: number }): Promise<Rule[]>;
  revokeRule(id: string, at: number): Promise<boolean>;

  // Calls admitted and not yet finished (R-J-5 for calls), this host's only.
  recordCallInProgress(record: CallInProgressRecord): Promise<void>;
  endCallInProgress(callId: string): Promise<boolean>;
  listCallsInProgress(): Promise<CallInProgressRecord[]>;

  // Bearer tokens (R-WEB-4): metadata and hashes only.
  insertToken(token: TokenRecord): Promise<void>;
  findTokenByHash(tokenSha256: string): Promise<TokenRecord | undefined>;
  getToken(id: string): Promise<TokenRecord | undefined>;
  listTokens(): Promise<TokenRecord[]>;
  revokeToken(id: string, at: number): Promise<boolean>;

  // Proofs and effects (R-J-2..6).
  /** One approval yields at most one proof (`conflict` otherwise). */
  insertProof(proof: ProofRecord): Promise<void>;
  getProofByHash(hash: string): Promise<ProofRecord | undefined>;
  getProof(id: string): Promise<ProofRecord | undefined>;
  getProofForApproval(approvalId: string): Promise<ProofRecord | undefined>;
  /** Newest first. */
  proofsForAction(principal: string, audience: ProofAudience, actionDigest: string): Promise<ProofRecord[]>;
  listProofs(limit?: number): Promise<ProofRecord[]>;
  /**
   * R-J-3: in one transaction, authenticate (hash lookup), check principal,
   * audience, digest, revision, revocation and expiry, mark consumed and record
   * the effect intent (this host's), all before the caller may start the effect.
   * Racing consumers serialize, so exactly one consumes; the others get the
   * recorded effect (R-J-4). Refusals throw `proof_invalid` and write nothing.
   */
  consume(hash: string, request: ConsumptionRequest, effectId: string): Promise<ConsumptionOutcome>;
  /** False when the effect already has an outcome (e.g. marked uncertain). */
  finishEffect(id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): Promise<boolean>;
  getEffect(id: string): Promise<EffectRecord | undefined>;
  getEffectResult(id: string): Promise<unknown>;
  /** R-J-5: the open intents of `hostId` (this host's by default) become `uncertain`, in one transaction; returned to be reported, never retried. */
  reconcileIntents(at: number, hostId?: string): Promise<EffectRecord[]>;
  /** Revokes an unused proof; false when it is unknown or no longer `issued`. */
  revokeProof(id: string, at: number): Promise<boolean>;

  // Hosts of the team (R-TEAM-6); an embedded store has only this one and keeps no list.
  /** Records this host's label and pinned revision: a proof it issues binds that revision wherever it is consumed. */
  announceHost(host: { name: string; revision: string; at: number }): Promise<void>;
  listHosts(): Promise<HostRecord[]>;

  // Audit rows (R-TEAM-4); a store that keeps none (SQLite) ignores appends and lists nothing.
  appendAuditRows(rows: readonly AuditRow[]): Promise<void>;
  /** The highest seq stored for this host's lines (0 when none): where copying its file to the database resumes. */
  lastAuditSeq(): Promise<number>;
  /** Audit rows, each host's in seq order; `hostId` narrows to one host. */
  listAuditRows(filter?: { hostId?: string }): Promise<AuditRow[]>;

  // Export cursors (R-AUD-5): per sink, the seq of this host's last audit line the sink took.
  exportCursor(sink: string): Promise<number>;
  /** Moves the cursor forward only; durable when it resolves. */
  advanceExportCursor(sink: string, seq: number, at: number): Promise<void>;

  /** Subscribes to other hosts' events and connection changes; returns the unsubscribe. */
  watch(listener: (change: StoreChange) => void): () => void;
  close(): Promise<void>;
}
