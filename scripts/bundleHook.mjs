// The hook's entry as one CommonJS file (SPEC §14, R-HOOK-8): tsc's output of
// src/bin/assent-hook.ts and every module it loads, bundled by rolldown into
// dist/bin/assent-hook.js in place. One file in dist/bin's CommonJS scope starts
// without Node's ES module loader and reads no other module from disk. The
// modules only auto-spawn needs are in it too, evaluated (with the builtins
// they import) only when it runs.
import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { rolldown } from 'rolldown';

const root = join(import.meta.dirname, '..');
const binDir = join(root, 'dist', 'bin');
const entry = join(binDir, 'assent-hook.js');
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

const MARK = '// Bundled by scripts/bundleHook.mjs';
if (readFileSync(entry, 'utf8').includes(MARK)) throw new Error(`${entry} is already the bundle; run \`npm run build\` (tsc emits the entry again, then this bundles it)`);

const bundle = await rolldown({ input: entry, platform: 'node', logLevel: 'warn', plugins: [hookBundle], checks: { ineffectiveDynamicImport: false } });
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
writeFileSync(entry, `${chunk.code}\n//# sourceMappingURL=assent-hook.js.map\n`);
writeFileSync(`${entry}.map`, chunk.map.toString());
chmodSync(entry, 0o755);
