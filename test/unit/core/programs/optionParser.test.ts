// R-SH-6: options are read the way the program reads them. These cases pin the
// parser's mechanics on small option tables; the long-option enumeration and
// the comparison with the real programs are in their own files.
import { describe, expect, it } from 'vitest';
import { parseOptions, resolveLong } from '../../../../src/core/policy/programs/optionParser.js';
import { opt, type OptionSyntax } from '../../../../src/core/policy/programs/programModel.js';
import { substitution, variable, words } from './programTable.js';

const GETOPT: OptionSyntax = { long: 'getopt', permute: true };
const SPECS = [opt('r|recursive'), opt('f|force'), opt('o|output='), opt('color[=]'), opt('n='), opt('count'), opt('context=')];

function summary(text: string | ReturnType<typeof words>, syntax: OptionSyntax = GETOPT) {
  const parsed = parseOptions(typeof text === 'string' ? words(text) : text, syntax, SPECS);
  return {
    options: parsed.options.map((o) => `${o.name}${o.value === undefined ? '' : `=${o.value.text}`}`),
    operands: parsed.operands.map((o) => o.word.text),
    refused: parsed.refused?.reason,
  };
}

describe('R-SH-6 getopt_long', () => {
  it('bundles short options, and a short option with a value takes the rest of the word or the next word', () => {
    expect(summary('-rf a')).toEqual({ options: ['--recursive', '--force'], operands: ['a'], refused: undefined });
    expect(summary('-rofile a').options).toEqual(['--recursive', '--output=file']);
    expect(summary('-ro file a').options).toEqual(['--recursive', '--output=file']);
    expect(summary('-n5').options).toEqual(['-n=5']);
    expect(summary('-n -5').options).toEqual(['-n=-5']);
  });

  it('takes --opt=value and --opt value for a required value, only --opt=value for an optional one', () => {
    expect(summary('--output=x a').options).toEqual(['--output=x']);
    expect(summary('--output x a')).toMatchObject({ options: ['--output=x'], operands: ['a'] });
    expect(summary('--color always')).toMatchObject({ options: ['--color'], operands: ['always'] });
    expect(summary('--color=always').options).toEqual(['--color=always']);
  });

  it('matches a long option by an unambiguous prefix, and refuses an ambiguous or unknown one', () => {
    expect(summary('--outp=F').options).toEqual(['--output=F']);
    expect(summary('--rec').options).toEqual(['--recursive']);
    expect(summary('--co')).toMatchObject({ refused: expect.stringMatching(/ambiguous.*--color.*--count.*--context/) });
    expect(summary('--nope').refused).toMatch(/--nope is not one this model knows/);
    expect(summary('-q').refused).toMatch(/-q is not one this model knows/);
  });

  it('prefers an exact name over longer names it prefixes', () => {
    const specs = [opt('color'), opt('colors=')];
    expect(resolveLong('color', specs, GETOPT)).toMatchObject({ kind: 'option', spec: specs[0] });
    expect(resolveLong('colo', specs, GETOPT)).toMatchObject({ kind: 'ambiguous' });
  });

  it('treats aliases of one option as one (as getopt_long does for entries with the same meaning)', () => {
    const specs = [opt('color|colour[=]'), opt('count')];
    expect(resolveLong('colo', specs, GETOPT)).toMatchObject({ kind: 'option', spec: specs[0] });
  });

  it('refuses a value given to an option that takes none, and an option missing its value', () => {
    expect(summary('--force=yes').refused).toMatch(/takes no value/);
    expect(summary('a --output').refused).toMatch(/needs a value/);
    expect(summary('a -o').refused).toMatch(/needs a value/);
  });

  it('permutes: options after operands are still options, until --', () => {
    expect(summary('a -r b')).toMatchObject({ options: ['--recursive'], operands: ['a', 'b'] });
    expect(summary('a -- -r')).toMatchObject({ options: [], operands: ['a', '-r'] });
    expect(summary('- a').operands).toEqual(['-', 'a']);
  });

  it('stops at the first operand for a program that does', () => {
    expect(summary('-r a -f', { long: 'getopt', permute: false })).toMatchObject({ options: ['--recursive'], operands: ['a', '-f'] });
  });

  it('refuses a word that is not static wherever the program still reads options, and not after --', () => {
    expect(summary(words('a', variable('x'))).refused).toMatch(/"\\"\$x\\"" in an option position is not statically known \(a variable \(\$x\)\)/);
    expect(summary(words('-o', substitution())).options).toEqual(['--output=$(cmd)']);
    const after = parseOptions(words('--', variable('x')), GETOPT, SPECS);
    expect(after.operands[0]).toMatchObject({ free: true, afterDashDash: true });
  });

  it('leaves the words of a wrapped command unparsed', () => {
    const parsed = parseOptions(words('-r 5 ls -l'), { long: 'getopt', permute: false }, SPECS, 1);
    expect(parsed.operands.map((o) => o.word.text)).toEqual(['5']);
    expect(parsed.rest?.map((w) => w.text)).toEqual(['ls', '-l']);
  });
});

describe('R-SH-6 other parsers', () => {
  it('git parse-options: --no- negations, abbreviated too, and `--verify` for an option named no-verify', () => {
    const git: OptionSyntax = { long: 'git', permute: true };
    const specs = [opt('edit'), opt('n|no-verify'), opt('message=')];
    expect(resolveLong('no-edit', specs, git)).toMatchObject({ kind: 'option', spec: specs[0], negated: true });
    expect(resolveLong('no-ed', specs, git)).toMatchObject({ kind: 'option', spec: specs[0], negated: true });
    expect(resolveLong('verify', specs, git)).toMatchObject({ kind: 'option', spec: specs[1], negated: true });
    expect(resolveLong('mess', specs, git)).toMatchObject({ kind: 'option', spec: specs[2], negated: false });
    // A prefix of "no-" could negate any option.
    expect(resolveLong('n', specs, git)).toMatchObject({ kind: 'ambiguous' });
    expect(resolveLong('mess', specs, { long: 'git-exact', permute: true })).toEqual({ kind: 'unknown' });
    expect(resolveLong('no-edit', specs, { long: 'git-exact', permute: true })).toMatchObject({ kind: 'option', negated: true });
  });

  it('exact names only (ripgrep, tree, commander)', () => {
    expect(resolveLong('outp', SPECS, { long: 'exact', permute: true })).toEqual({ kind: 'unknown' });
    expect(resolveLong('output', SPECS, { long: 'exact', permute: true })).toMatchObject({ kind: 'option' });
  });

  it("ripgrep's -x=value gives the value without the =", () => {
    const parsed = parseOptions(words('-f=pats'), { long: 'exact', permute: true, shortEquals: true }, [opt('f|file=')]);
    expect(parsed.options[0]?.value?.text).toBe('pats');
  });

  it("tree's short options take their values from the following words, in order", () => {
    const specs = [opt('L='), opt('o='), opt('d')];
    const parsed = parseOptions(words('-dLo 2 out dir'), { long: 'exact', permute: true, shortValues: 'next' }, specs);
    expect(parsed.options.map((o) => `${o.name}=${o.value?.text ?? ''}`)).toEqual(['-d=', '-L=2', '-o=out']);
    expect(parsed.operands.map((o) => o.word.text)).toEqual(['dir']);
  });
});
