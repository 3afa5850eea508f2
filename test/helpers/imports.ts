// Reading a source file's imports for the architecture tests: every static
// import/export-from, side-effect import and dynamic import() with a literal.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The specifiers a TypeScript source imports, in order of appearance. */
export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? match[2] ?? match[3] ?? '');
  return specifiers;
}

/** Every .ts file under `dir`, recursively. */
export function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listTs(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Static `import … from 'x'` and `import 'x'` specifiers: what loading the file loads. `import type` and dynamic `import()` are left out. */
export function staticImportsOf(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/^import\s+(?!type\s)(?:[^'"]*?\sfrom\s*)?['"]([^'"]+)['"]/gm)) specifiers.push(match[1] ?? '');
  return specifiers;
}

/** Every module `entry` loads statically, transitively: paths relative to `srcDir` for its own files, bare specifiers for packages. */
export function staticGraph(srcDir: string, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    const key = relative(srcDir, file);
    if (seen.has(key)) return;
    seen.add(key);
    for (const spec of staticImportsOf(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
      else seen.add(spec);
    }
  };
  visit(entry);
  return seen;
}
