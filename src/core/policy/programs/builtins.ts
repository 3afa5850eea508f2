// bash builtins with a syntax of their own: echo, printf, true, false, cd and
// pushd. echo's and printf's arguments are inert text, where even an unquoted
// `$NAME` is harmless (R-SH-5). `printf -v` assigns a variable (R-SH-7), and
// `cd -`/`pushd +N` go to a directory that is not statically known: refused.
import type { ShellWord } from '../shellCommand.js';
import { checkWord, refusedVerdict } from './judgeModel.js';
import { notStaticAt } from './optionParser.js';
import type { ProgramVerdict } from './programVerdict.js';

function accepted(model: string, reads: ShellWord[] = []): ProgramVerdict {
  return { model, reads, writes: [], trees: [] };
}

/** Every word is inert text, split or not. */
function allInert(model: string, words: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  for (const word of words) {
    const why = checkWord(word, 'inert', { free: true, splitHarmless: true, where: 'an argument' }, assigned);
    if (why !== undefined) return refusedVerdict(model, { reason: why });
  }
  return accepted(model);
}

/** echo takes -n, -e and -E (bundled) before its text; whatever it is given, it only prints. */
export function judgeEcho(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  return allInert('echo', args, assigned);
}

/** `true` and `false` ignore their arguments. */
export function judgeIgnoringArguments(name: string) {
  return (args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict => allInert(name, args, assigned);
}

/** bash's printf: `[-v NAME] [--] FORMAT [ARGUMENT…]`; the format must be a literal. */
export function judgePrintf(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  let i = 0;
  const first = args[0];
  if (first !== undefined && !first.static) return refusedVerdict('printf', { reason: notStaticAt(first, 'the format position') });
  if (first?.text === '--') i = 1;
  else if (first !== undefined && first.text.startsWith('-') && first.text.length > 1) {
    if (first.text.startsWith('-v')) return refusedVerdict('printf', { reason: 'the option -v assigns a variable (R-SH-7)', option: '-v' });
    return refusedVerdict('printf', { reason: `the option ${first.text} is not one this model knows` });
  }
  const format = args[i];
  if (format === undefined) return accepted('printf');
  if (!format.static) return refusedVerdict('printf', { reason: notStaticAt(format, 'the format position') });
  return allInert('printf', args.slice(i + 1), assigned);
}

/** Leading options of cd/pushd (`-L`, `-P`, `-e`, `-@`, pushd's `-n`), bundled as bash's getopt reads them. */
function scanDirOptions(model: string, args: readonly ShellWord[], letters: string): { next: number } | ProgramVerdict {
  let i = 0;
  for (; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    if (!word.static) return refusedVerdict(model, { reason: notStaticAt(word, 'an option or directory position') });
    if (word.text === '--') return { next: i + 1 };
    if (!word.text.startsWith('-') || word.text === '-' || /^-[0-9]+$/.test(word.text)) break;
    const bad = [...word.text.slice(1)].find((c) => !letters.includes(c));
    if (bad !== undefined) return refusedVerdict(model, { reason: `the option -${bad} is not one this model knows` });
  }
  return { next: i };
}

function home(): ShellWord {
  return { text: '~', static: true, tilde: true };
}

/** cd [-L|-P [-e]] [-@] [DIR]: DIR is a directory the shell moves to (a path it reads). */
export function judgeCd(args: readonly ShellWord[]): ProgramVerdict {
  const scan = scanDirOptions('cd', args, 'LPe@');
  if ('model' in scan) return scan;
  const rest = args.slice(scan.next);
  if (rest.length > 1) return refusedVerdict('cd', { reason: 'cd takes one directory' });
  const dir = rest[0];
  if (dir === undefined) return accepted('cd', [home()]);
  if (!dir.static) return refusedVerdict('cd', { reason: notStaticAt(dir, 'a path position') });
  if (dir.text === '-') return refusedVerdict('cd', { reason: '`cd -` goes to $OLDPWD, which is not statically known' });
  return accepted('cd', [dir]);
}

/** pushd [-n] [DIR]; `+N`/`-N` and no operand rotate the stack to a directory that is not statically known. */
export function judgePushd(args: readonly ShellWord[]): ProgramVerdict {
  const scan = scanDirOptions('pushd', args, 'n');
  if ('model' in scan) return scan;
  const rest = args.slice(scan.next);
  const dir = rest[0];
  if (dir === undefined || rest.length > 1) return refusedVerdict('pushd', { reason: 'pushd without exactly one directory rotates the stack to a directory that is not statically known' });
  if (!dir.static) return refusedVerdict('pushd', { reason: notStaticAt(dir, 'a path position') });
  if (/^[+-][0-9]+$/.test(dir.text) || dir.text === '-') return refusedVerdict('pushd', { reason: `pushd ${dir.text} rotates the stack to a directory that is not statically known` });
  return accepted('pushd', [dir]);
}
