// The hook as one CommonJS file (SPEC §14, R-HOOK-8): tsc's output of
// heads/hook/hookProcess.ts and every module it loads, bundled by rolldown into
// dist/bin/assent-hook.bundle.js, which dist/bin/assent-hook.js (the entry,
// src/bin/assent-hook.ts) compiles and runs. One file read and compiled, no
// ES module loader, no module resolution. The modules only auto-spawn needs
// are in it too, evaluated (with the builtins they import) only when it runs.
// Then one trial allow against a stand-in daemon fills the bundle's V8 code
// cache, dist/bin/assent-hook.bundle.cache (scripts/hookCodeCache.mjs).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { rolldown } from 'rolldown';

const root = join(import.meta.dirname, '..');
const binDir = join(root, 'dist', 'bin');
const input = join(root, 'dist', 'heads', 'hook', 'hookProcess.js');
const bundleFile = join(binDir, 'assent-hook.bundle.js');
const cacheFile = join(binDir, 'assent-hook.bundle.cache');
const MARK = '// Bundled by scripts/bundleHook.mjs';
const BUILTIN = '\0builtin:';

// dist/bin is a CommonJS scope, like src/bin, whose files tsc emitted as CommonJS.
copyFileSync(join(root, 'src', 'bin', 'package.json'), join(binDir, 'package.json'));

/** Whether `id` names a Node builtin (`node:fs`, `fs`). */
const isBuiltin = (id) => id.startsWith('node:') || builtinModules.includes(id);

const hookBundle = {
  name: 'assent-hook-bundle',
  // A builtin is fetched where its importer runs, not hoisted to the top of the
  // bundle: auto-spawn's node:child_process costs every run otherwise.
  resolveId: (id) => (isBuiltin(id) ? { id: `${BUILTIN}${id.startsWith('node:') ? id : `node:${id}`}`, moduleSideEffects: false } : null),
  load: (id) => (id.startsWith(BUILTIN) ? `module.exports = process.getBuiltinModule(${JSON.stringify(id.slice(BUILTIN.length))});` : null),
  // Each module keeps its own import.meta.url (the file it was in dist/), so
  // paths it builds from it (auto-spawn's CLI entry) stay what they were.
  transform(code, id) {
    if (!code.includes('import.meta')) return null;
    const url = `__moduleUrl(${JSON.stringify(relative(binDir, id))})`;
    const replaced = code.replaceAll('import.meta.url', url).replaceAll('import.meta.dirname', `__moduleDir(${JSON.stringify(relative(binDir, dirname(id)))})`);
    if (replaced.includes('import.meta')) throw new Error(`${id} uses import.meta beyond url and dirname; scripts/bundleHook.mjs cannot bundle it`);
    return { code: replaced, map: null };
  },
};

const bundle = await rolldown({ input, platform: 'node', logLevel: 'warn', plugins: [hookBundle], checks: { ineffectiveDynamicImport: false } });
const { output } = await bundle.generate({
  format: 'cjs',
  banner: MARK,
  codeSplitting: false,
  sourcemap: true,
  intro: [
    'const __moduleDir = (rel) => process.getBuiltinModule("node:path").join(__dirname, rel);',
    'const __moduleUrl = (rel) => process.getBuiltinModule("node:url").pathToFileURL(__moduleDir(rel)).href;',
  ].join('\n'),
});
await bundle.close();
const chunks = output.filter((item) => item.type === 'chunk');
if (chunks.length !== 1) throw new Error(`the hook bundle came out as ${chunks.length} chunks, not one; scripts/bundleHook.mjs inlines every import`);
const [chunk] = chunks;
for (const [pattern, what] of [[/\brequire\(/, 'a require() call'], [/\bimport\(/, 'an import() call'], [/\bimport\.meta\b/, 'import.meta']]) {
  if (pattern.test(chunk.code)) throw new Error(`the hook bundle still has ${what}: every module it runs must be inside it (scripts/bundleHook.mjs)`);
}
writeFileSync(bundleFile, `${chunk.code}\n//# sourceMappingURL=assent-hook.bundle.js.map\n`);
writeFileSync(`${bundleFile}.map`, chunk.map.toString());

// The code cache: V8's code for what one allow runs, compiled during a trial allow.
rmSync(cacheFile, { force: true });
const event = { session_id: 'build', cwd: '/', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: 'toolu_build' };
const trial = spawnSync(process.execPath, [join(root, 'scripts', 'hookCodeCache.mjs')], { input: JSON.stringify(event), encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
if (trial.status !== 0 || !trial.stdout.includes('"permissionDecision":"allow"') || !existsSync(cacheFile)) {
  throw new Error(`the bundled hook did not allow in its trial run (exit ${trial.status}): ${trial.stdout}${trial.stderr}`);
}
