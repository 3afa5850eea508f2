// The team store's calls in progress (R-J-5 for calls): each host keeps and reads its own only.
import { rowToCallInProgress, type CallInProgressRecord, type CallInProgressRow } from '../journalRecords.js';
import type { CallsInProgressStore } from '../store.js';
import type { PgContext } from './postgresQuery.js';

async function recordCallInProgress(db: PgContext, record: CallInProgressRecord): Promise<void> {
  await db.query(
    `INSERT INTO calls_in_progress (host_id, call_id, session_id, server, tool, args_sha256, caller, channel, approval_id, rule_id, waited_ms, authorized_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      db.hostId,
      record.callId,
      record.sessionId,
      record.server,
      record.tool,
      record.argsSha256,
      JSON.stringify(record.caller),
      record.channel ?? null,
      record.approvalId ?? null,
      record.ruleId ?? null,
      Math.round(record.waitedForConsentMs),
      record.authorizedAt,
    ],
  );
}

async function endCallInProgress(db: PgContext, callId: string): Promise<boolean> {
  return (await db.query('DELETE FROM calls_in_progress WHERE host_id = $1 AND call_id = $2', [db.hostId, callId])).rowCount === 1;
}

async function listCallsInProgress(db: PgContext): Promise<CallInProgressRecord[]> {
  const result = await db.query<CallInProgressRow>('SELECT * FROM calls_in_progress WHERE host_id = $1 ORDER BY authorized_at, call_id', [db.hostId]);
  return result.rows.map(rowToCallInProgress);
}

export function postgresCalls(db: PgContext): CallsInProgressStore {
  return {
    recordCallInProgress: (record) => recordCallInProgress(db, record),
    endCallInProgress: (callId) => endCallInProgress(db, callId),
    listCallsInProgress: () => listCallsInProgress(db),
  };
}
