// The team store's audit mirror (R-TEAM-4): every host's audit lines as rows, and
// each host's export cursors over its own lines (R-AUD-5).
import type { AuditMirrorStore, AuditRow } from '../store.js';
import type { PgContext } from './postgresQuery.js';

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

async function exportCursor(db: PgContext, sink: string): Promise<number> {
  const rows = (await db.query<{ seq: string | number }>('SELECT seq FROM export_cursors WHERE sink = $1 AND host_id = $2', [sink, db.hostId])).rows;
  return Number(rows[0]?.seq ?? 0);
}

/** Forward only: a late acknowledgement of an earlier batch changes nothing. */
async function advanceExportCursor(db: PgContext, sink: string, seq: number, at: number): Promise<void> {
  await db.query(
    `INSERT INTO export_cursors (sink, host_id, seq, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (sink, host_id) DO UPDATE SET seq = GREATEST(export_cursors.seq, excluded.seq), updated_at = excluded.updated_at`,
    [sink, db.hostId, seq, at],
  );
}

export function postgresAudit(db: PgContext): AuditMirrorStore {
  return {
    appendAuditRows: (rows) => appendAuditRows(db, rows),
    lastAuditSeq: () => lastAuditSeq(db),
    listAuditRows: (filter) => listAuditRows(db, filter),
    exportCursor: (sink) => exportCursor(db, sink),
    advanceExportCursor: (sink, seq, at) => advanceExportCursor(db, sink, seq, at),
  };
}
