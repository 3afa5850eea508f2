// The small entries of dist/bin as one CommonJS file each (SPEC §14),
// bundled by scripts/bundleEntry.mjs. The hook (R-HOOK-8): tsc's output of
// heads/hook/hookProcess.ts and every module it loads, in
// dist/bin/assent-hook.bundle.js, which dist/bin/assent-hook.js (the entry,
// src/bin/assent-hook.ts) compiles and runs. One file read and compiled, no
// ES module loader, no module resolution. The modules only auto-spawn needs
// are in it too, evaluated (with the builtins they import) only when it runs.
// Then one trial allow against a stand-in daemon fills the bundle's V8 code
// cache, dist/bin/assent-hook.bundle.cache (scripts/hookCodeCache.mjs).
// Last, the confined run's entry (scripts/bundleConfine.mjs).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { binDir, bundleEntry, root } from './bundleEntry.mjs';
import { bundleConfine } from './bundleConfine.mjs';

const bundleFile = join(binDir, 'assent-hook.bundle.js');
const cacheFile = join(binDir, 'assent-hook.bundle.cache');

// dist/bin is a CommonJS scope, like src/bin, whose files tsc emitted as CommonJS.
copyFileSync(join(root, 'src', 'bin', 'package.json'), join(binDir, 'package.json'));

await bundleEntry({ input: join(root, 'dist', 'heads', 'hook', 'hookProcess.js'), bundleFile, mark: '// Bundled by scripts/bundleHook.mjs' });

// The code cache: V8's code for what one allow runs, compiled during a trial allow.
rmSync(cacheFile, { force: true });
const event = { session_id: 'build', cwd: '/', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: 'toolu_build' };
const trial = spawnSync(process.execPath, [join(root, 'scripts', 'hookCodeCache.mjs')], { input: JSON.stringify(event), encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
if (trial.status !== 0 || !trial.stdout.includes('"permissionDecision":"allow"') || !existsSync(cacheFile)) {
  throw new Error(`the bundled hook did not allow in its trial run (exit ${trial.status}): ${trial.stdout}${trial.stderr}`);
}

await bundleConfine();
