#!/usr/bin/env node
// The entry an agent's confined command runs (R-SH-14):
// `node assent-confine.js [--profile DIGEST] --command TEXT`, what the daemon
// rewrites a confined command into. It does what `assent confine` does
// (heads/cli/commands/confine.ts), without loading the CLI: every confined
// `npm test` pays its start-up.
//
// The build (scripts/bundleConfine.mjs) puts that module and what it imports
// into one CommonJS file beside this one, assent-confine.bundle.js, and V8's
// code for it into assent-confine.bundle.cache; this entry compiles the bundle
// with that cache (one a V8 does not accept is ignored). Without a bundle
// (tsc's output alone) the ES modules are imported instead. Whatever fails
// before the command runs exits 126: nothing of it ran.
const argv = process.argv.slice(2);

/** The shell's "found but cannot be executed", as the confined run itself uses it. */
const CANNOT_RUN = 126;

type RunConfineArgv = (argv: readonly string[]) => Promise<number>;

function notStarted(error: unknown): void {
  const what = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 500);
  process.stderr.write(`assent confine: the confined run could not start (${what}); nothing was run; \`assent doctor\` checks the installation\n`);
  process.exitCode = CANNOT_RUN;
}

interface CompiledBundle {
  /** The compiled bundle (a vm.Script); run() evaluates it and returns what it exports. */
  script: { cachedDataRejected?: boolean; createCachedData(): Buffer; runInThisContext(): unknown };
  run(): { runConfineArgv: RunConfineArgv };
}

/** The bundle beside this file, compiled with its code cache; undefined when there is no bundle. */
function compileBundle(dir: string = __dirname): CompiledBundle | undefined {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const { Script } = process.getBuiltinModule('node:vm');
  const file = `${dir}/assent-confine.bundle.js`;
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${dir}/assent-confine.bundle.cache`);
  } catch {
    // No cache: V8 compiles the bundle itself.
  }
  // CommonJS's own wrapper, so the bundle runs as if required (it requires nothing).
  const script = new Script(`(function (exports, module, __filename, __dirname) {${source}\n})`, cachedData === undefined ? { filename: file } : { filename: file, cachedData });
  return {
    script,
    run: () => {
      const bundle = { exports: {} as { runConfineArgv: RunConfineArgv } };
      (script.runInThisContext() as (exports: object, module: object, filename: string, dirname: string) => void)(bundle.exports, bundle, file, dir);
      return bundle.exports;
    },
  };
}

/** runConfineArgv from the bundle, or from the ES modules when there is none. */
async function loadConfine(): Promise<RunConfineArgv> {
  const bundle = compileBundle();
  if (bundle !== undefined) return bundle.run().runConfineArgv;
  return (await import('../heads/cli/commands/confine.js')).runConfineArgv;
}

// Required rather than run (scripts/confineCodeCache.mjs, to fill the code cache), it only exports.
if (require.main === module) {
  // A reader gone from stderr is not a reason to change the command's exit code.
  process.stderr.on('error', () => undefined);
  loadConfine()
    .then((runConfineArgv) => runConfineArgv(argv))
    .then((code) => {
      process.exitCode = code;
    }, notStarted);
} else module.exports = { compileBundle };
