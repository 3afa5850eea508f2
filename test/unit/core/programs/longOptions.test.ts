// R-SH-6 and issue 18's acceptance: every long option of every model, and every
// prefix of it, resolves as the program's own parser would (getopt_long: exact
// name or unambiguous prefix; git parse-options: the same plus `--no-`
// negations; exact-name parsers: the name only), and every refused option is
// refused under each prefix that reaches it (`sort --outp=F`).
import { describe, expect, it } from 'vitest';
import { judgeProgram, PROGRAM_MODELS } from '../../../../src/core/policy/programs/index.js';
import { resolveLong, type LongResolution } from '../../../../src/core/policy/programs/optionParser.js';
import { optionName, type OptionSpec, type ProgramModel } from '../../../../src/core/policy/programs/programModel.js';
import { words } from './programTable.js';

interface Meaning {
  spec: OptionSpec;
  negated: boolean;
}

const namesCache = new Map<ProgramModel, { name: string; meaning: Meaning }[]>();

/** Every name an option answers to under the model's parser, with what it means. */
function namesOf(model: ProgramModel): { name: string; meaning: Meaning }[] {
  const cached = namesCache.get(model);
  if (cached !== undefined) return cached;
  const git = model.syntax.long === 'git' || model.syntax.long === 'git-exact';
  const names = model.options.flatMap((spec) =>
    spec.long.flatMap((long) => [
      { name: long, meaning: { spec, negated: false } },
      ...(git ? [{ name: `no-${long}`, meaning: { spec, negated: true } }] : []),
      ...(git && long.startsWith('no-') ? [{ name: long.slice(3), meaning: { spec, negated: true } }] : []),
    ]),
  );
  namesCache.set(model, names);
  return names;
}

/** What the program's parser makes of `--prefix`, written here from the rules independently of the parser under test. */
function expected(prefix: string, model: ProgramModel): Meaning | 'ambiguous' | 'unknown' {
  const git = model.syntax.long === 'git' || model.syntax.long === 'git-exact';
  const names = namesOf(model);
  const exact = names.find((n) => n.name === prefix && !n.meaning.negated) ?? names.find((n) => n.name === prefix);
  if (exact !== undefined) return exact.meaning;
  if (model.syntax.long === 'exact' || model.syntax.long === 'git-exact') return 'unknown';
  const matches = names.filter((n) => n.name.startsWith(prefix)).map((n) => n.meaning);
  // parse-options: a prefix of "no-" abbreviates the negation of any option.
  if (git && 'no-'.startsWith(prefix)) matches.push(...model.options.filter((s) => s.long.length > 0).map((spec) => ({ spec, negated: true })));
  const first = matches[0];
  if (first === undefined) return 'unknown';
  return matches.every((m) => m.spec === first.spec && m.negated === first.negated) ? first : 'ambiguous';
}

function sameAs(actual: LongResolution, want: ReturnType<typeof expected>): boolean {
  if (want === 'unknown' || want === 'ambiguous') return actual.kind === want;
  return actual.kind === 'option' && actual.spec === want.spec && actual.negated === want.negated;
}

/** The words that run a model's program: `git stash push` for that model. */
function programWords(model: ProgramModel): string[] {
  return model.name.split(' ');
}

describe('R-SH-6 every long option and every prefix of it', () => {
  it('each model lists every long name and short letter once', () => {
    for (const model of PROGRAM_MODELS) {
      const longs = model.options.flatMap((s) => s.long);
      const shorts = model.options.flatMap((s) => [...s.short]);
      expect(longs.filter((n, i) => longs.indexOf(n) !== i), `${model.name} long names`).toEqual([]);
      expect(shorts.filter((n, i) => shorts.indexOf(n) !== i), `${model.name} short letters`).toEqual([]);
    }
  });

  it('resolves as the program would, and refuses every prefix that reaches a refused option', () => {
    let prefixes = 0;
    let refusedPrefixes = 0;
    const mismatches: string[] = [];
    for (const model of PROGRAM_MODELS) {
      for (const spec of model.options) {
        for (const long of spec.long) {
          for (let k = 1; k <= long.length; k += 1) {
            const prefix = long.slice(0, k);
            prefixes += 1;
            const want = expected(prefix, model);
            const got = resolveLong(prefix, model.options, model.syntax);
            if (!sameAs(got, want)) mismatches.push(`${model.name} --${prefix}: ${JSON.stringify(got.kind)}`);
            const reachesRefused = typeof want === 'object' && want.spec.refuse !== undefined && !want.negated;
            if (!reachesRefused && want !== 'ambiguous') continue;
            const word = `--${prefix}${typeof want === 'object' && want.spec.arg !== 'none' ? '=x' : ''}`;
            const verdict = judgeProgram(words([...programWords(model), word].join(' ')), new Set());
            refusedPrefixes += 1;
            if (verdict?.refused === undefined) mismatches.push(`${model.name} ${word} was not refused`);
            else if (reachesRefused && verdict.option !== optionName(want.spec)) mismatches.push(`${model.name} ${word} named ${String(verdict.option)}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    // The counts the report quotes; they grow with the models.
    expect(prefixes).toBeGreaterThan(5000);
    expect(refusedPrefixes).toBeGreaterThan(500);
    console.log(`long options: ${PROGRAM_MODELS.reduce((n, m) => n + m.options.reduce((k, s) => k + s.long.length, 0), 0)}, prefixes: ${prefixes}, refused or ambiguous prefixes judged: ${refusedPrefixes}`);
  });

  it('refuses the examples of issue 18', () => {
    for (const command of ['sort --outp=F', 'sort --compress-prog=sh', 'sort -S 16k --compress-prog=sh list.txt', 'sort --o=F x', 'wc --files0=list', 'git -c core.pager=sh status', 'git log --output=../.bashrc']) {
      expect(judgeProgram(words(command), new Set())?.refused, command).toBeDefined();
    }
    expect(judgeProgram(words('sort --outp=F'), new Set())).toMatchObject({ option: '--output', refused: 'the option --output (written "--outp") writes a file' });
    expect(judgeProgram(words('sort -S 16k --compress-prog=sh list.txt'), new Set())?.option).toBe('--compress-program');
  });
});
