// The embedded store: journal.db in the private state directory (SQLite, WAL,
// synchronous=FULL), through the Journal and ProofStore connections. One host
// uses it, so nothing arrives from elsewhere and there are no audit rows (the
// host's own audit files are the whole log). Each method runs its statement
// before it returns, so the order of writes is the order of calls. Each concern
// is its own part; the composition root composes them (store.ts `composeStore`).
import type { Journal } from './journal.js';
import { ProofStore } from './proofs.js';
import {
  composeStore,
  type ApprovalStore,
  type AuditMirrorStore,
  type CallsInProgressStore,
  type EventStore,
  type HostStore,
  type ProofEffectStore,
  type RuleStore,
  type Store,
  type StoreInfo,
  type StoreParts,
  type TokenStore,
} from './store.js';

/** Runs a synchronous statement as a settled promise: its error becomes the rejection, never a throw. */
function settle<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

function sqliteInfo(journal: Journal, proofs: ProofStore, hostId: string): StoreInfo {
  return {
    kind: 'sqlite',
    shared: false,
    hostId,
    instanceId: journal.instanceId(),
    describe: () => ({ kind: 'sqlite', path: journal.path }),
    available: () => true,
    watch: () => () => undefined,
    // Closes the proof connection; the journal belongs to whoever opened it (the daemon keeps its pinned configuration there).
    close: () => settle(() => proofs.close()),
  };
}

function sqliteApprovals(journal: Journal): ApprovalStore {
  return {
    insertApproval: (record) => settle(() => journal.insertApproval(record)),
    getApproval: (id) => settle(() => journal.getApproval(id)),
    listApprovals: (filter = {}) => settle(() => journal.listApprovals(filter)),
    resolveApproval: (id, resolution) => settle(() => journal.resolveApproval(id, resolution)),
    // The one deciding algorithm (approvalVotes.ts) in one BEGIN IMMEDIATE transaction: another process deciding the same approval waits for the write lock.
    decideApproval: (id, judge) => settle(() => journal.decideApproval(id, judge)),
    listApprovalVotes: (approvalId) => settle(() => journal.listApprovalVotes(approvalId)),
    listPendingApprovalVotes: () => settle(() => journal.listPendingApprovalVotes()),
  };
}

function sqliteEvents(journal: Journal): EventStore {
  return {
    appendEvent: (event) => settle(() => journal.appendEvent(event)),
    eventsSince: (cursor, limit) => settle(() => journal.eventsSince(cursor, limit)),
  };
}

function sqliteRules(journal: Journal): RuleStore {
  return {
    insertRule: (rule) => settle(() => journal.insertRule(rule)),
    getRule: (id) => settle(() => journal.getRule(id)),
    listRules: (options = {}) => settle(() => journal.listRules(options)),
    revokeRule: (id, at) => settle(() => journal.revokeRule(id, at)),
  };
}

function sqliteCalls(journal: Journal): CallsInProgressStore {
  return {
    recordCallInProgress: (record) => settle(() => journal.recordCallInProgress(record)),
    endCallInProgress: (callId) => settle(() => journal.endCallInProgress(callId)),
    listCallsInProgress: () => settle(() => journal.listCallsInProgress()),
  };
}

function sqliteTokens(journal: Journal): TokenStore {
  return {
    insertToken: (token) => settle(() => journal.insertToken(token)),
    findTokenByHash: (hash) => settle(() => journal.findTokenByHash(hash)),
    getToken: (id) => settle(() => journal.getToken(id)),
    listTokens: () => settle(() => journal.listTokens()),
    revokeToken: (id, at) => settle(() => journal.revokeToken(id, at)),
  };
}

function sqliteProofs(proofs: ProofStore, hostId: string): ProofEffectStore {
  return {
    insertProof: (proof, monotonic) => settle(() => proofs.insertProof(proof, monotonic)),
    proofMonotonicExpiry: (hash) => settle(() => proofs.monotonicExpiry(hash)),
    getProofByHash: (hash) => settle(() => proofs.getProofByHash(hash)),
    getProof: (id) => settle(() => proofs.getProof(id)),
    getProofForApproval: (approvalId) => settle(() => proofs.getProofForApproval(approvalId)),
    proofsForAction: (principal, audience, digest) => settle(() => proofs.proofsForAction(principal, audience, digest)),
    listProofs: (limit) => settle(() => proofs.listProofs(limit)),
    consume: (hash, request, effectId) => settle(() => proofs.consume(hash, request, effectId)),
    finishEffect: (id, outcome) => settle(() => proofs.finishEffect(id, outcome)),
    getEffect: (id) => settle(() => proofs.getEffect(id)),
    getEffectResult: (id) => settle(() => proofs.getEffectResult(id)),
    // One host writes this journal: its open intents are all of them, and no other host has any.
    reconcileIntents: (at, of = hostId) => settle(() => (of === hostId ? proofs.reconcileIntents(at) : [])),
    revokeProof: (id, at) => settle(() => proofs.revoke(id, at)),
  };
}

/** An embedded store has only this host and keeps no list of hosts. */
const SQLITE_HOSTS: HostStore = {
  announceHost: () => Promise.resolve(),
  listHosts: () => Promise.resolve([]),
};

/** The host's own audit files are the whole log: no rows are mirrored; the export cursors are the journal's. */
function sqliteAudit(journal: Journal, hostId: string): AuditMirrorStore {
  return {
    appendAuditRows: () => Promise.resolve(),
    lastAuditSeq: () => Promise.resolve(0),
    listAuditRows: () => Promise.resolve([]),
    exportCursor: (sink) => settle(() => journal.exportCursor(sink, hostId)),
    advanceExportCursor: (sink, seq, at) => settle(() => journal.advanceExportCursor(sink, hostId, seq, at)),
  };
}

/** Each concern of the embedded store over an open journal; opens the proof tables with their own connection to the same file. */
export function sqliteStoreParts(journal: Journal, hostId: string, options: { busyTimeoutMs?: number } = {}): StoreParts {
  const proofs = ProofStore.open(journal.path, { ...options, hostId });
  return {
    info: sqliteInfo(journal, proofs, hostId),
    approvals: sqliteApprovals(journal),
    events: sqliteEvents(journal),
    proofs: sqliteProofs(proofs, hostId),
    rules: sqliteRules(journal),
    tokens: sqliteTokens(journal),
    calls: sqliteCalls(journal),
    hosts: SQLITE_HOSTS,
    audit: sqliteAudit(journal, hostId),
  };
}

/** A composed store of this engine (the name tests and tools know). */
export type SqliteStore = Store;

export const SqliteStore = {
  /** The embedded store composed at once (tests and tools; the daemon composes its parts in its composition root). */
  open(journal: Journal, hostId: string, options: { busyTimeoutMs?: number } = {}): Store {
    return composeStore(sqliteStoreParts(journal, hostId, options));
  },
};
