// The team store's event log (R-D-9): every host appends to it, and a trigger's
// NOTIFY pushes each event to the other hosts (postgresStore.ts listens).
import { rowToEvent, type EventRecord, type EventRow } from '../journalRecords.js';
import type { EventInput, EventStore } from '../store.js';
import type { PgContext } from './postgresQuery.js';

async function appendEvent(db: PgContext, event: EventInput): Promise<number> {
  const result = await db.query<{ seq: number }>('INSERT INTO events (host_id, kind, ts, session_id, data) VALUES ($1, $2, $3, $4, $5) RETURNING seq', [
    db.hostId,
    event.kind,
    event.ts,
    event.sessionId ?? null,
    JSON.stringify(event.data),
  ]);
  return result.rows[0]?.seq ?? 0;
}

async function eventsSince(db: PgContext, cursor: number, limit: number): Promise<EventRecord[]> {
  const result = await db.query<EventRow>('SELECT seq, kind, ts, session_id, data FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', [cursor, Math.max(0, Math.floor(limit))]);
  return result.rows.map(rowToEvent);
}

export function postgresEvents(db: PgContext): EventStore {
  return {
    appendEvent: (event) => appendEvent(db, event),
    eventsSince: (cursor, limit) => eventsSince(db, cursor, limit),
  };
}
