// R-ARCH-1: src/core is pure. It imports nothing from other src/ folders and no
// node: module (nor a bare builtin such as 'fs').
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const coreDir = join(import.meta.dirname, '../../../src/core');

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listTs(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? match[2] ?? match[3] ?? '');
  return specifiers;
}

export function forbiddenCoreImports(file: string, source: string): string[] {
  const builtins = new Set(builtinModules);
  return importsOf(source).filter(
    (spec) =>
      spec.startsWith('node:') ||
      builtins.has(spec.split('/')[0] ?? '') ||
      (spec.startsWith('.') && !join(file, '..', spec).startsWith(coreDir)),
  );
}

describe('R-ARCH-1 core purity', () => {
  it('no file under src/core imports a node: module or another src folder', () => {
    const offenders = listTs(coreDir).flatMap((file) =>
      forbiddenCoreImports(file, readFileSync(file, 'utf8')).map((spec) => `${relative(coreDir, file)} -> ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the check itself catches a node: import, a bare builtin and an escape from core', () => {
    const file = join(coreDir, 'x.ts');
    expect(forbiddenCoreImports(file, "import { readFileSync } from 'node:fs';")).toEqual(['node:fs']);
    expect(forbiddenCoreImports(file, "import fs from 'fs';")).toEqual(['fs']);
    expect(forbiddenCoreImports(file, "import { x } from '../journal/db.js';")).toEqual(['../journal/db.js']);
    expect(forbiddenCoreImports(file, "import { y } from './errors.js';")).toEqual([]);
  });
});
