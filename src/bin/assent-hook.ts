#!/usr/bin/env node
// The agent hook's own entry (R-HOOK-8): `assent-hook.js claude-code|codex|gemini [--after]`.
// It loads only what one socket round trip needs, never the CLI (SPEC §14).
//
// The build bundles this file and everything the hook imports into one
// CommonJS file, dist/bin/assent-hook.js (scripts/bundleHook.mjs): an ES module
// entry alone costs Node's ES module loader, about a fifth of `node -e 0`.
// Unbundled (tsc's output) it works the same, only slower.
export {};

const argv = process.argv.slice(2);

/**
 * The hook could not even start (a module failed to load or to evaluate): the
 * call is blocked as R-HOOK-4 asks, in Claude Code's deny form (exit 2 blocks in
 * every agent), or — for an after-event, whose call already ran — not blocked (R-HOOK-6).
 */
function notStarted(error: unknown): void {
  const what = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 500);
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

// runHookProcess answers every failure itself once it runs; this catches what comes before.
import('../heads/hook/hookProcess.js').then(({ runHookProcess }) => runHookProcess(argv)).catch(notStarted);
