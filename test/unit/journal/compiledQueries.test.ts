// The store's queries are written once with kysely (src/journal/sql/queries.ts)
// and read at run time from src/journal/sql/compiled.ts: this fails when that
// file is stale, and when anything else under src/ loads kysely, so that the
// daemon and the gateway never pay for it at start-up.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileAll, renderCompiled } from '../../../src/journal/sql/queries.js';
import { bind } from '../../../src/journal/sql/prepared.js';
import { importsOf, listTs } from '../../helpers/imports.js';

const srcDir = join(import.meta.dirname, '../../../src');

describe('the compiled store queries', () => {
  it('src/journal/sql/compiled.ts is what queries.ts compiles to (else run `npm run queries`)', () => {
    expect(readFileSync(join(srcDir, 'journal/sql/compiled.ts'), 'utf8')).toBe(renderCompiled(compileAll()));
  });

  it('each query has the same named values on both engines, in the text its dialect wants', () => {
    const compiled = compileAll();
    for (const concern of ['proofs', 'tokenRules', 'approvals', 'eventsCalls'] as const) {
      for (const [name, sqlite] of Object.entries(compiled[concern].sqlite)) {
        const postgres = compiled[concern].postgres[name];
        expect(postgres, `${concern}.${name} on postgres`).toBeDefined();
        // The embedded journal is one host's: its events and calls in progress name no host, the team database's do.
        const hostOnlyOnPostgres = concern === 'eventsCalls' && ['appendEvent', 'recordCall', 'endCall', 'listCalls'].includes(name);
        if (hostOnlyOnPostgres) {
          expect(sqlite.slots, `${concern}.${name} on sqlite`).not.toContainEqual({ name: 'host_id' });
          expect(postgres?.slots, `${concern}.${name} on postgres`).toContainEqual({ name: 'host_id' });
        }
        expect(hostOnlyOnPostgres ? postgres?.slots.filter((slot) => !('name' in slot && slot.name === 'host_id')) : postgres?.slots).toEqual(sqlite.slots);
        expect(sqlite.sql).not.toMatch(/\$\d/);
        expect(postgres?.sql).not.toMatch(/\?/);
      }
    }
    // The one place they differ: PostgreSQL locks the proof's row, SQLite's transaction holds the write lock.
    expect(compiled.proofs.postgres['lockProofByHash']?.sql).toMatch(/for update$/);
    expect(compiled.proofs.sqlite['lockProofByHash']?.sql).not.toMatch(/for update/);
    // An event's seq: PostgreSQL's insert returns it, SQLite's run reports the rowid.
    expect(compiled.eventsCalls.postgres['appendEvent']?.sql).toMatch(/returning "seq"$/);
    expect(compiled.eventsCalls.sqlite['appendEvent']?.sql).not.toMatch(/returning/);
    // The instance's settings: daemon_meta in the journal, team_meta in the team database.
    expect(compiled.eventsCalls.sqlite['readMeta']?.sql).toMatch(/"daemon_meta"/);
    expect(compiled.eventsCalls.postgres['readMeta']?.sql).toMatch(/"team_meta"/);
  });

  it('bind puts each call value in its place and refuses a missing one', () => {
    const query = compileAll().tokenRules.postgres['listActiveRules'];
    expect(query).toBeDefined();
    if (query === undefined) return;
    expect(bind(query, { now: 5 })).toEqual([5, 5]);
    expect(() => bind(query, {})).toThrow(/needs a value for now/);
  });

  it('only sql/compile.ts loads kysely, and only queries.ts (never run by the store) loads compile.ts', () => {
    const valueImport = (source: string, module: RegExp): boolean =>
      [...source.matchAll(/^import\s+(type\s)?[^;]*?from\s*'([^']+)'/gm)].some((match) => match[1] === undefined && module.test(match[2] ?? ''));
    const sources = listTs(srcDir).map((file) => ({ file: relative(srcDir, file), source: readFileSync(file, 'utf8') }));
    expect(sources.filter(({ source }) => valueImport(source, /^kysely$/)).map(({ file }) => file)).toEqual(['journal/sql/compile.ts']);
    expect(sources.filter(({ source }) => valueImport(source, /sql\/compile\.js$|\/compile\.js$/)).map(({ file }) => file)).toEqual(['journal/sql/queries.ts']);
    expect(sources.filter(({ source }) => importsOf(source).some((specifier) => specifier.endsWith('/queries.js'))).map(({ file }) => file)).toEqual([]);
  });
});
