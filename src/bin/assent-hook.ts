#!/usr/bin/env node
// The agent hook's own entry (R-HOOK-8): `assent-hook.js claude-code|codex|gemini [--after]`.
// It loads only what one socket round trip needs, never the CLI (SPEC §14).
//
// The build (scripts/bundleHook.mjs) puts the hook and everything it imports
// into one CommonJS file beside this one, assent-hook.bundle.js, and V8's code
// for it, compiled during a trial allow, into assent-hook.bundle.cache. This
// entry compiles the bundle with that cache, so the allow path reads three
// files and parses little: no ES module loader (about a fifth of `node -e 0`),
// no module resolution, little compiling. A cache V8 does not accept (another
// Node, other flags) is ignored; without a bundle (tsc's output alone) the
// hook's ES modules are imported instead. Whatever fails before the hook runs
// answers deny here (R-HOOK-4).
const argv = process.argv.slice(2);

/**
 * The hook could not even start (a file missing, a module failing to load):
 * the call is blocked as R-HOOK-4 asks, in Claude Code's deny form (exit 2
 * blocks in every agent), or — for an after-event, whose call already ran —
 * not blocked (R-HOOK-6).
 */
function notStarted(error: unknown): void {
  const what = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 500);
  // A reader that went away cannot get the answer; the exit code still says it.
  const code = argv.includes('--after') ? 0 : 2;
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => process.exit(code));
  if (argv.includes('--after')) {
    process.stderr.write(`assent: the end of this call was not recorded (the hook could not start: ${what}); its audit line stays "started".\n`);
    process.stdout.write('{}\n', () => process.exit(0));
    return;
  }
  const reason = `assent blocked this tool call: the hook could not start (${what}). The call did not run; the operator can check the hook with \`assent doctor\`.`;
  process.stderr.write(`${reason}\n`);
  const deny = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
  process.stdout.write(`${JSON.stringify(deny)}\n`, () => process.exit(2));
}

type RunHookProcess = (argv: readonly string[]) => Promise<void>;

interface CompiledBundle {
  /** The compiled bundle (a vm.Script); run() evaluates it and returns what it exports. */
  script: { cachedDataRejected?: boolean; createCachedData(): Buffer; runInThisContext(): unknown };
  run(): { runHookProcess: RunHookProcess };
}

/** The bundle beside this file, compiled with its code cache; undefined when there is no bundle. */
function compileBundle(dir: string = __dirname): CompiledBundle | undefined {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const { Script } = process.getBuiltinModule('node:vm');
  const file = `${dir}/assent-hook.bundle.js`;
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${dir}/assent-hook.bundle.cache`);
  } catch {
    // No cache: V8 compiles the bundle itself.
  }
  // CommonJS's own wrapper, so the bundle runs as if required (it requires nothing).
  const script = new Script(`(function (exports, module, __filename, __dirname) {${source}\n})`, cachedData === undefined ? { filename: file } : { filename: file, cachedData });
  return {
    script,
    run: () => {
      const bundle = { exports: {} as { runHookProcess: RunHookProcess } };
      (script.runInThisContext() as (exports: object, module: object, filename: string, dirname: string) => void)(bundle.exports, bundle, file, dir);
      return bundle.exports;
    },
  };
}

/** runHookProcess from the bundle, or from the hook's ES modules when there is none. */
async function loadHook(): Promise<RunHookProcess> {
  const bundle = compileBundle();
  if (bundle !== undefined) return bundle.run().runHookProcess;
  return (await import('../heads/hook/hookProcess.js')).runHookProcess;
}

// runHookProcess answers every failure itself once it runs; this catches what comes before.
// Required rather than run (scripts/hookCodeCache.mjs, to fill the code cache), it only exports.
if (require.main === module) loadHook().then((runHookProcess) => runHookProcess(argv)).catch(notStarted);
else module.exports = { compileBundle };
