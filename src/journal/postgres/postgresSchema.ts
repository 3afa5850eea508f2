// The team database's schema (R-TEAM-1): one migration per version, each in its
// own transaction under an advisory lock, so two hosts starting at once migrate
// once; `schema_version` says how far it got. A database written by a newer
// assent is refused, never downgraded. JSON is kept as text, byte for byte as
// written, like the embedded journal; times are epoch milliseconds (BIGINT).
import type pg from 'pg';
import { AssentError } from '../../core/base/errors.js';
import { PROOF_TABLES as PROOF_DDL_BY_ENGINE } from '../proofEffects.js';

/** The proof and effect tables, written once for both engines (../proofEffects.ts). */
const PROOF_DDL = PROOF_DDL_BY_ENGINE.postgres;
const PROOF_TABLES = [...PROOF_DDL.tables, ...PROOF_DDL.indexes].join(';\n   ');

/** Each entry upgrades the schema by one version; never edit a shipped entry, append a new one. */
const MIGRATIONS: readonly string[] = [
  // 1: everything a team shares, and the push of every event to the other hosts (LISTEN/NOTIFY, R-TEAM-2).
  `CREATE TABLE team_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO team_meta (key, value) VALUES ('instance_id', replace(gen_random_uuid()::text, '-', ''));
   CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     host_id TEXT NOT NULL,
     session_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     server TEXT,
     tool TEXT,
     args TEXT,
     action TEXT,
     args_sha256 TEXT NOT NULL,
     requested_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL,
     caller TEXT NOT NULL,
     handoff BOOLEAN NOT NULL,
     state TEXT NOT NULL,
     channel TEXT,
     reason TEXT,
     scope TEXT,
     decided_at BIGINT,
     owner TEXT,
     four_eyes BOOLEAN NOT NULL DEFAULT false,
     quorum INTEGER NOT NULL DEFAULT 1,
     decided_by TEXT,
     decided_host TEXT
   );
   CREATE INDEX approvals_by_state ON approvals (state, requested_at, id);
   CREATE TABLE approval_votes (
     approval_id TEXT NOT NULL,
     principal TEXT NOT NULL,
     host_id TEXT,
     channel TEXT NOT NULL,
     scope TEXT NOT NULL,
     voted_at BIGINT NOT NULL,
     PRIMARY KEY (approval_id, principal)
   );
   CREATE TABLE events (
     seq BIGSERIAL PRIMARY KEY,
     host_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     ts BIGINT NOT NULL,
     session_id TEXT,
     data TEXT NOT NULL
   );
   CREATE TABLE rules (
     id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     tool TEXT NOT NULL,
     args TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     expires_at BIGINT,
     revoked_at BIGINT,
     form TEXT NOT NULL DEFAULT 'tool',
     pattern TEXT,
     access TEXT,
     agent TEXT
   );
   CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     token_sha256 TEXT NOT NULL UNIQUE,
     audience TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL,
     revoked_at BIGINT
   );
   CREATE TABLE calls_in_progress (
     host_id TEXT NOT NULL,
     call_id TEXT NOT NULL,
     session_id TEXT NOT NULL,
     server TEXT NOT NULL,
     tool TEXT NOT NULL,
     args_sha256 TEXT NOT NULL,
     caller TEXT NOT NULL,
     channel TEXT,
     approval_id TEXT,
     rule_id TEXT,
     waited_ms BIGINT NOT NULL,
     authorized_at BIGINT NOT NULL,
     PRIMARY KEY (host_id, call_id)
   );
   ${PROOF_TABLES};
   CREATE TABLE hosts (
     host_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     revision TEXT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE TABLE audit (
     host_id TEXT NOT NULL,
     seq BIGINT NOT NULL,
     ts TEXT NOT NULL,
     line TEXT NOT NULL,
     PRIMARY KEY (host_id, seq)
   );
   CREATE FUNCTION assent_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     payload TEXT;
   BEGIN
     payload := json_build_object('seq', NEW.seq, 'host', NEW.host_id, 'kind', NEW.kind, 'ts', NEW.ts, 'session', NEW.session_id, 'data', NEW.data)::text;
     -- NOTIFY carries at most 8000 bytes: a bigger event is announced by seq and read by the listener.
     IF octet_length(payload) > 7900 THEN
       payload := json_build_object('seq', NEW.seq, 'host', NEW.host_id)::text;
     END IF;
     PERFORM pg_notify('assent_events', payload);
     RETURN NULL;
   END $$;
   CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION assent_event_notify();`,
  // 2: the passkey requirement an approval was filed under (R-REM-6), so that every host judges it from the
  // row (inside the deciding transaction), never from its own configuration. NULL: none.
  `ALTER TABLE approvals ADD COLUMN presence TEXT;`,
  // 3: export sinks' cursors (R-AUD-5), per sink and host: each host exports its own lines and resumes
  // from here after a restart; the lines themselves stay in the host's files (and the audit table).
  `CREATE TABLE IF NOT EXISTS export_cursors (
     sink TEXT NOT NULL,
     host_id TEXT NOT NULL,
     seq BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     PRIMARY KEY (sink, host_id)
   );`,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Serializes migrations of one database across hosts (an arbitrary constant key). */
const MIGRATION_LOCK = 0x61737365;

/**
 * Brings the database's schema up to this version of assent, one migration per
 * transaction; refuses one written by a newer assent (`version_mismatch`).
 */
export async function migratePostgres(client: pg.ClientBase, display: string): Promise<void> {
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const rows = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows;
      let current = rows[0]?.version;
      if (current === undefined) {
        await client.query('INSERT INTO schema_version (version) VALUES (0)');
        current = 0;
      }
      if (current > MIGRATIONS.length) {
        throw new AssentError(
          'version_mismatch',
          `the team database ${display} has schema version ${current}, newer than this assent understands (${MIGRATIONS.length}); upgrade assent on this host`,
          { details: { version: current, supported: MIGRATIONS.length } },
        );
      }
      if (current === MIGRATIONS.length) {
        await client.query('COMMIT');
        return;
      }
      await client.query(MIGRATIONS[current] ?? '');
      await client.query('UPDATE schema_version SET version = $1', [current + 1]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
