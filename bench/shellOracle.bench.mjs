// SPEC §14 "shell soundness (differential against real bash)": 50,000 generated
// command lines run with real bash in the oracle's sandbox (PATH = logging shims
// only) and are judged by dist/'s default policy. Target: 0 programs executed that
// no judged part names, 0 `allow` decisions that ran anything outside the allowed
// models (or wrote outside the cwd, or read a credential). The oracle and the
// generator are test helpers in TypeScript; vite's runnerImport loads them.
// ORACLE_BENCH_RUNS / ORACLE_BENCH_SEED override the count and the seed.
import { runnerImport } from 'vite';
import { compileAgentPolicy } from '../dist/core/policy/agentPolicyConfig.js';
import { DEFAULT_CONFIG } from '../dist/core/config/config.js';
import { judgeShell } from '../dist/shell/judgeAction.js';
import { hostPathVars } from '../dist/shell/resolvePaths.js';
import { loadShellParser } from '../dist/shell/shellParser.js';

const RUNS = Number(process.env.ORACLE_BENCH_RUNS ?? 50_000);
const SEED = Number(process.env.ORACLE_BENCH_SEED ?? 20_260_018);
/** Results are checked and dropped a slice at a time: 50,000 of them (with their logs) never sit in memory at once. */
const SLICE = 1000;
const EXAMPLES = 20;

const helper = async (name) => (await runnerImport(new URL(`../test/helpers/${name}`, import.meta.url).pathname)).module;

/** How many ran, how many were found wanting, and the time per command, as bench rows. */
export async function benchShellOracle() {
  const { createBashOracle, defaultPolicyJudge } = await helper('bashOracle.ts');
  const { sampleCommands } = await helper('shellGrammar.ts');
  const parser = await loadShellParser();
  const judge = defaultPolicyJudge({ parser, policy: DEFAULT_CONFIG.policy, compileAgentPolicy, hostPathVars, judgeShell });
  const oracle = await createBashOracle({ judge, workers: 4 });
  let ran = 0;
  let wanting = 0;
  let unjudged = 0;
  let outsideModels = 0;
  let allowed = 0;
  const byKind = {};
  const examples = [];
  const started = performance.now();
  try {
    const commands = sampleCommands(SEED, RUNS);
    for (let from = 0; from < RUNS; from += SLICE) {
      const slice = commands.slice(from, from + SLICE);
      const results = await oracle.check(slice);
      for (const [i, result] of results.entries()) {
        ran += 1;
        if (result.verdict.decision === 'allow') allowed += 1;
        if (result.findings.length === 0) continue;
        wanting += 1;
        const kinds = [...new Set(result.findings.map((f) => f.kind))];
        for (const kind of kinds) byKind[kind] = (byKind[kind] ?? 0) + 1;
        if (kinds.includes('unjudged')) unjudged += 1;
        if (result.verdict.decision === 'allow' && kinds.some((k) => k !== 'unjudged')) outsideModels += 1;
        if (examples.length < EXAMPLES) examples.push({ run: from + i, command: result.command, decision: result.verdict.decision, findings: result.findings.map((f) => `${f.kind}: ${f.detail}`) });
      }
      process.stderr.write(`  shell oracle: ${ran}/${RUNS} run, ${wanting} found wanting\n`);
    }
  } finally {
    await oracle[Symbol.asyncDispose]();
  }
  const perCommand = (performance.now() - started) / Math.max(1, ran);
  const what = `shell soundness vs real bash (seed ${SEED}, ${oracle.namespace ? 'mount namespace' : 'no namespace'})`;
  return [
    { name: `${what}: commands run`, value: ran, unit: '', target: RUNS, targetText: `${RUNS}`, ok: ran === RUNS, allowed },
    { name: `${what}: programs executed that no judged part names`, value: unjudged, unit: 'commands', target: 0, targetText: '0', ok: unjudged === 0 },
    { name: `${what}: allow decisions that ran, wrote or read outside the allowed models`, value: outsideModels, unit: 'commands', target: 0, targetText: '0', ok: outsideModels === 0 },
    { name: `${what}: commands found wanting`, value: wanting, unit: 'commands', target: 0, targetText: '0', ok: wanting === 0, byKind, examples },
    { name: `${what}: time per command (judge + bash run + checks, 4 workers)`, value: Math.round(perCommand * 100) / 100, unit: 'ms', target: NaN, targetText: '-' },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchShellOracle(), null, 2));
}
