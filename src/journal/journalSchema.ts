// The journal's schema: one migration per version, applied in order inside one
// BEGIN IMMEDIATE transaction when a journal is opened. A journal written by a
// newer assent is refused, never downgraded.
import type Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';

/** Each entry upgrades the schema by one version; never edit a shipped entry, append a new one. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     session_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     server TEXT,
     tool TEXT,
     args TEXT,
     action TEXT,
     args_sha256 TEXT NOT NULL,
     requested_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     caller TEXT NOT NULL,
     handoff INTEGER NOT NULL,
     state TEXT NOT NULL,
     channel TEXT,
     reason TEXT,
     scope TEXT,
     decided_at INTEGER
   );
   CREATE INDEX approvals_by_state ON approvals (state, requested_at, id);
   CREATE TABLE events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     ts INTEGER NOT NULL,
     session_id TEXT,
     data TEXT NOT NULL
   );
   CREATE TABLE rules (
     id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     tool TEXT NOT NULL,
     args TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER,
     revoked_at INTEGER
   );
   CREATE INDEX rules_by_tool ON rules (tool);`,
  `CREATE TABLE daemon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO daemon_meta (key, value) VALUES ('instance_id', lower(hex(randomblob(16))));
   CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     token_sha256 TEXT NOT NULL UNIQUE,
     audience TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     revoked_at INTEGER
   );`,
  // Calls the daemon admitted and has not seen finish (R-J-5 for calls): a restart audits each as uncertain.
  `CREATE TABLE calls_in_progress (
     call_id TEXT PRIMARY KEY,
     session_id TEXT NOT NULL,
     server TEXT NOT NULL,
     tool TEXT NOT NULL,
     args_sha256 TEXT NOT NULL,
     caller TEXT NOT NULL,
     channel TEXT,
     approval_id TEXT,
     rule_id TEXT,
     waited_ms INTEGER NOT NULL,
     authorized_at INTEGER NOT NULL
   );`,
  // Remembered web devices (R-REM-3): sessions that outlive a restart, kept as the SHA-256 of the cookie only.
  `CREATE TABLE web_devices (
     id TEXT PRIMARY KEY,
     cookie_sha256 TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     user_agent TEXT NOT NULL,
     paired_at INTEGER NOT NULL,
     last_seen_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     revoked_at INTEGER
   );`,
  // Team identity (R-TEAM-3): the principal owning each approval's session, the host that filed it,
  // the four-eyes and quorum rules it was filed under, who resolved it and from which host; and one
  // row per approving principal (quorum votes), unique per principal so a repeat changes nothing.
  `ALTER TABLE approvals ADD COLUMN owner TEXT;
   ALTER TABLE approvals ADD COLUMN host_id TEXT;
   ALTER TABLE approvals ADD COLUMN four_eyes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE approvals ADD COLUMN quorum INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE approvals ADD COLUMN decided_by TEXT;
   ALTER TABLE approvals ADD COLUMN decided_host TEXT;
   CREATE TABLE approval_votes (
     approval_id TEXT NOT NULL,
     principal TEXT NOT NULL,
     host_id TEXT,
     channel TEXT NOT NULL,
     scope TEXT NOT NULL,
     voted_at INTEGER NOT NULL,
     PRIMARY KEY (approval_id, principal)
   );`,
  // Passkeys enrolled for passkey-confirmed approvals (R-REM-6): the public key (COSE, base64url), the
  // signature counter, who enrolled it. Never a secret: the private key stays in the authenticator.
  `CREATE TABLE passkeys (
     id TEXT PRIMARY KEY,
     credential_id TEXT NOT NULL UNIQUE,
     public_key TEXT NOT NULL,
     counter INTEGER NOT NULL,
     transports TEXT NOT NULL,
     enrolled_by TEXT NOT NULL,
     rp_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     last_used_at INTEGER
   );`,
  // Auto-approval rules for the parts of agent actions (R-POL-6): `assent rules add --command|--path|--url
  // PATTERN [--access A] [--agent A]`. `form` is tool, command, path or url; `tool` is '' for the other forms.
  `ALTER TABLE rules ADD COLUMN form TEXT NOT NULL DEFAULT 'tool';
   ALTER TABLE rules ADD COLUMN pattern TEXT;
   ALTER TABLE rules ADD COLUMN access TEXT;
   ALTER TABLE rules ADD COLUMN agent TEXT;`,
  // The passkey requirement an approval was filed under (R-REM-6), kept with it like four-eyes and quorum:
  // a later reload or a restart judges it from here, never from the configuration in force. NULL: none
  // (and for approvals filed before this column: the requirement was not recorded).
  `ALTER TABLE approvals ADD COLUMN presence TEXT;`,
  // Export sinks' cursors (R-AUD-5): per sink and host, the seq of the last audit line the sink took, so
  // delivery resumes there after a restart and the files stay the only copy of the lines themselves.
  `CREATE TABLE IF NOT EXISTS export_cursors (
     sink TEXT NOT NULL,
     host_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (sink, host_id)
   );`,
];

export const JOURNAL_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings a journal's schema up to this version of assent; refuses one written by a newer assent. */
export function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const row = db.prepare<[], { version: number }>('SELECT version FROM schema_version').get();
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new AssentError(
        'version_mismatch',
        `the journal ${path} has schema version ${current}, newer than this assent understands (${MIGRATIONS.length}); upgrade assent or point ASSENT_HOME elsewhere`,
        { details: { path, version: current, supported: MIGRATIONS.length } },
      );
    }
    for (let version = current; version < MIGRATIONS.length; version += 1) db.exec(MIGRATIONS[version] ?? '');
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
    else db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
  }).immediate();
}
