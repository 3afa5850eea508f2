// Parses a shell command line (bash dialect) with tree-sitter's bash grammar
// (web-tree-sitter with the tree-sitter-bash package's own wasm) and
// turns it into plain data (core/policy/shellCommand.ts): every simple command it would
// run, with `-c`/`eval` strings parsed again and wrappers unwrapped (R-SH-1). The
// walk itself is shellDecompose.ts; this file loads the grammar, once, in the
// daemon, never in the hook (R-HOOK-8).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as TreeSitter from 'web-tree-sitter';
import { AssentError } from '../core/base/errors.js';
import { resourceFaultHint } from '../core/base/resourceFaults.js';
import type { ParsedShell } from '../core/policy/shellCommand.js';
import { MAX_COMMAND_CHARS, decomposeShell } from './shellDecompose.js';

export { MAX_COMMAND_CHARS };

/** A loaded bash parser. `parse` is synchronous and costs about a tenth of a millisecond for a 20-part line. */
export interface ShellParser {
  parse(source: string): ParsedShell;
}

let loading: Promise<ShellParser> | undefined;
let loaded: ShellParser | undefined;
let language: TreeSitter.Language | undefined;

/** The bash parser if it has loaded already (so a caller can decide without waiting). */
export function loadedShellParser(): ShellParser | undefined {
  return loaded;
}

/** The bash parser, loaded on first use and kept for the life of the process. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= createParser().then((parser) => (loaded = parser)).catch((error: unknown) => {
    loading = undefined;
    // Out of descriptors or under an address-space limit, reinstalling would fix nothing: say what would.
    const hint = resourceFaultHint(error);
    const message = hint === undefined ? `the bash grammar could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall assent` : `the bash grammar could not be loaded: ${hint}`;
    throw new AssentError('internal', message, { cause: error });
  });
  return loading;
}

/** The loaded bash grammar, for the test that every node type it can produce is listed in nodeTypes.ts (R-SH-8). */
export async function loadBashLanguage(): Promise<TreeSitter.Language> {
  await loadShellParser();
  return language as TreeSitter.Language;
}

/**
 * The bash grammar built for the web runtime: the copy the build puts beside
 * this file (the published package carries only that, not the 20 MB
 * tree-sitter-bash package with its C sources and native prebuilds), or, run
 * from the sources, the tree-sitter-bash package's own (it has no exports map).
 */
function bashGrammarPath(require: NodeJS.Require): string {
  const beside = fileURLToPath(new URL('./tree-sitter-bash.wasm', import.meta.url));
  return existsSync(beside) ? beside : require.resolve('tree-sitter-bash/tree-sitter-bash.wasm');
}

async function createParser(): Promise<ShellParser> {
  const require = createRequire(import.meta.url);
  const ts = require('web-tree-sitter') as typeof TreeSitter;
  await ts.Parser.init();
  language = await ts.Language.load(bashGrammarPath(require));
  const parser = new ts.Parser();
  parser.setLanguage(language);
  return { parse: (source) => decomposeShell(parser, source) };
}
