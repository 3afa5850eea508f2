// The team store's hosts (R-TEAM-6): each host's label and the configuration
// revision it runs, which its proofs bind. Only the team database has the table;
// the statements are built with the others (../eventsCalls.ts).
import * as eventsCalls from '../eventsCalls.js';
import type { HostStore } from '../store.js';
import { runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresHosts(db: PgContext): HostStore {
  const ctx: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.postgres, hostId: db.hostId };
  return {
    announceHost: (host) => runPgSteps(db.query, eventsCalls.announceHost(ctx, db.hostId, host)),
    listHosts: () => runPgSteps(db.query, eventsCalls.listHosts(ctx)),
  };
}
