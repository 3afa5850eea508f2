// The event log (R-D-9), the calls in progress (R-J-5 for calls), the export
// cursors (R-AUD-5), the instance's settings and the team's hosts (R-TEAM-6),
// written once for both engines: each query (kysely, in sql/eventQueries.ts,
// compiled per dialect into sql/compiled.ts) and each operation as steps
// (sql/steps.ts), which the embedded journal runs synchronously (journal.ts)
// and the team store asynchronously (postgres/postgresEvents.ts,
// postgresCalls.ts, postgresAudit.ts, postgresHosts.ts). Recording and ending a
// call run on every MCP call through the gateway: each is one statement.
import { rowToCallInProgress, rowToEvent, type CallInProgressRecord, type CallInProgressRow, type EventRecord, type EventRow } from './journalRecords.js';
import { COMPILED } from './sql/compiled.js';
import type { Engine } from './sql/prepared.js';
import { all, changed, one, type Steps } from './sql/steps.js';
import type { EventInput, HostRecord } from './store.js';

export const EVENT_CALL_QUERIES = COMPILED.eventsCalls;

/** One engine's queries, and the host whose events and calls these are: undefined in the embedded journal, whose rows have no host (one host writes it). */
export interface EventCallContext {
  q: (typeof EVENT_CALL_QUERIES)[Engine];
  hostId: string | undefined;
}

// ------------------------------------------------------------ events

/** Appends to the event log and returns its sequence number, which only ever grows. */
export function* appendEvent(ctx: EventCallContext, event: EventInput): Steps<number> {
  const values = { host_id: ctx.hostId, kind: event.kind, ts: event.ts, session_id: event.sessionId ?? null, data: JSON.stringify(event.data) };
  const result = yield { query: ctx.q.appendEvent, values };
  // PostgreSQL returns the seq; SQLite reports the rowid, which the seq is (sql/eventQueries.ts).
  const seq = (result.rows[0] as { seq: number } | undefined)?.seq ?? result.lastRowId;
  if (seq === undefined) throw new Error(`the event log returned no seq for a ${event.kind} event`);
  return seq;
}

/** Events with seq greater than `cursor`, oldest first, at most `limit`. */
export function* eventsSince(ctx: EventCallContext, cursor: number, limit: number): Steps<EventRecord[]> {
  return (yield* all<EventRow>(ctx.q.eventsSince, { cursor, limit: Math.max(0, Math.floor(limit)) })).map(rowToEvent);
}

// ------------------------------------------------------------ calls in progress

/** Records an admitted call before the caller may run it; it stays until `endCallInProgress`. */
export function* recordCallInProgress(ctx: EventCallContext, record: CallInProgressRecord): Steps<void> {
  yield* changed(ctx.q.recordCall, {
    host_id: ctx.hostId,
    call_id: record.callId,
    session_id: record.sessionId,
    server: record.server,
    tool: record.tool,
    args_sha256: record.argsSha256,
    caller: JSON.stringify(record.caller),
    channel: record.channel ?? null,
    approval_id: record.approvalId ?? null,
    rule_id: record.ruleId ?? null,
    waited_ms: Math.round(record.waitedForConsentMs),
    authorized_at: record.authorizedAt,
  });
}

/** The call's end was recorded; false when it was not (or no longer) in progress on this host. */
export function* endCallInProgress(ctx: EventCallContext, callId: string): Steps<boolean> {
  return yield* changed(ctx.q.endCall, { host_id: ctx.hostId, call_id: callId });
}

/** This host's admitted calls whose end was never recorded, oldest first. */
export function* listCallsInProgress(ctx: EventCallContext): Steps<CallInProgressRecord[]> {
  return (yield* all<CallInProgressRow>(ctx.q.listCalls, { host_id: ctx.hostId })).map(rowToCallInProgress);
}

// ------------------------------------------------------------ export cursors

/** The seq of the last audit line export sink `sink` took from host `hostId`'s files (0: none yet). */
export function* exportCursor(ctx: EventCallContext, sink: string, hostId: string): Steps<number> {
  const row = yield* one<{ seq: number }>(ctx.q.exportCursor, { sink, host_id: hostId });
  return Number(row?.seq ?? 0);
}

/** Moves a sink's cursor forward (never back: a late acknowledgement of an earlier batch keeps the later seq). */
export function* advanceExportCursor(ctx: EventCallContext, sink: string, hostId: string, seq: number, at: number): Steps<void> {
  yield* changed(ctx.q.advanceExportCursor, { sink, host_id: hostId, seq, at });
}

// ------------------------------------------------------------ the instance's settings (daemon_meta, team_meta)

/** A setting kept across restarts (e.g. the confirmed config, the instance id), or undefined. */
export function* readMeta(ctx: EventCallContext, key: string): Steps<string | undefined> {
  return (yield* one<{ value: string }>(ctx.q.readMeta, { key }))?.value;
}

export function* writeMeta(ctx: EventCallContext, key: string, value: string): Steps<void> {
  yield* changed(ctx.q.writeMeta, { key, value });
}

// ------------------------------------------------------------ hosts (the team database only)

/** Records this host's label and pinned revision. */
export function* announceHost(ctx: EventCallContext, hostId: string, host: { name: string; revision: string; at: number }): Steps<void> {
  yield* changed(ctx.q.announceHost, { host_id: hostId, name: host.name, revision: host.revision, at: host.at });
}

export function* listHosts(ctx: EventCallContext): Steps<HostRecord[]> {
  const rows = yield* all<{ host_id: string; name: string; revision: string; updated_at: number }>(ctx.q.listHosts);
  return rows.map((row) => ({ hostId: row.host_id, name: row.name, revision: row.revision, updatedAt: row.updated_at }));
}
