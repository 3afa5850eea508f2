// What the published package needs at run time is in "dependencies", and only
// that is installed with it (`npm install --omit=dev`): every package src/
// loads is listed there, and the bash grammar travels as the wasm the build
// copies into dist/, not as the 20 MB tree-sitter-bash package.
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, listTs } from '../../helpers/imports.js';

const root = join(import.meta.dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative paths and node builtins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Packages a source loads at run time: imports that are not `import type`, and literal require()/require.resolve(). */
function runtimePackages(source: string): string[] {
  const code = source.replace(/^\s*import\s+type\s[^;]*;/gm, '').replace(/^\s*export\s+type\s[^;]*;/gm, '');
  const required = [...code.matchAll(/require(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] as string);
  return [...importsOf(code), ...required].flatMap((specifier) => packageOf(specifier) ?? []);
}

describe('the published package installs what it runs, and only that', () => {
  it('every package src/ loads at run time is in "dependencies" (the bash grammar fallback for a source checkout and the build-time query compiler aside)', () => {
    const missing: string[] = [];
    for (const file of listTs(join(root, 'src'))) {
      for (const name of runtimePackages(readFileSync(file, 'utf8'))) {
        const fallback = name === 'tree-sitter-bash' && file.endsWith(join('shell', 'shellParser.ts'));
        // kysely compiles the store's queries at `npm run queries`, never at run time (compiledQueries.test.ts).
        const buildTime = name === 'kysely' && file.endsWith(join('journal', 'sql', 'compile.ts')) && pkg.devDependencies[name] !== undefined;
        if (pkg.dependencies[name] === undefined && !fallback && !buildTime) missing.push(`${file.slice(root.length + 1)} loads ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('tree-sitter-bash is a dev dependency; the build puts its grammar, byte for byte, beside the parser in dist/', () => {
    expect(pkg.dependencies['tree-sitter-bash']).toBeUndefined();
    expect(pkg.devDependencies['tree-sitter-bash']).toBeDefined();
    const built = join(root, 'dist', 'shell', 'tree-sitter-bash.wasm');
    expect(existsSync(built), 'run npm run build').toBe(true);
    const own = createRequire(join(root, 'package.json')).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
    expect(readFileSync(built).equals(readFileSync(own))).toBe(true);
  });
});
