// Issue 18, Build 10 and SPEC §14 "shell soundness": real bash is the oracle for the
// shell policy. Generated command lines run in a sandbox whose PATH holds only logging
// shims; every program bash executed must be a part the default policy judged, and an
// `allow` must have run only what its parts' static words say, with no write outside
// the cwd or to a gate file and no credential read. ORACLE_SEED / ORACLE_RUNS override.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionVerdict } from '../../../src/core/policy/actionPlan.js';
import { compileAgentPolicy } from '../../../src/core/policy/agentPolicyConfig.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { hostPathVars } from '../../../src/shell/resolvePaths.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { createBashOracle, defaultPolicyJudge, describeResult, stragglers, type BashOracle, type OracleJudge, type OracleResult } from '../../helpers/bashOracle.js';
import type { FindingKind } from '../../helpers/bashOracleCheck.js';
import { ISSUE_EXAMPLES, sampleCommands, shrinkCommand } from '../../helpers/shellGrammar.js';

const SEED = Number(process.env.ORACLE_SEED ?? 18);
const RUNS = Number(process.env.ORACLE_RUNS ?? 2000);

let parser: ShellParser;
let judge: OracleJudge;
let oracle: BashOracle;
const roots: string[] = [];

async function newOracle(with_: OracleJudge, workers: number): Promise<BashOracle> {
  const created = await createBashOracle({ judge: with_, workers });
  roots.push(created.root);
  return created;
}

beforeAll(async () => {
  parser = await loadShellParser();
  judge = defaultPolicyJudge({ parser, policy: DEFAULT_CONFIG.policy, compileAgentPolicy, hostPathVars, judgeShell });
  oracle = await newOracle(judge, 4);
});

afterAll(async () => {
  await oracle[Symbol.asyncDispose]();
  // Every sandbox removed, no process left running in one.
  for (const root of roots) {
    expect(existsSync(root)).toBe(false);
    expect(stragglers(root, false)).toEqual([]);
  }
});

const kinds = (result: OracleResult): FindingKind[] => [...new Set(result.findings.map((f) => f.kind))].sort();

function report(results: readonly OracleResult[]): string {
  return results
    .filter((r) => r.findings.length > 0)
    .map((r) => describeResult(r, oracle.root))
    .join('\n\n');
}

describe('the bash oracle itself', () => {
  it('runs bash where no real program is reachable, and logs what it executed', async () => {
    const [result] = await oracle.check(['ls -la src | grep x; echo "$(cat README.md)" > out.txt; env ls; command -v rm'] as const);
    const programs = (result as OracleResult).run.executions.map((e) => [e.program, ...e.args].join(' ')).sort();
    expect(programs).toEqual(['cat README.md', 'env ls', 'grep x', 'ls', 'ls -la src']);
    expect((result as OracleResult).run.changed.some((p) => p.endsWith('/proj/out.txt'))).toBe(true);
  });

  it('finds nothing wanting in plain allowed commands the policy gets right', async () => {
    const results = await oracle.check(['ls -la', 'cat README.md | grep x', 'echo hi > out.txt', 'git status', 'ls &', 'wc -l < list.txt', 'cd src && ls', 'head -n 3 notes.txt 2>/dev/null']);
    expect(report(results)).toBe('');
  });

  it('fails a judge that allows everything and names only each top-level command (the test can fail)', async () => {
    // A deliberately unsound policy: substitutions and here-document bodies skipped, every part allowed.
    const careless: OracleJudge = {
      parse: (command) => parser.parse(command),
      judge: (command): ActionVerdict => {
        const parsed = parser.parse(command);
        const parts = parsed.commands.filter((c) => c.via === undefined && c.depth === 0).map((c) => ({ kind: 'command' as const, text: c.text, decision: 'allow' as const }));
        return { decision: 'allow', parts };
      },
    };
    await using lax = await newOracle(careless, 2);
    const results = await lax.check([
      'cat <<EOF\n$(rm -rf build)\nEOF',
      'echo x > .mcp.json',
      'echo KEY > docs/notes.md',
      'cat .env',
      'git log --outp=../x',
      'sort -S 16k --compress-prog=sh list.txt',
      'printf -v PATH %s bin; ls',
      'echo $(<~/.ssh/id_rsa)',
      'grep -r KEY ~',
      'cd vendor/lib && git show HEAD',
      // A brace expansion: bash runs `ls a b`, the careless judge allowed the word "{a,b}".
      'ls {a,b}',
    ]);
    expect(results.map(kinds)).toEqual([
      ['not-a-model', 'unjudged', 'unmatched'],
      ['wrote-gate'],
      ['wrote-gate'],
      ['read-credential'],
      ['wrote-outside'],
      ['ran-program'],
      ['foreign-program'],
      ['read-credential'],
      ['read-credential'],
      ['ran-program'],
      ['unmatched'],
    ]);
  });
});

describe('R-SH-1..10: every program real bash runs is judged, and an allow runs only what it names', () => {
  it("the examples of issue 18's Why and acceptance lines", async () => {
    const results = await oracle.check(ISSUE_EXAMPLES);
    expect(report(results)).toBe('');
  }, 60_000);

  it(`${RUNS} generated command lines (seed ${SEED})`, async () => {
    const started = performance.now();
    const results = await oracle.check(sampleCommands(SEED, RUNS));
    const failing = results.map((r, index) => ({ r, index })).filter(({ r }) => r.findings.length > 0);
    const perCommand = (performance.now() - started) / RUNS;
    if (failing.length === 0) return;
    // Shrink the first failure, keeping its kind of finding, and show it with the seed to replay it.
    const first = failing[0] as { r: OracleResult; index: number };
    const kind = first.r.findings[0]?.kind;
    const shrunk = await shrinkCommand(SEED, first.index, async (command) => {
      const [result] = await oracle.check([command]);
      return result?.findings.some((f) => f.kind === kind) === true;
    });
    const [minimal] = shrunk === undefined ? [first.r] : await oracle.check([shrunk.command]);
    const byKind = new Map<FindingKind, number>();
    for (const { r } of failing) for (const k of kinds(r)) byKind.set(k, (byKind.get(k) ?? 0) + 1);
    const message = [
      `${failing.length} of ${RUNS} generated commands found wanting (seed ${SEED}; ${perCommand.toFixed(1)} ms per command; ORACLE_SEED=${SEED} to replay).`,
      `By kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}.`,
      `Run ${first.index} shrunk${shrunk === undefined ? ' (could not be)' : ` in ${shrunk.shrinks} steps${shrunk.interrupted ? ', interrupted by the time limit' : ''}`} to:`,
      describeResult(minimal as OracleResult, oracle.root),
      '',
      'The first failures as generated:',
      ...failing.slice(0, 5).map(({ r, index }) => `#${index} ${describeResult(r, oracle.root)}`),
    ].join('\n');
    expect.fail(message);
  }, 600_000);
});
