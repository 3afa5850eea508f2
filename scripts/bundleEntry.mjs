// One module of tsc's output and every module it loads as one CommonJS file
// under dist/bin, bundled by rolldown: what a small entry there (the hook's,
// the confined run's) compiles and runs, with no ES module loader and no
// module resolution. Used by scripts/bundleHook.mjs and scripts/bundleConfine.mjs.
import { writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rolldown } from 'rolldown';

export const root = join(import.meta.dirname, '..');
export const binDir = join(root, 'dist', 'bin');
const BUILTIN = '\0builtin:';
/** What the import.meta rewrite (the transform below) calls: the file a module was in dist/. */
const INTRO = [
  'const __moduleDir = (rel) => process.getBuiltinModule("node:path").join(__dirname, rel);',
  'const __moduleUrl = (rel) => process.getBuiltinModule("node:url").pathToFileURL(__moduleDir(rel)).href;',
];

/** Whether `id` names a Node builtin (`node:fs`, `fs`). */
const isBuiltin = (id) => id.startsWith('node:') || builtinModules.includes(id);

/**
 * `module.exports`-free ES source exporting `names` of the built module `file`
 * with the values they have there: plain data (JSON), frozen where it was.
 * Anything else refuses, so only data is ever taken out of its module.
 */
async function dataModuleSource(file, names) {
  const module = await import(pathToFileURL(file).href);
  const lines = [];
  for (const name of names) {
    const value = module[name];
    const json = JSON.stringify(value);
    if (json === undefined || JSON.stringify(JSON.parse(json)) !== json || !isPlainData(value)) {
      throw new Error(`${file} exports ${name} as something other than plain data; scripts/bundleEntry.mjs can only inline data`);
    }
    lines.push(`export const ${name} = ${Object.isFrozen(value) ? `Object.freeze(${json})` : json};`);
  }
  return lines.join('\n');
}

function isPlainData(value) {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return true;
  if (Array.isArray(value)) return value.every(isPlainData);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(isPlainData);
}

/**
 * Bundles `input` (a file of dist/) into `bundleFile` (and its source map).
 * `dataModules` maps files of dist/ to the export names the bundle takes from
 * them: those modules are not bundled, only the values of these exports,
 * computed here from the built module (for a module whose data is wanted but
 * whose other exports load much more, such as zod). `comments: false` leaves
 * the modules' comments out (picomatch's examples say `require(…)`, which the
 * check below would take for a call); the source map still has them.
 */
export async function bundleEntry({ input, bundleFile, mark, dataModules = {}, comments = true }) {
  const data = new Map(await Promise.all(Object.entries(dataModules).map(async ([file, names]) => [file, await dataModuleSource(file, names)])));
  const plugin = {
    name: 'assent-entry-bundle',
    // A builtin is fetched where its importer runs, not hoisted to the top of the
    // bundle: a module that only one path needs costs nothing on the others.
    resolveId: (id) => (isBuiltin(id) ? { id: `${BUILTIN}${id.startsWith('node:') ? id : `node:${id}`}`, moduleSideEffects: false } : null),
    load(id) {
      if (id.startsWith(BUILTIN)) return `module.exports = process.getBuiltinModule(${JSON.stringify(id.slice(BUILTIN.length))});`;
      return data.get(id) ?? null;
    },
    // Each module keeps its own import.meta.url (the file it was in dist/), so
    // paths it builds from it stay what they were.
    transform(code, id) {
      if (!code.includes('import.meta')) return null;
      const url = `__moduleUrl(${JSON.stringify(relative(binDir, id))})`;
      const replaced = code.replaceAll('import.meta.url', url).replaceAll('import.meta.dirname', `__moduleDir(${JSON.stringify(relative(binDir, dirname(id)))})`);
      if (replaced.includes('import.meta')) throw new Error(`${id} uses import.meta beyond url and dirname; scripts/bundleEntry.mjs cannot bundle it`);
      return { code: replaced, map: null };
    },
  };
  const bundle = await rolldown({ input, platform: 'node', logLevel: 'warn', plugins: [plugin], checks: { ineffectiveDynamicImport: false } });
  const { output } = await bundle.generate({ format: 'cjs', comments, codeSplitting: false, sourcemap: true });
  await bundle.close();
  const chunks = output.filter((item) => item.type === 'chunk');
  const name = basename(bundleFile);
  if (chunks.length !== 1) throw new Error(`${name} came out as ${chunks.length} chunks, not one; scripts/bundleEntry.mjs inlines every import`);
  const [chunk] = chunks;
  for (const [pattern, what] of [[/\brequire\(/, 'a require() call'], [/\bimport\(/, 'an import() call'], [/\bimport\.meta\b/, 'import.meta']]) {
    if (pattern.test(chunk.code)) throw new Error(`${name} still has ${what}: every module it runs must be inside it (scripts/bundleEntry.mjs)`);
  }
  // The mark and the helpers the import.meta rewrite calls go first, by hand:
  // rolldown's banner and intro options are not applied to every bundle. The
  // map is shifted down by as many lines (an empty line of mappings each).
  const head = [mark, ...INTRO];
  const map = JSON.parse(chunk.map.toString());
  map.mappings = `${';'.repeat(head.length)}${map.mappings}`;
  writeFileSync(bundleFile, `${head.join('\n')}\n${chunk.code}\n//# sourceMappingURL=${name}.map\n`);
  writeFileSync(`${bundleFile}.map`, JSON.stringify(map));
  return { modules: Object.keys(chunk.modules) };
}
