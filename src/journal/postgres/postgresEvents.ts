// The team store's event log (R-D-9): every host appends to it, and a trigger's
// NOTIFY pushes each event to the other hosts (postgresStore.ts listens); the
// statements are written once for both engines (../eventsCalls.ts).
import * as eventsCalls from '../eventsCalls.js';
import type { EventStore } from '../store.js';
import { runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresEvents(db: PgContext): EventStore {
  const ctx: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.postgres, hostId: db.hostId };
  return {
    appendEvent: (event) => runPgSteps(db.query, eventsCalls.appendEvent(ctx, event)),
    eventsSince: (cursor, limit) => runPgSteps(db.query, eventsCalls.eventsSince(ctx, cursor, limit)),
  };
}
