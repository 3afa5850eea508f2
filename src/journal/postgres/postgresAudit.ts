// The team store's audit mirror (R-TEAM-4): every host's audit lines as rows, and
// each host's export cursors over its own lines (R-AUD-5). The cursors' statements
// are written once for both engines (../eventsCalls.ts); the mirror's rows exist
// in the team database only (the embedded journal's audit files are the whole
// log), so their statements are this engine's own, here.
import * as eventsCalls from '../eventsCalls.js';
import type { AuditMirrorStore, AuditRow } from '../store.js';
import { runPgSteps, type PgContext } from './postgresQuery.js';

/** Idempotent: a row already stored (a retry after an outage) is kept as it is. */
async function appendAuditRows(db: PgContext, rows: readonly AuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    'INSERT INTO audit (host_id, seq, ts, line) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (host_id, seq) DO NOTHING',
    [rows.map((row) => row.hostId), rows.map((row) => row.seq), rows.map((row) => row.ts), rows.map((row) => row.line)],
  );
}

async function lastAuditSeq(db: PgContext): Promise<number> {
  return (await db.query<{ seq: number }>('SELECT COALESCE(max(seq), 0)::bigint AS seq FROM audit WHERE host_id = $1', [db.hostId])).rows[0]?.seq ?? 0;
}

async function listAuditRows(db: PgContext, filter: { hostId?: string } = {}): Promise<AuditRow[]> {
  const result =
    filter.hostId === undefined
      ? await db.query<{ host_id: string; seq: number; ts: string; line: string }>('SELECT host_id, seq, ts, line FROM audit ORDER BY host_id, seq')
      : await db.query<{ host_id: string; seq: number; ts: string; line: string }>('SELECT host_id, seq, ts, line FROM audit WHERE host_id = $1 ORDER BY seq', [filter.hostId]);
  return result.rows.map((row) => ({ hostId: row.host_id, seq: row.seq, ts: row.ts, line: row.line }));
}

export function postgresAudit(db: PgContext): AuditMirrorStore {
  const ctx: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.postgres, hostId: db.hostId };
  return {
    appendAuditRows: (rows) => appendAuditRows(db, rows),
    lastAuditSeq: () => lastAuditSeq(db),
    listAuditRows: (filter) => listAuditRows(db, filter),
    exportCursor: (sink) => runPgSteps(db.query, eventsCalls.exportCursor(ctx, sink, db.hostId)),
    advanceExportCursor: (sink, seq, at) => runPgSteps(db.query, eventsCalls.advanceExportCursor(ctx, sink, db.hostId, seq, at)),
  };
}
