// find (GNU findutils 4.9). Its own syntax: leading -H/-L/-P/-D/-O, starting
// points (paths it lists; names only, so no tree read), then an expression of
// tests, actions and operators. Actions that run, delete or write are refused.
import type { ShellWord } from '../shellCommand.js';
import { checkWord, refusedVerdict, whereFor } from './judgeModel.js';
import { notStaticAt } from './optionParser.js';
import type { WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

/** Primaries and operators that take no argument. */
export const FIND_PLAIN: readonly string[] = [
  '-depth', '-d', '-xdev', '-mount', '-follow', '-noleaf', '-ignore_readdir_race', '-noignore_readdir_race', '-daystart', '-warn',
  '-nowarn', '-nouser', '-nogroup', '-empty', '-executable', '-readable', '-writable', '-true', '-false', '-print', '-print0', '-ls',
  '-prune', '-quit', '-help', '--help', '-version', '--version', '-not', '-a', '-and', '-o', '-or', '!', '(', ')', ',',
];

const NAME_TESTS = ['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-lname', '-ilname'];
const VALUE_TESTS = [
  '-maxdepth', '-mindepth', '-regextype', '-type', '-xtype', '-size', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-used',
  '-user', '-group', '-uid', '-gid', '-perm', '-links', '-inum', '-fstype', '-context',
];

/** Primaries that take one argument, with what the argument is. */
export const FIND_WITH_ARG: ReadonlyMap<string, WordKind> = new Map<string, WordKind>([
  ...NAME_TESTS.map((p): [string, WordKind] => [p, 'pattern']),
  ...VALUE_TESTS.map((p): [string, WordKind] => [p, 'literal']),
  ['-newer', 'read-path'],
  ['-anewer', 'read-path'],
  ['-cnewer', 'read-path'],
  ['-samefile', 'read-path'],
  ['-printf', 'inert'],
]);

/** Primaries refused, with why. */
export const FIND_REFUSED: ReadonlyMap<string, string> = new Map([
  ['-exec', 'runs a program for each file found'],
  ['-execdir', 'runs a program for each file found'],
  ['-ok', 'runs a program for each file found'],
  ['-okdir', 'runs a program for each file found'],
  ['-delete', 'deletes the files found'],
  ['-fprint', 'writes the names found to a file'],
  ['-fprint0', 'writes the names found to a file'],
  ['-fprintf', 'writes the names found to a file'],
  ['-fls', 'writes the names found to a file'],
  ['-files0-from', 'reads its starting points from a file, so they are not statically known'],
]);

const NEWER_XY = /^-newer([aBcm])([aBcmt])$/;

/** GNU find's test for where the expression begins. */
function startsExpression(text: string): boolean {
  if (text.startsWith('-')) return text.length > 1;
  return text === '(' || text === '!' || text === ')' || text === ',';
}

function quote(text: string): string {
  return JSON.stringify(text);
}

export function judgeFind(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const verdict: ProgramVerdict = { model: 'find', reads: [], writes: [], trees: [] };
  let i = 0;
  // Leading options, before the starting points.
  for (; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    if (!word.static) return refusedVerdict('find', { reason: notStaticAt(word, 'an option position') });
    if (['-H', '-L', '-P'].includes(word.text) || /^-O[0-9]*$/.test(word.text)) continue;
    if (word.text === '-D') {
      i += 1;
      if (args[i]?.static !== true) return refusedVerdict('find', { reason: 'the option -D needs a literal value', option: '-D' });
      continue;
    }
    break;
  }
  for (; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    if (!word.static) return refusedVerdict('find', { reason: notStaticAt(word, 'a path or expression position') });
    if (startsExpression(word.text)) break;
    verdict.reads.push(word);
  }
  for (; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    if (!word.static) return refusedVerdict('find', { reason: notStaticAt(word, 'an expression position') });
    const primary = word.text;
    const why = FIND_REFUSED.get(primary);
    if (why !== undefined) return refusedVerdict('find', { reason: `the action ${primary} ${why}`, option: primary });
    if (FIND_PLAIN.includes(primary)) continue;
    const newer = NEWER_XY.exec(primary);
    const kind = FIND_WITH_ARG.get(primary) ?? (newer === null ? undefined : newer[2] === 't' ? 'inert' : 'read-path');
    if (kind === undefined) return refusedVerdict('find', { reason: `the primary ${quote(primary)} is not one this model knows` });
    const value = args[i + 1];
    if (value === undefined) return refusedVerdict('find', { reason: `${primary} needs an argument and has none`, option: primary });
    const bad = checkWord(value, kind, { free: true, splitHarmless: false, where: `the argument of ${primary} (${whereFor(kind)})` }, assigned);
    if (bad !== undefined) return refusedVerdict('find', { reason: bad, option: primary });
    if (kind === 'read-path') verdict.reads.push(value);
    i += 1;
  }
  return verdict;
}
