// The queries of the event log, the calls in progress, the export cursors, the
// instance's settings and the team's hosts, written once with kysely for both
// engines (../eventsCalls.ts runs them). Only queries.ts calls this, when
// compiled.ts is written; nothing here loads kysely at run time (type imports only).
//
// What truly differs is decided here, per query, by `engine`:
// - The embedded journal is one host's: its events and calls in progress have
//   no host_id column (migrations.ts marks it PostgreSQL-only). A condition on
//   host_id that both engines could run would need that column in SQLite too, a
//   new migration, and `OR host_id IS NULL` on every call (for the rows an older
//   journal wrote) on the gateway's hot path; so the team database's queries
//   carry host_id and the journal's do not, and the operations pass it to both
//   (a value no slot asks for is not bound).
// - The instance's settings are in daemon_meta on SQLite and team_meta on
//   PostgreSQL: the same two columns, under another name.
// - An event's seq: PostgreSQL's insert returns it, SQLite's reports its rowid
//   (RETURNING would cost the embedded daemon's every event ~3 µs more).
// - The team's hosts exist on PostgreSQL only; their SQLite text is never run.
import type { Generated, Kysely } from 'kysely';
import type { CallInProgressRow, EventRow } from '../journalRecords.js';
import { param, type Engine } from './prepared.js';

interface MetaTable {
  key: string;
  value: string;
}

/** host_id of events and calls in progress is the team database's only. */
export interface EventCallTables {
  events: Omit<EventRow, 'seq'> & { seq: Generated<number>; host_id?: string };
  calls_in_progress: CallInProgressRow & { host_id?: string };
  export_cursors: { sink: string; host_id: string; seq: number; updated_at: number };
  daemon_meta: MetaTable;
  team_meta: MetaTable;
  hosts: { host_id: string; name: string; revision: string; updated_at: number };
}

const CALL_COLUMNS = ['call_id', 'session_id', 'server', 'tool', 'args_sha256', 'caller', 'channel', 'approval_id', 'rule_id', 'waited_ms', 'authorized_at'] as const;

export function eventCallQueries(db: Kysely<EventCallTables>, engine: Engine) {
  const team = engine === 'postgres';
  const meta = team ? 'team_meta' : 'daemon_meta';
  const event = { kind: param('kind'), ts: param<number>('ts'), session_id: param<string | null>('session_id'), data: param('data') };
  const call = {
    call_id: param('call_id'),
    session_id: param('session_id'),
    server: param('server'),
    tool: param('tool'),
    args_sha256: param('args_sha256'),
    caller: param('caller'),
    channel: param<string | null>('channel'),
    approval_id: param<string | null>('approval_id'),
    rule_id: param<string | null>('rule_id'),
    waited_ms: param<number>('waited_ms'),
    authorized_at: param<number>('authorized_at'),
  };
  const calls = db.deleteFrom('calls_in_progress');
  const listCalls = db.selectFrom('calls_in_progress').select(CALL_COLUMNS);
  return {
    // The seq: PostgreSQL returns it; SQLite's run reports the rowid it gave the row (the seq is that rowid), which
    // costs less than RETURNING on this path, taken once per event.
    appendEvent: (team ? db.insertInto('events').values({ host_id: param('host_id'), ...event }).returning('seq') : db.insertInto('events').values(event)).compile(),
    eventsSince: db
      .selectFrom('events')
      .select(['seq', 'kind', 'ts', 'session_id', 'data'])
      .where('seq', '>', param<number>('cursor'))
      .orderBy('seq')
      .limit(param<number>('limit'))
      .compile(),
    recordCall: db
      .insertInto('calls_in_progress')
      .values(team ? { host_id: param('host_id'), ...call } : call)
      .compile(),
    endCall: (team ? calls.where('host_id', '=', param('host_id')) : calls).where('call_id', '=', param('call_id')).compile(),
    listCalls: (team ? listCalls.where('host_id', '=', param('host_id')) : listCalls).orderBy('authorized_at').orderBy('call_id').compile(),
    exportCursor: db.selectFrom('export_cursors').select('seq').where('sink', '=', param('sink')).where('host_id', '=', param('host_id')).compile(),
    // Forward only, in a CASE both engines run (SQLite's two-argument max() is GREATEST on PostgreSQL).
    advanceExportCursor: db
      .insertInto('export_cursors')
      .values({ sink: param('sink'), host_id: param('host_id'), seq: param<number>('seq'), updated_at: param<number>('at') })
      .onConflict((oc) =>
        oc.columns(['sink', 'host_id']).doUpdateSet((eb) => ({
          seq: eb.case().when('excluded.seq', '>', eb.ref('export_cursors.seq')).then(eb.ref('excluded.seq')).else(eb.ref('export_cursors.seq')).end(),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .compile(),
    readMeta: db.selectFrom(meta).select('value').where('key', '=', param('key')).compile(),
    writeMeta: db
      .insertInto(meta)
      .values({ key: param('key'), value: param('value') })
      .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
      .compile(),
    announceHost: db
      .insertInto('hosts')
      .values({ host_id: param('host_id'), name: param('name'), revision: param('revision'), updated_at: param<number>('at') })
      .onConflict((oc) =>
        oc.column('host_id').doUpdateSet((eb) => ({ name: eb.ref('excluded.name'), revision: eb.ref('excluded.revision'), updated_at: eb.ref('excluded.updated_at') })),
      )
      .compile(),
    listHosts: db.selectFrom('hosts').select(['host_id', 'name', 'revision', 'updated_at']).orderBy('name').orderBy('host_id').compile(),
  };
}
