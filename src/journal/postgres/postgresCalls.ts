// The team store's calls in progress (R-J-5 for calls): each host keeps and reads
// its own only; the statements are written once for both engines (../eventsCalls.ts).
import * as eventsCalls from '../eventsCalls.js';
import type { CallsInProgressStore } from '../store.js';
import { runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresCalls(db: PgContext): CallsInProgressStore {
  const ctx: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.postgres, hostId: db.hostId };
  return {
    recordCallInProgress: (record) => runPgSteps(db.query, eventsCalls.recordCallInProgress(ctx, record)),
    endCallInProgress: (callId) => runPgSteps(db.query, eventsCalls.endCallInProgress(ctx, callId)),
    listCallsInProgress: () => runPgSteps(db.query, eventsCalls.listCallsInProgress(ctx)),
  };
}
