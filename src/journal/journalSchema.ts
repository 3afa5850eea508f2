// Applying the one migration list (sql/migrations.ts) to the journal: the steps
// it lacks, in order, inside one BEGIN IMMEDIATE transaction when a journal is
// opened. A journal written by a newer assent is refused, never downgraded.
import type Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';
import { migrationStatements, SCHEMA_VERSION } from './sql/migrations.js';

export const JOURNAL_SCHEMA_VERSION = SCHEMA_VERSION;

/** Brings a journal's schema up to this version of assent; refuses one written by a newer assent. */
export function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const row = db.prepare<[], { version: number }>('SELECT version FROM schema_version').get();
    const current = row?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new AssentError(
        'version_mismatch',
        `the journal ${path} has schema version ${current}, newer than this assent understands (${SCHEMA_VERSION}); upgrade assent or point ASSENT_HOME elsewhere`,
        { details: { path, version: current, supported: SCHEMA_VERSION } },
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version += 1) for (const statement of migrationStatements('sqlite', version)) db.exec(statement);
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(SCHEMA_VERSION);
    else db.prepare('UPDATE schema_version SET version = ?').run(SCHEMA_VERSION);
  }).immediate();
}
