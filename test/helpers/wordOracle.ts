// Issue 38, "Words": real bash is the oracle for assent's static reading of one
// word. Generated words mix quoting (none, '…', "…", \x, $'…') inside brackets,
// braces and tildes; bash expands each in a directory of names those words can
// match (`printf '%s\0' WORD`), and assent's reading must agree: a word assent
// calls static expands to exactly its text, or assent does not call it static.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { ParsedShell } from '../../src/core/policy/shellCommand.js';

interface Parser {
  parse(source: string): ParsedShell;
}

/** Names in the expansion directory: what `.e[n]v`, `a*`, `[a]`, `{a,b}` and friends can match. */
const NAMES = ['.env', 'env', '.e', 'a', 'b', 'ab', 'a]', '[a', 'a*', 'n', 'v', '-', '{a,b}', 'a,b', '=a', 'a:b', '.ssh/id_rsa', 'e/n', '!a', '^a', '~'];

/** Characters a piece is built from; `\`, quotes and `$` only appear as quoting, never as content. */
const CHARS = ['a', 'b', '.', 'e', 'n', 'v', '[', ']', '*', '?', '~', '/', '{', '}', ',', '!', '^', '-', '=', ':', '@'];

type Quoting = 'none' | 'single' | 'double' | 'escape' | 'ansi';
interface Piece {
  quoting: Quoting;
  chars: string;
}

const piece: fc.Arbitrary<Piece> = fc.record({
  quoting: fc.constantFrom<Quoting>('none', 'none', 'none', 'single', 'double', 'escape', 'ansi'),
  chars: fc.array(fc.constantFrom(...CHARS), { minLength: 0, maxLength: 3 }).map((c) => c.join('')),
});

function render(p: Piece): string {
  switch (p.quoting) {
    case 'none':
      return p.chars;
    case 'single':
      return `'${p.chars}'`;
    case 'double':
      return `"${p.chars}"`;
    case 'escape':
      return p.chars === '' ? '' : `\\${p.chars}`;
    case 'ansi':
      return `$'${p.chars}'`;
  }
}

/** One generated word, as it is written on the command line. */
export const generatedWord: fc.Arbitrary<string> = fc
  .array(piece, { minLength: 1, maxLength: 6 })
  .map((pieces) => pieces.map(render).join(''))
  .filter((w) => w !== '' && !w.startsWith('#'));

export function sampleWords(seed: number, count: number): string[] {
  return fc.sample(generatedWord, { seed, numRuns: count });
}

export interface WordDisagreement {
  word: string;
  /** What assent read: the static fields it expects, or why it is not static. */
  assent: string[];
  bash: string[];
}

const MARK = '\x01';

/** Each word's fields as bash expands them, in `dir` with HOME=home; undefined where bash did not run it. */
function bashFields(words: readonly string[], dir: string, home: string): (string[] | undefined)[] {
  const script = words.map((w) => `printf '%s\\0' ${w}; printf '\\001\\0'`).join('\n');
  const out = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LC_ALL: 'C' }, encoding: 'utf8', maxBuffer: 64 << 20 });
  const fields = (out.stdout ?? '').split('\0');
  const result: (string[] | undefined)[] = [];
  let current: string[] = [];
  for (const field of fields) {
    if (field === MARK) {
      result.push(current);
      current = [];
    } else current.push(field);
  }
  // `printf '%s\0'` with no arguments still prints one empty field; a word that expands to nothing is not possible here (no nullglob).
  while (result.length < words.length) result.push(undefined);
  return result;
}

/** assent's reading of the word: its static fields, or undefined when assent does not treat it as static. */
function assentFields(parser: Parser, word: string, home: string): string[] | undefined {
  const parsed = parser.parse(`printf '%s\\0' ${word}`);
  if (parsed.errors.length > 0 || parsed.commands.length !== 1) return undefined;
  const command = parsed.commands[0];
  if (command === undefined || command.unknown.length > 0 || command.redirects.length > 0 || command.assignments.length > 0) return undefined;
  const args = command.words.slice(2);
  if (args.length === 0 || args.some((w) => !w.static)) return undefined;
  return args.map((w) => (w.tilde === true ? home + w.text.slice(1) : w.text));
}

/**
 * Generates `count` words from `seed`, expands each with real bash, and returns
 * every word that assent reads as static but bash expands to something else.
 */
export function checkWords(parser: Parser, seed: number, count: number, slice = 2000): { checked: number; staticWords: number; disagreements: WordDisagreement[] } {
  const root = mkdtempSync(join(tmpdir(), 'assent-words-'));
  try {
    const home = join(root, 'home');
    const dir = join(root, 'dir');
    mkdirSync(home);
    for (const name of NAMES) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), 'x');
    }
    const words = sampleWords(seed, count);
    const disagreements: WordDisagreement[] = [];
    let staticWords = 0;
    for (let from = 0; from < words.length; from += slice) {
      const batch = words.slice(from, from + slice);
      let fields = bashFields(batch, dir, home);
      // A word bash could not parse stops the batch: the rest run one by one.
      fields = fields.map((f, i) => f ?? bashFields([batch[i] as string], dir, home)[0]);
      for (const [i, word] of batch.entries()) {
        const expected = assentFields(parser, word, home);
        if (expected === undefined) continue;
        staticWords += 1;
        const got = fields[i];
        if (got === undefined || got.length !== expected.length || got.some((g, j) => g !== expected[j])) disagreements.push({ word, assent: expected, bash: got ?? ['(bash did not run it)'] });
      }
    }
    return { checked: words.length, staticWords, disagreements };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
