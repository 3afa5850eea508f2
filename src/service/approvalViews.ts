// What an approval looks like outside the journal (R-D-4): the view that lists,
// events and every head show, and the selector that narrows a list of them.
import type { AuditPeer } from '../journal/auditRecords.js';
import type { Presence } from '../core/policy/presencePolicy.js';
import type { ApprovalRecord } from '../journal/journal.js';

/** The process that sent a decision, as the head found it (R-D-4b); see docs/daemon.md for how far to trust it. */
export type DecisionPeer = AuditPeer;

/**
 * A public view of an approval: what `approvals.list` returns (R-D-4). The
 * journal record without its internal handoff flag, which appears (as true)
 * only on handoff approvals: an allow then issues the proof the agent's
 * identical retry consumes (R-MCP-8). `presence` is the requirement stored
 * with the approval when it was filed, the same on every host.
 */
export type ApprovalView = Omit<ApprovalRecord, 'handoff'> & {
  handoff?: true;
  /** Principals whose approval is recorded, oldest first (R-TEAM-3): who has approved so far. */
  approvedBy?: string[];
  /** Only an enrolled passkey's assertion approves it (`policy.presence` when it was filed, R-REM-6); every other channel can only deny. */
  presence?: Presence;
};

/** The view of a journal record with the principals that approved it (its votes), when any did. */
export function toApprovalView(record: ApprovalRecord, approvedBy?: readonly string[]): ApprovalView {
  const view: ApprovalView = {
    id: record.id,
    sessionId: record.sessionId,
    kind: record.kind,
    argsSha256: record.argsSha256,
    requestedAt: record.requestedAt,
    expiresAt: record.expiresAt,
    caller: record.caller,
    state: record.state,
  };
  if (record.server !== undefined) view.server = record.server;
  if (record.tool !== undefined) view.tool = record.tool;
  if (record.args !== undefined) view.args = record.args;
  if (record.action !== undefined) view.action = record.action;
  if (record.channel !== undefined) view.channel = record.channel;
  if (record.reason !== undefined) view.reason = record.reason;
  if (record.scope !== undefined) view.scope = record.scope;
  if (record.decidedAt !== undefined) view.decidedAt = record.decidedAt;
  if (record.handoff) view.handoff = true;
  // Owner and filing host are shown where a team rule makes them matter: without four-eyes or a
  // quorum they are this host's own on every approval, and 10,000 pending approvals must list
  // within SPEC §14's budget (the journal keeps them on every record).
  if (record.fourEyes === true || record.quorum !== undefined) {
    if (record.owner !== undefined) view.owner = record.owner;
    if (record.hostId !== undefined) view.hostId = record.hostId;
  }
  if (record.fourEyes === true) view.fourEyes = true;
  if (record.quorum !== undefined) view.quorum = record.quorum;
  if (approvedBy !== undefined && approvedBy.length > 0) view.approvedBy = [...approvedBy];
  if (record.decidedBy !== undefined) view.decidedBy = record.decidedBy;
  if (record.decidedHost !== undefined) view.decidedHost = record.decidedHost;
  if (record.presence !== undefined) view.presence = record.presence;
  return view;
}

/** Does `selector` pick this approval? It may be an id, a session id, `server/tool` or `server/`. */
export function matchesSelector(record: Pick<ApprovalView, 'id' | 'sessionId' | 'server' | 'tool'>, selector: string | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  if (record.id === selector || record.sessionId === selector) return true;
  if (record.server === undefined) return false;
  const id = `${record.server}/${record.tool ?? ''}`;
  return selector.endsWith('/') ? id.startsWith(selector) : id === selector;
}
