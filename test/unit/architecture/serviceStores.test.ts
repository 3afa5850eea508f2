// Issue 21 item 1: the service (and the operations over it) depends only on the
// narrow store interfaces it uses (src/journal/store.ts), never on an engine
// (journal/postgres/*, sqliteStore) and never on the whole `Store`, which only
// the composition root (heads/daemon/daemonRuntime.ts) assembles.
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, listTs } from '../../helpers/imports.js';

const srcDir = join(import.meta.dirname, '../../../src');
const CHECKED = ['service', 'operations'];

/** The source without comments and string literals, so that only code can name a type. */
function codeOf(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
}

/** What a file of the service does that it may not: each problem names the import or the type. */
export function storeViolations(file: string, source: string): string[] {
  const problems: string[] = [];
  for (const specifier of importsOf(source)) {
    if (!specifier.startsWith('.')) continue;
    const target = relative(srcDir, normalize(join(dirname(file), specifier))).replace(/\\/g, '/');
    if (target.startsWith('journal/postgres/')) problems.push(`imports the PostgreSQL engine (${specifier})`);
    if (/^journal\/sqliteStore(\.[jt]s)?$/.test(target)) problems.push(`imports the SQLite engine (${specifier})`);
  }
  if (/\bStore\b/.test(codeOf(source))) problems.push('names the whole `Store`; depend on the narrow interfaces of journal/store.ts it uses');
  return problems;
}

describe('the service depends on narrow store interfaces only', () => {
  for (const layer of CHECKED) {
    it(`no file in src/${layer} imports an engine or names the whole Store`, () => {
      const found: string[] = [];
      for (const file of listTs(join(srcDir, layer))) {
        for (const problem of storeViolations(file, readFileSync(file, 'utf8'))) found.push(`${relative(srcDir, file)} ${problem}`);
      }
      expect(found).toEqual([]);
    });
  }

  it('the check catches each kind of dependency it forbids', () => {
    const file = join(srcDir, 'service', 'example.ts');
    expect(storeViolations(file, "import { PostgresStore } from '../journal/postgres/postgresStore.js';")).toHaveLength(1);
    expect(storeViolations(file, "import { sqliteStoreParts } from '../journal/sqliteStore.js';")).toHaveLength(1);
    expect(storeViolations(file, "const m = await import('../journal/postgres/postgresProofs.js');")).toHaveLength(1);
    expect(storeViolations(file, "import type { Store } from '../journal/store.js';\nlet s: Store;")).toHaveLength(1);
    expect(storeViolations(file, "import type { ApprovalStore, RuleStore } from '../journal/store.js';\n// the whole Store is not named here\nconst t = 'Store';")).toEqual([]);
  });

  it('`Store` is only the composition of the narrow interfaces', () => {
    const source = codeOf(readFileSync(join(srcDir, 'journal', 'store.ts'), 'utf8'));
    const declaration = /export type Store = ([^;]+);/.exec(source)?.[1];
    expect(declaration, 'store.ts declares `Store` as a type alias').toBeDefined();
    const parts = (declaration ?? '').split('&').map((part) => part.trim());
    expect(parts.every((part) => /^[A-Z]\w*Store$|^StoreInfo$/.test(part))).toBe(true);
    expect(new Set(parts)).toEqual(
      new Set(['StoreInfo', 'ApprovalStore', 'EventStore', 'ProofEffectStore', 'RuleStore', 'TokenStore', 'CallsInProgressStore', 'HostStore', 'AuditMirrorStore']),
    );
    expect(source).not.toMatch(/interface Store\b/);
  });
});
