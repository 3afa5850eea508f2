// Issue 33, "Git as the oracle for configuration": 5,000 generated repository
// layouts and environment prefixes under real git with strace (see
// test/helpers/gitConfigOracle.ts). Targets: 0 config files git opened that
// assent did not inspect, 0 layouts where git ran the key's program and assent
// said allow. GIT_BENCH_RUNS / GIT_BENCH_SEED override the count and the seed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runnerImport } from 'vite';
import { loadShellParser } from '../dist/shell/shellParser.js';

const RUNS = Number(process.env.GIT_BENCH_RUNS ?? 5000);
const SEED = Number(process.env.GIT_BENCH_SEED ?? 20_261_033);

export async function benchGitConfigOracle() {
  if (spawnSync('strace', ['-V']).status !== 0) return [{ name: 'git configuration vs real git: strace is not installed', value: NaN, unit: '', target: NaN, ok: false }];
  const { checkGitConfigLayouts } = (await runnerImport(new URL('../test/helpers/gitConfigOracle.ts', import.meta.url).pathname)).module;
  const parser = await loadShellParser();
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-gitcfg-bench-')));
  try {
    const started = performance.now();
    const result = checkGitConfigLayouts(parser, root, SEED, RUNS);
    const perLayout = (performance.now() - started) / Math.max(1, result.checked);
    const what = `git configuration vs real git under strace (seed ${SEED})`;
    return [
      { name: `${what}: layouts checked`, value: result.checked, unit: '', target: RUNS, targetText: `${RUNS}`, ok: result.checked === RUNS, ran: result.ran },
      { name: `${what}: config files git opened, not inspected`, value: result.uninspected.length + result.mistrusted.length, unit: 'files', target: 0, targetText: '0', ok: result.uninspected.length + result.mistrusted.length === 0, examples: [...result.uninspected, ...result.mistrusted].slice(0, 20) },
      { name: `${what}: allowed where git ran the key`, value: result.unsound.length, unit: 'layouts', target: 0, targetText: '0', ok: result.unsound.length === 0, examples: result.unsound.slice(0, 20) },
      { name: `${what}: time per layout`, value: Math.round(perLayout * 10) / 10, unit: 'ms', target: NaN, targetText: '-' },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
