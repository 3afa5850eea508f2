// The import graph of src/ as the TypeScript compiler resolves it: every
// import, import type, export … from and import() with a literal, each
// resolved with the project's own compiler options (NodeNext), so a specifier
// the regexes of imports.ts would misread still lands on the right file.
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { listTs } from './imports.js';

/** The compiler options of the project's tsconfig.json. */
function projectOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath)).options;
}

/**
 * Each .ts file under `dir` (relative to it, with `/`) and the files under
 * `dir` it imports, resolved by the compiler; packages and node: modules are
 * left out.
 */
export function moduleGraph(dir: string, root = join(dir, '..')): Map<string, string[]> {
  const options = projectOptions(root);
  const host: ts.ModuleResolutionHost = ts.sys;
  const cache = ts.createModuleResolutionCache(root, (name) => name, options);
  const graph = new Map<string, string[]>();
  for (const path of listTs(dir).sort()) {
    const source = ts.sys.readFile(path) ?? '';
    const { importedFiles } = ts.preProcessFile(source, true, true);
    const mode = ts.getImpliedNodeFormatForFile(path as ts.Path, cache.getPackageJsonInfoCache(), host, options);
    const targets = new Set<string>();
    for (const imported of importedFiles) {
      const resolved = ts.resolveModuleName(imported.fileName, path, options, host, cache, undefined, mode).resolvedModule;
      if (resolved === undefined || resolved.isExternalLibraryImport === true) continue;
      const target = relative(dir, resolved.resolvedFileName).split('\\').join('/');
      if (!target.startsWith('..')) targets.add(target);
    }
    graph.set(relative(dir, path).split('\\').join('/'), [...targets]);
  }
  return graph;
}
