// The team store's approvals and their votes (R-D-4, R-D-6, R-TEAM-3); the
// statements and the deciding algorithm are written once for both engines
// (../approvalVotes.ts). What is this engine's own: the deciding transaction
// runs on one client between BEGIN and COMMIT, holding the approval's row
// (SELECT … FOR UPDATE) while it is judged, so a racing decider on any host
// waits on the lock, then reads the outcome.
import * as approvalVotes from '../approvalVotes.js';
import type { ApprovalStore } from '../store.js';
import { clientQuery, isUniqueViolation, runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresApprovals(db: PgContext): ApprovalStore {
  // Every approval of a shared store is recorded under the host that filed it: this one, unless it says.
  const ctx: approvalVotes.ApprovalContext = { q: approvalVotes.APPROVAL_QUERIES.postgres, isUniqueViolation, defaultHostId: db.hostId };
  return {
    insertApproval: (record) => runPgSteps(db.query, approvalVotes.insertApproval(ctx, record)),
    getApproval: (id) => runPgSteps(db.query, approvalVotes.getApproval(ctx, id)),
    listApprovals: (filter) => runPgSteps(db.query, approvalVotes.listApprovals(ctx, filter)),
    resolveApproval: (id, resolution) => runPgSteps(db.query, approvalVotes.resolveApproval(ctx, id, resolution)),
    decideApproval: (id, judge) => db.transaction((client) => runPgSteps(clientQuery(client), approvalVotes.decideApproval(ctx, id, judge))),
    listApprovalVotes: (approvalId) => runPgSteps(db.query, approvalVotes.listApprovalVotes(ctx, approvalId)),
    listPendingApprovalVotes: () => runPgSteps(db.query, approvalVotes.listPendingApprovalVotes(ctx)),
  };
}
