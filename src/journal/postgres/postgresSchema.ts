// Applying the one migration list (../sql/migrations.ts) to the team database
// (R-TEAM-1): one step per transaction under an advisory lock, so two hosts
// starting at once migrate once; `schema_version` says how far it got. A
// database written by a newer assent is refused, never downgraded. JSON is kept
// as text, byte for byte as written, like the embedded journal; times are epoch
// milliseconds (BIGINT).
import type pg from 'pg';
import { AssentError } from '../../core/base/errors.js';
import { migrationStatements, SCHEMA_VERSION } from '../sql/migrations.js';

export const POSTGRES_SCHEMA_VERSION = SCHEMA_VERSION;

/**
 * A team database from before the one list counted its own versions 1–3, the
 * first holding the embedded steps 1–7 and the team step at once; its number is
 * told apart by `team_meta`, which the one list creates at its tenth step only.
 * From there the remaining steps run (the team step is idempotent).
 */
const LEGACY_OFFSET = 6;
const LEGACY_LAST = 3;

async function hasTable(client: pg.ClientBase, table: string): Promise<boolean> {
  const rows = (await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [table])).rows;
  return typeof rows[0]?.found === 'string';
}

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
      if (current > 0 && current <= LEGACY_LAST && (await hasTable(client, 'team_meta'))) {
        current += LEGACY_OFFSET;
        await client.query('UPDATE schema_version SET version = $1', [current]);
      }
      if (current > SCHEMA_VERSION) {
        throw new AssentError(
          'version_mismatch',
          `the team database ${display} has schema version ${current}, newer than this assent understands (${SCHEMA_VERSION}); upgrade assent on this host`,
          { details: { version: current, supported: SCHEMA_VERSION } },
        );
      }
      if (current === SCHEMA_VERSION) {
        await client.query('COMMIT');
        return;
      }
      for (const statement of migrationStatements('postgres', current + 1)) await client.query(statement);
      await client.query('UPDATE schema_version SET version = $1', [current + 1]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
