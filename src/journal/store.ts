// The storage behind the approval and proof services (R-J-1, R-TEAM-1), as one
// narrow interface per concern: approvals and votes, events, proofs and effects,
// rules, tokens, calls in progress, hosts, the audit mirror, and (kept in each
// host's own journal) web devices and passkeys. A service names only the ones it
// uses. Two engines implement the shared ones: the embedded journal.db (SQLite,
// sqliteStore.ts) and one PostgreSQL database shared by several hosts
// (postgres/postgresStore.ts); `Store` is nothing but their composition, made by
// `composeStore` in the composition root. Every shared method is asynchronous
// because a database server answers over a socket; the SQLite one runs its
// statement before returning an already settled promise.
import type { ConsumptionRequest, EffectRecord, ProofAudience, ProofMonotonicExpiry, ProofRecord } from '../core/approval/proof.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import type { ApprovalRecord, ApprovalResolution, ApprovalState, ApprovalVote, CallInProgressRecord, EventRecord, TokenRecord, WebDeviceRecord } from './journalRecords.js';
import type { PasskeyRecord } from './passkeyRecords.js';
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

/** What every engine says about itself, and its lifecycle. */
export interface StoreInfo {
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
  /** Subscribes to other hosts' events and connection changes; returns the unsubscribe. */
  watch(listener: (change: StoreChange) => void): () => void;
  close(): Promise<void>;
}

/** Approvals and their votes (R-D-4, R-D-6, R-TEAM-3). */
export interface ApprovalStore {
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
}

/** The event log (R-D-9). */
export interface EventStore {
  /** Appends to the event log and returns its sequence number, which only ever grows. */
  appendEvent(event: EventInput): Promise<number>;
  eventsSince(cursor: number, limit: number): Promise<EventRecord[]>;
}


/** Approval proofs and the effects their consumption records (R-J-2..6). */
export interface ProofEffectStore {
  /**
   * One approval yields at most one proof (`conflict` otherwise). The embedded
   * journal keeps `monotonic` with it, in the same transaction; the team store
   * keeps none, since the database server's clock judges a team proof's expiry.
   */
  insertProof(proof: ProofRecord, monotonic?: ProofMonotonicExpiry): Promise<void>;
  /** The monotonic expiry kept with the proof of this hash, with the proof's wall expiry; undefined when none was kept. */
  proofMonotonicExpiry(hash: string): Promise<(ProofMonotonicExpiry & { wallExpiresAt: number }) | undefined>;
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
}

/** Auto-approval rules (R-POL-4). */
export interface RuleStore {
  insertRule(rule: Rule): Promise<void>;
  getRule(id: string): Promise<Rule | undefined>;
  /** Active rules (not revoked, not expired at `now`) unless includeInactive. Oldest first. */
  listRules(options?: { includeInactive?: boolean; now?: number }): Promise<Rule[]>;
  revokeRule(id: string, at: number): Promise<boolean>;
}

/** Bearer tokens (R-WEB-4): metadata and hashes only. */
export interface TokenStore {
  insertToken(token: TokenRecord): Promise<void>;
  findTokenByHash(tokenSha256: string): Promise<TokenRecord | undefined>;
  getToken(id: string): Promise<TokenRecord | undefined>;
  listTokens(): Promise<TokenRecord[]>;
  revokeToken(id: string, at: number): Promise<boolean>;
}

/** Calls admitted and not yet finished (R-J-5 for calls), this host's only. */
export interface CallsInProgressStore {
  recordCallInProgress(record: CallInProgressRecord): Promise<void>;
  endCallInProgress(callId: string): Promise<boolean>;
  listCallsInProgress(): Promise<CallInProgressRecord[]>;
}

/** Hosts of the team (R-TEAM-6); an embedded store has only this one and keeps no list. */
export interface HostStore {
  /** Records this host's label and pinned revision: a proof it issues binds that revision wherever it is consumed. */
  announceHost(host: { name: string; revision: string; at: number }): Promise<void>;
  listHosts(): Promise<HostRecord[]>;
}

/** The audit mirror (R-TEAM-4) and the export cursors over this host's audit lines (R-AUD-5). */
export interface AuditMirrorStore {
  /** A store that keeps no audit rows (SQLite: the host's files are the whole log) ignores appends and lists nothing. */
  appendAuditRows(rows: readonly AuditRow[]): Promise<void>;
  /** The highest seq stored for this host's lines (0 when none): where copying its file to the database resumes. */
  lastAuditSeq(): Promise<number>;
  /** Audit rows, each host's in seq order; `hostId` narrows to one host. */
  listAuditRows(filter?: { hostId?: string }): Promise<AuditRow[]>;
  /** Per sink, the seq of this host's last audit line the sink took. */
  exportCursor(sink: string): Promise<number>;
  /** Moves the cursor forward only; durable when it resolves. */
  advanceExportCursor(sink: string, seq: number, at: number): Promise<void>;
}

/**
 * Remembered web devices (R-REM-3). Kept in each host's own journal in either
 * mode: a browser pairs with one daemon, so the device is that host's.
 */
export interface WebDeviceStore {
  /** Throws `conflict` when the id or cookie hash is taken. */
  insertWebDevice(device: WebDeviceRecord): void;
  /** Devices neither revoked nor expired at `now`, oldest first. */
  listWebDevices(now: number): WebDeviceRecord[];
  touchWebDevice(id: string, at: number): void;
  revokeWebDevice(id: string, at: number): boolean;
}

/**
 * Enrolled passkeys (R-REM-6). Kept in each host's own journal in either mode
 * (the relying party is this host's web page); a counter advance is written in
 * the deciding transaction as its `localWrite`.
 */
export interface PasskeyStore {
  instanceId(): string;
  insertPasskey(passkey: PasskeyRecord): void;
  listPasskeys(): PasskeyRecord[];
  findPasskeyByCredentialId(credentialId: string): PasskeyRecord | undefined;
  advancePasskeyCounter(credentialId: string, counter: number, at: number): boolean;
  removePasskey(id: string): boolean;
}

/** One engine's implementation of each shared concern, before they are composed. */
export interface StoreParts {
  info: StoreInfo;
  approvals: ApprovalStore;
  events: EventStore;
  proofs: ProofEffectStore;
  rules: RuleStore;
  tokens: TokenStore;
  calls: CallsInProgressStore;
  hosts: HostStore;
  audit: AuditMirrorStore;
}

/** The whole shared store: the composition of the concerns, as the composition root assembles it. */
export type Store = StoreInfo & ApprovalStore & EventStore & ProofEffectStore & RuleStore & TokenStore & CallsInProgressStore & HostStore & AuditMirrorStore;

/**
 * Composes one engine's parts into a `Store`. Each part is a plain object of
 * functions (no `this`), so its members are copied as they are; `info`'s
 * properties are read through, since an engine's availability changes.
 */
export function composeStore(parts: StoreParts): Store {
  const { info, ...concerns } = parts;
  const store = {} as Record<string, unknown>;
  for (const [concern, part] of Object.entries(concerns)) {
    for (const [name, member] of Object.entries(part as object)) {
      if (name in store) throw new Error(`store concern ${concern} defines ${name} again`);
      store[name] = member;
    }
  }
  Object.defineProperties(store, {
    kind: { get: () => info.kind, enumerable: true },
    shared: { get: () => info.shared, enumerable: true },
    hostId: { get: () => info.hostId, enumerable: true },
    instanceId: { get: () => info.instanceId, enumerable: true },
  });
  store['describe'] = () => info.describe();
  store['available'] = () => info.available();
  store['watch'] = (listener: (change: StoreChange) => void) => info.watch(listener);
  store['close'] = () => info.close();
  return store as unknown as Store;
}
