// Issue 38, "Words": 50,000 generated words (quoting inside brackets, braces and
// tildes) expanded by real bash and read by dist/'s word analysis. Target: 0
// words that assent reads as static and bash expands to something else.
// WORD_BENCH_RUNS / WORD_BENCH_SEED override the count and the seed.
import { runnerImport } from 'vite';
import { loadShellParser } from '../dist/shell/shellParser.js';

const RUNS = Number(process.env.WORD_BENCH_RUNS ?? 50_000);
const SEED = Number(process.env.WORD_BENCH_SEED ?? 20_261_038);

export async function benchWordOracle() {
  const { checkWords } = (await runnerImport(new URL('../test/helpers/wordOracle.ts', import.meta.url).pathname)).module;
  const parser = await loadShellParser();
  const started = performance.now();
  const result = checkWords(parser, SEED, RUNS);
  const perWord = (performance.now() - started) / Math.max(1, result.checked);
  const what = `word expansion vs real bash (seed ${SEED})`;
  return [
    { name: `${what}: words checked`, value: result.checked, unit: '', target: RUNS, targetText: `${RUNS}`, ok: result.checked === RUNS, staticWords: result.staticWords },
    { name: `${what}: static readings bash disagrees with`, value: result.disagreements.length, unit: 'words', target: 0, targetText: '0', ok: result.disagreements.length === 0, examples: result.disagreements.slice(0, 20) },
    { name: `${what}: time per word (parse + bash)`, value: Math.round(perWord * 1000) / 1000, unit: 'ms', target: NaN, targetText: '-' },
  ];
}
