// Builtins that assign shell variables (R-SH-7): given a simple command's words,
// the names it assigns (`'*'` when a name is not statically known) and why it
// may run code no part shows (an array subscript in a name, `mapfile -C`).
// Pure, over words after quote removal; the parser calls it for every command.
import type { ShellWord } from '../core/policy/shellCommand.js';
import { arithmeticAssigns } from './shellWords.js';

export interface BuiltinEffects {
  assigns: string[];
  unknown: string[];
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SUBSCRIPTED = /^([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]$/s;

/** A name (or option) that is not static: any variable, and a subscript in it would run as arithmetic. */
function unknownName(word: ShellWord, effects: BuiltinEffects): void {
  effects.assigns.push('*');
  effects.unknown.push(`${word.text} is not statically known: as a name it may hold an array subscript, which bash evaluates as arithmetic`);
}

/** The variable a name operand (`x`, `a[1]`) assigns; a computed subscript may run code. */
function nameOf(word: ShellWord | undefined, effects: BuiltinEffects): void {
  if (word === undefined) return;
  if (!word.static) {
    unknownName(word, effects);
    return;
  }
  if (PLAIN.test(word.text)) {
    effects.assigns.push(word.text);
    return;
  }
  const sub = SUBSCRIPTED.exec(word.text);
  if (sub === null) {
    effects.assigns.push('*');
    return;
  }
  effects.assigns.push(sub[1] as string);
  if (!/^([0-9]+|@|\*)$/.test(sub[2] ?? '')) effects.unknown.push(`an array subscript in the name ${word.text}, which bash evaluates as arithmetic`);
}

interface Options {
  /** Index of the first operand. */
  next: number;
  /** Letters seen, each with its argument when it takes one. */
  seen: { letter: string; arg?: ShellWord }[];
  /** An option word that is not static: it may be any option. */
  dynamic: boolean;
}

/** Bash's internal getopt: `-abc`, `-aARG`/`-a ARG` for letters in `withArg`, `--`; stops at the first operand. */
function options(words: readonly ShellWord[], withArg: string, start = 1, plus = false): Options {
  const seen: Options['seen'] = [];
  let i = start;
  for (; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    // A word not static may expand to an option, unless it starts with literal text (`n=$x`)
    if (!word.static) return /^[A-Za-z0-9_./~=:,@%]/.test(word.text) ? { next: i, seen, dynamic: false } : { next: i, seen, dynamic: true };
    const text = word.text;
    if (text === '--') return { next: i + 1, seen, dynamic: false };
    if (text.length < 2 || !(text.startsWith('-') || (plus && text.startsWith('+')))) break;
    for (let k = 1; k < text.length; k += 1) {
      const letter = text[k] as string;
      if (!withArg.includes(letter)) {
        seen.push({ letter: text[0] === '+' ? `+${letter}` : letter });
        continue;
      }
      const rest = text.slice(k + 1);
      const arg = rest !== '' ? { text: rest, static: true } : words[i + 1];
      if (rest === '') i += 1;
      seen.push(arg === undefined ? { letter } : { letter, arg });
      break;
    }
  }
  return { next: i, seen, dynamic: false };
}

function declaration(words: readonly ShellWord[], effects: BuiltinEffects): void {
  const opts = options(words, '', 1, true);
  if (opts.dynamic) {
    unknownName(words[opts.next] as ShellWord, effects);
    return;
  }
  const letters = new Set(opts.seen.map((o) => o.letter));
  if (letters.has('p') || letters.has('f') || letters.has('F')) return; // prints, or names functions
  const nameref = letters.has('n');
  const operands = words.slice(opts.next);
  if (letters.has('i') && operands.length > 0) effects.unknown.push(`${words[0]?.text ?? 'declare'} -i makes bash evaluate what is assigned to the variable as arithmetic`);
  for (const word of operands) {
    const eq = /^([A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?)\+?=/s.exec(word.text);
    if (eq === null) {
      nameOf(word, effects);
      continue;
    }
    nameOf({ text: eq[1] as string, static: word.static || !/[$`]/.test(eq[1] as string) }, effects);
    // A nameref (`declare -n ref=PATH`) makes later assignments to ref assign its target.
    if (nameref) nameOf(word.static ? { text: word.text.slice(eq[0].length), static: true } : undefined, effects);
    if (nameref && !word.static) effects.assigns.push('*');
  }
}

function read(words: readonly ShellWord[], effects: BuiltinEffects): void {
  const opts = options(words, 'adinNptu');
  if (opts.dynamic) {
    unknownName(words[opts.next] as ShellWord, effects);
    return;
  }
  const array = opts.seen.find((o) => o.letter === 'a');
  if (array !== undefined) nameOf(array.arg, effects);
  for (const word of words.slice(opts.next)) nameOf(word, effects);
  if (array === undefined && opts.next >= words.length) effects.assigns.push('REPLY');
}

function mapfile(words: readonly ShellWord[], effects: BuiltinEffects): void {
  const opts = options(words, 'dnOsuCc');
  if (opts.dynamic) {
    unknownName(words[opts.next] as ShellWord, effects);
    return;
  }
  if (opts.seen.some((o) => o.letter === 'C')) effects.unknown.push(`${words[0]?.text ?? 'mapfile'} -C runs its callback as a command`);
  const operand = words[opts.next];
  if (operand === undefined) effects.assigns.push('MAPFILE');
  else nameOf(operand, effects);
}

function printf(words: readonly ShellWord[], effects: BuiltinEffects): void {
  const opts = options(words, 'v');
  if (opts.dynamic) {
    unknownName(words[opts.next] as ShellWord, effects); // `printf $opt …` may be `printf -v NAME …`
    return;
  }
  for (const option of opts.seen) if (option.letter === 'v') nameOf(option.arg, effects);
}

function unset(words: readonly ShellWord[], effects: BuiltinEffects): void {
  const opts = options(words, '');
  if (opts.dynamic) {
    unknownName(words[opts.next] as ShellWord, effects);
    return;
  }
  if (opts.seen.some((o) => o.letter === 'f')) return;
  for (const word of words.slice(opts.next)) nameOf(word, effects);
}

function letBuiltin(words: readonly ShellWord[], effects: BuiltinEffects): void {
  effects.unknown.push('let evaluates arithmetic, which may run code through the variables it reads');
  for (const word of words.slice(1)) {
    if (!word.static) effects.assigns.push('*');
    else effects.assigns.push(...arithmeticAssigns(word.text));
  }
}

/** `test -v NAME` / `[ -v NAME ]`: bash evaluates a subscript in NAME, which may run code. */
function testBuiltin(words: readonly ShellWord[], effects: BuiltinEffects): void {
  for (let i = 1; i + 1 < words.length; i += 1) {
    if (!(words[i]?.static === true && words[i]?.text === '-v')) continue;
    const name = words[i + 1] as ShellWord;
    if (!name.static || !(PLAIN.test(name.text) || /^[A-Za-z_][A-Za-z0-9_]*\[([0-9]+|@|\*)\]$/.test(name.text))) {
      effects.unknown.push(`${words[0]?.text ?? 'test'} -v ${name.text}: bash evaluates the subscript of the name, which may run code`);
    }
  }
}

type Builtin = (words: readonly ShellWord[], effects: BuiltinEffects) => void;

const BUILTINS: ReadonlyMap<string, Builtin> = new Map<string, Builtin>([
  ['export', declaration],
  ['declare', declaration],
  ['typeset', declaration],
  ['local', declaration],
  ['readonly', declaration],
  ['read', read],
  ['mapfile', mapfile],
  ['readarray', mapfile],
  ['printf', printf],
  ['unset', unset],
  ['let', letBuiltin],
  ['test', testBuiltin],
  ['[', testBuiltin],
  ['getopts', (words, effects) => {
    if (words.length < 3) return;
    nameOf(words[2], effects);
    effects.assigns.push('OPTARG', 'OPTIND');
  }],
  ['wait', (words, effects) => {
    const opts = options(words, 'p');
    if (opts.dynamic) unknownName(words[opts.next] as ShellWord, effects);
    for (const option of opts.seen) if (option.letter === 'p') nameOf(option.arg, effects);
  }],
  ['cd', (_, effects) => void effects.assigns.push('PWD', 'OLDPWD')],
  ['pushd', (_, effects) => void effects.assigns.push('PWD', 'OLDPWD', 'DIRSTACK')],
  ['popd', (_, effects) => void effects.assigns.push('PWD', 'OLDPWD', 'DIRSTACK')],
  ['source', (_, effects) => void effects.assigns.push('*')],
  ['.', (_, effects) => void effects.assigns.push('*')],
  ['eval', (words, effects) => {
    if (words.slice(1).some((w) => !w.static)) effects.assigns.push('*'); // a literal string is parsed again
  }],
  ['coproc', (_, effects) => void effects.assigns.push('COPROC', 'COPROC_PID')],
]);

/**
 * What a simple command assigns as a builtin (R-SH-7), or undefined when it is
 * no assigning builtin. A command name that is not static may be any builtin,
 * so it assigns `'*'`. A name given by path (`/usr/bin/printf`) is a program.
 */
export function builtinEffects(words: readonly ShellWord[]): BuiltinEffects | undefined {
  const first = words[0];
  if (first === undefined) return undefined;
  if (!first.static) return first.text.startsWith('((') ? undefined : { assigns: ['*'], unknown: [] }; // `(( … ))` is arithmetic, no builtin
  const builtin = BUILTINS.get(first.text);
  if (builtin === undefined) return undefined;
  const effects: BuiltinEffects = { assigns: [], unknown: [] };
  builtin(words, effects);
  return effects;
}
