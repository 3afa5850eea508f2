// Approvals and their votes (R-D-4, R-D-5, R-D-6, R-TEAM-3), written once for
// both engines: each query (kysely, in sql/approvalQueries.ts, compiled per
// dialect into sql/compiled.ts) and each operation as steps (sql/steps.ts),
// which the embedded journal runs synchronously (journal.ts) and the team
// store asynchronously (postgres/postgresApprovals.ts). The deciding
// transaction is one algorithm (`decideApproval`); what differs is only how
// each engine holds the approval meanwhile: SQLite's BEGIN IMMEDIATE, or
// PostgreSQL's SELECT … FOR UPDATE on its row (the compiled `lockApprovalById`).
import { AssentError } from '../core/base/errors.js';
import {
  rowToApproval,
  rowToApprovalVote,
  toFlag,
  type ApprovalRecord,
  type ApprovalResolution,
  type ApprovalRow,
  type ApprovalState,
  type ApprovalVote,
  type ApprovalVoteRow,
} from './journalRecords.js';
import { COMPILED } from './sql/compiled.js';
import type { Engine } from './sql/prepared.js';
import { all, allRaw, changed, insertUnique, oneRaw, type Steps } from './sql/steps.js';
import type { DecisionJudge } from './store.js';

export const APPROVAL_QUERIES = COMPILED.approvals;

/** One engine's queries, its error for a duplicate key, and the host an approval filed without one is recorded under. */
export interface ApprovalContext {
  q: (typeof APPROVAL_QUERIES)[Engine];
  isUniqueViolation(error: unknown): boolean;
  /** The team store records every approval under a host (this one's, by default); the embedded journal keeps what it was given. */
  defaultHostId: string | null;
}

/** "No limit", in a form both engines take (SQLite refuses LIMIT NULL, PostgreSQL a negative LIMIT). */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** Stores a new approval. Throws `conflict` when the id is taken, so the caller can draw another. */
export function* insertApproval(ctx: ApprovalContext, record: ApprovalRecord): Steps<void> {
  const values = {
    id: record.id,
    session_id: record.sessionId,
    kind: record.kind,
    server: record.server ?? null,
    tool: record.tool ?? null,
    args: record.args === undefined ? null : JSON.stringify(record.args),
    action: record.action === undefined ? null : JSON.stringify(record.action),
    args_sha256: record.argsSha256,
    requested_at: record.requestedAt,
    expires_at: record.expiresAt,
    caller: JSON.stringify(record.caller),
    handoff: toFlag(record.handoff),
    state: record.state,
    channel: record.channel ?? null,
    reason: record.reason ?? null,
    scope: record.scope ?? null,
    decided_at: record.decidedAt ?? null,
    owner: record.owner ?? null,
    host_id: record.hostId ?? ctx.defaultHostId,
    four_eyes: toFlag(record.fourEyes === true),
    quorum: record.quorum ?? 1,
    decided_by: record.decidedBy ?? null,
    decided_host: record.decidedHost ?? null,
    presence: record.presence ?? null,
  };
  yield* insertUnique(ctx.q.insertApproval, values, ctx.isUniqueViolation, (cause) =>
    new AssentError('conflict', `approval id ${record.id} already exists in the journal; draw a new id and retry`, { cause, details: { id: record.id } }),
  );
}

export function* getApproval(ctx: ApprovalContext, id: string): Steps<ApprovalRecord | undefined> {
  const row = yield* oneRaw<ApprovalRow>(ctx.q.approvalById, { id });
  return row === undefined ? undefined : rowToApproval(row);
}

/** Oldest first; uses the (state, requested_at) index so the pending list stays fast with many rows. */
export function* listApprovals(ctx: ApprovalContext, filter: { state?: ApprovalState; limit?: number } = {}): Steps<ApprovalRecord[]> {
  const limit = filter.limit === undefined ? NO_LIMIT : Math.max(0, Math.floor(filter.limit));
  const rows =
    filter.state === undefined
      ? yield* allRaw<ApprovalRow>(ctx.q.listApprovals, { limit })
      : yield* allRaw<ApprovalRow>(ctx.q.listApprovalsByState, { state: filter.state, limit });
  return rows.map(rowToApproval);
}

/**
 * Atomic compare-and-set from `pending`: the first resolver wins and later
 * ones get false, whichever process, host or channel they come from (R-D-5).
 */
export function* resolveApproval(ctx: ApprovalContext, id: string, resolution: ApprovalResolution): Steps<boolean> {
  return yield* changed(ctx.q.resolveApproval, {
    id,
    state: resolution.state,
    channel: resolution.channel ?? null,
    reason: resolution.reason ?? null,
    scope: resolution.scope ?? null,
    decided_at: resolution.decidedAt,
    decided_by: resolution.decidedBy ?? null,
    decided_host: resolution.decidedHost ?? null,
  });
}

/** Records one principal's approval; false when that principal's approval is recorded already (a repeat changes nothing). */
export function* recordApprovalVote(ctx: ApprovalContext, vote: ApprovalVote): Steps<boolean> {
  return yield* changed(ctx.q.insertVote, {
    approval_id: vote.approvalId,
    principal: vote.principal,
    host_id: vote.hostId ?? null,
    channel: vote.channel,
    scope: vote.scope,
    voted_at: vote.votedAt,
  });
}

/** The approvals recorded for one approval, oldest first. */
export function* listApprovalVotes(ctx: ApprovalContext, approvalId: string): Steps<ApprovalVote[]> {
  return (yield* all<ApprovalVoteRow>(ctx.q.votesOf, { approval_id: approvalId })).map(rowToApprovalVote);
}

/** The approvals recorded for every pending approval, oldest first (a restart takes them up with their approvals). */
export function* listPendingApprovalVotes(ctx: ApprovalContext): Steps<ApprovalVote[]> {
  return (yield* all<ApprovalVoteRow>(ctx.q.votesOfPending)).map(rowToApprovalVote);
}

/**
 * The deciding transaction, run by each engine inside its own transaction: the
 * approval is read under its lock with its votes, the judge decides, the vote
 * and the resolution are written, and last the judge's write to this host's own
 * journal (a passkey counter), only when there is a vote or a resolution: a
 * throw from it rolls them back. A racing decider waits on the lock, then reads
 * the outcome.
 */
export function* decideApproval<T>(ctx: ApprovalContext, id: string, judge: DecisionJudge<T>): Steps<T> {
  const row = yield* oneRaw<ApprovalRow>(ctx.q.lockApprovalById, { id });
  const record = row === undefined ? undefined : rowToApproval(row);
  const votes = record === undefined ? [] : yield* listApprovalVotes(ctx, id);
  const { writes, result } = judge({ record, votes });
  if (writes.vote !== undefined) yield* recordApprovalVote(ctx, writes.vote);
  if (writes.resolution !== undefined && !(yield* resolveApproval(ctx, id, writes.resolution))) {
    const state = (yield* getApproval(ctx, id))?.state;
    throw new AssentError('conflict', `approval ${id} was already resolved`, { details: { state } });
  }
  if (writes.localWrite !== undefined && (writes.vote !== undefined || writes.resolution !== undefined)) writes.localWrite();
  return result;
}
