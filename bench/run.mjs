// `npm run bench`: runs every bench/*.bench.mjs against the built dist/ in one
// process, prints one table of measured values against the SPEC §14 targets,
// and writes the rows as JSON under bench/results/. Set BENCH_ONLY=name to run
// a subset (matched against the file name).
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = import.meta.dirname;
const only = process.env.BENCH_ONLY;
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => !only || f.includes(only))
  .sort();

const rows = [];
for (const file of files) {
  const module = await import(pathToFileURL(join(dir, file)).href);
  for (const [name, fn] of Object.entries(module)) {
    if (!name.startsWith('bench') || typeof fn !== 'function') continue;
    process.stderr.write(`running ${file} ${name}…\n`);
    try {
      const result = await fn();
      for (const row of Array.isArray(result) ? result : [result]) rows.push({ file, ...row });
    } catch (error) {
      rows.push({ file, name: `${name} FAILED: ${error instanceof Error ? error.message : String(error)}`, value: NaN, unit: '', target: NaN, ok: false });
    }
  }
}

const fmt = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : String(v ?? ''));
const table = [['measure', 'value', 'unit', 'target', 'ratio', 'ok']];
for (const row of rows) {
  const ratio = typeof row.value === 'number' && typeof row.target === 'number' && row.target !== 0 ? row.value / row.target : NaN;
  table.push([row.name, fmt(row.value), row.unit ?? '', row.targetText ?? fmt(row.target), Number.isFinite(ratio) ? ratio.toFixed(2) : '-', row.ok ? 'yes' : row.ok === false ? 'NO' : '-']);
}
const widths = table[0].map((_, i) => Math.max(...table.map((r) => String(r[i]).length)));
for (const [i, r] of table.entries()) {
  console.log(r.map((c, j) => String(c).padEnd(widths[j])).join('  '));
  if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}

mkdirSync(join(dir, 'results'), { recursive: true });
const out = join(dir, 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(out, `${JSON.stringify({ node: process.version, cpus: (await import('node:os')).cpus().length, rows }, null, 2)}\n`);
console.log(`\nwritten ${out}`);
