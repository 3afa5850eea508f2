// The queries of approvals and their votes (../approvalVotes.ts), written once
// with kysely's typed builder for both engines. Compiled into compiled.ts by
// `npm run queries` (queries.ts `compileAll`); never loaded at run time.
import type { Kysely } from 'kysely';
import { APPROVAL_COLUMN_NAMES, type ApprovalVoteRow } from '../journalRecords.js';
import { param, type Engine } from './prepared.js';

/** The approvals table as both engines hold it; a flag is 0/1 in SQLite and a boolean in PostgreSQL (journalRecords.ts `isSet`). */
interface ApprovalTable {
  id: string;
  session_id: string;
  kind: string;
  server: string | null;
  tool: string | null;
  args: string | null;
  action: string | null;
  args_sha256: string;
  requested_at: number;
  expires_at: number;
  caller: string;
  handoff: number | boolean;
  state: string;
  channel: string | null;
  reason: string | null;
  scope: string | null;
  decided_at: number | null;
  owner: string | null;
  host_id: string | null;
  four_eyes: number | boolean;
  quorum: number;
  decided_by: string | null;
  decided_host: string | null;
  presence: string | null;
}

interface ApprovalTables {
  approvals: ApprovalTable;
  approval_votes: ApprovalVoteRow;
}

export function approvalQueries(db: Kysely<ApprovalTables>, engine: Engine) {
  // Read as arrays in APPROVAL_COLUMN_NAMES' order (one mapper for both engines, no named-key object per row).
  const approvals = db.selectFrom('approvals').select(APPROVAL_COLUMN_NAMES);
  const byId = approvals.where('id', '=', param('id'));
  const resolve = db
    .updateTable('approvals')
    .set({
      state: param('state'),
      channel: param<string | null>('channel'),
      reason: param<string | null>('reason'),
      scope: param<string | null>('scope'),
      decided_at: param<number>('decided_at'),
      decided_by: param<string | null>('decided_by'),
      decided_host: param<string | null>('decided_host'),
    })
    .where('id', '=', param('id'))
    .where('state', '=', 'pending');
  const votes = db.selectFrom('approval_votes').selectAll();
  return {
    insertApproval: db
      .insertInto('approvals')
      .values({
        id: param('id'),
        session_id: param('session_id'),
        kind: param('kind'),
        server: param<string | null>('server'),
        tool: param<string | null>('tool'),
        args: param<string | null>('args'),
        action: param<string | null>('action'),
        args_sha256: param('args_sha256'),
        requested_at: param<number>('requested_at'),
        expires_at: param<number>('expires_at'),
        caller: param<string>('caller'),
        handoff: param<number>('handoff'),
        state: param('state'),
        channel: param<string | null>('channel'),
        reason: param<string | null>('reason'),
        scope: param<string | null>('scope'),
        decided_at: param<number | null>('decided_at'),
        owner: param<string | null>('owner'),
        host_id: param<string | null>('host_id'),
        four_eyes: param<number>('four_eyes'),
        quorum: param<number>('quorum'),
        decided_by: param<string | null>('decided_by'),
        decided_host: param<string | null>('decided_host'),
        presence: param<string | null>('presence'),
      })
      .compile(),
    approvalById: byId.compile(),
    // What truly differs: PostgreSQL holds the approval's row while a decision is judged; SQLite's BEGIN IMMEDIATE already holds the write lock.
    lockApprovalById: (engine === 'postgres' ? byId.forUpdate() : byId).compile(),
    // Oldest first, on the (state, requested_at, id) index.
    listApprovals: approvals.orderBy('requested_at').orderBy('id').limit(param<number>('limit')).compile(),
    listApprovalsByState: approvals.where('state', '=', param('state')).orderBy('requested_at').orderBy('id').limit(param<number>('limit')).compile(),
    // The compare-and-set from pending. A shared store drops the raw arguments in the same statement (R-TEAM-6); this host's own journal keeps them.
    resolveApproval: (engine === 'postgres' ? resolve.set((eb) => ({ args: eb.lit(null), action: eb.lit(null) })) : resolve).compile(),
    insertVote: db
      .insertInto('approval_votes')
      .values({
        approval_id: param('approval_id'),
        principal: param('principal'),
        host_id: param<string | null>('host_id'),
        channel: param('channel'),
        scope: param('scope'),
        voted_at: param<number>('voted_at'),
      })
      .onConflict((oc) => oc.columns(['approval_id', 'principal']).doNothing())
      .compile(),
    votesOf: votes.where('approval_id', '=', param('approval_id')).orderBy('voted_at').orderBy('principal').compile(),
    votesOfPending: db
      .selectFrom('approval_votes as v')
      .innerJoin('approvals as a', 'a.id', 'v.approval_id')
      .selectAll('v')
      .where('a.state', '=', 'pending')
      .orderBy('v.voted_at')
      .orderBy('v.principal')
      .compile(),
  };
}
