// The shape of a positive program model (R-SH-6): the options a program takes,
// how it parses them, and what each operand is. Models are data; one
// interpreter (judgeModel.ts) applies them to a simple command's words.
import type { ShellWord } from '../shellCommand.js';
import type { ProgramVerdict, TreeRead } from './programVerdict.js';

/**
 * What a word is to the program. `literal` is a number, keyword or name that
 * changes what the program does: it must be statically known but is no path.
 * `inert` and `pattern` are text the program only compares or prints: a
 * plain `$NAME` may stand there (R-SH-5).
 */
export type WordKind = 'read-path' | 'write-path' | 'pattern' | 'revision' | 'inert' | 'literal';

/** Whether an option takes a value: `--opt=v` or `--opt v` when required, only `--opt=v` (or `-ov`) when optional. */
export type ArgKind = 'none' | 'required' | 'optional';

export interface OptionSpec {
  /** Long names without the dashes; aliases of one meaning share a spec. */
  long: readonly string[];
  /** Single-letter names. */
  short: string;
  arg: ArgKind;
  /** What the value is (when the option takes one). */
  value: WordKind;
  /** Why the option is refused (`writes a file`); absent when accepted. */
  refuse?: string;
  /** git: the `--no-` form is refused too (by default negating an option resets it, which is harmless). */
  negationRefused?: boolean;
}

/** How a program reads its options. */
export interface OptionSyntax {
  /**
   * `getopt`: GNU getopt_long, a long option by its exact name or any unambiguous prefix.
   * `exact`: only exact long names (ripgrep, tree, commander, git's revision options).
   * `git`: git's parse-options, prefixes as getopt and `--no-NAME` negations (also abbreviated).
   * `git-exact`: parse-options with abbreviation switched off (`git log`): exact names and `--no-` negations.
   */
  long: 'getopt' | 'exact' | 'git' | 'git-exact';
  /** Options after operands are still options (GNU permutation); false: the first operand ends them. */
  permute: boolean;
  /** `-x=value` gives the value `value`, as ripgrep's lexopt reads it (getopt would give `=value`). */
  shortEquals?: boolean;
  /** `next`: a short option's value is always a following word, several letters of one word taking successive words (tree). */
  shortValues?: 'next';
}

/** An option as the parser found it. */
export interface ParsedOption {
  spec: OptionSpec;
  /** The option's full name as the program documents it: `--output`, or `-o` when it has no long name. */
  name: string;
  /** As written: `--outp`, or `-o` inside `-no`. */
  written: string;
  /** git: the `--no-` form. */
  negated: boolean;
  value?: ShellWord;
  /** The value is the next word (not attached with `=` or to the letter). */
  separate: boolean;
}

export interface ParsedOperand {
  word: ShellWord;
  /** The program no longer reads options at this word (after `--`, or past the first operand of a program that stops there). */
  free: boolean;
  /** The word comes after a `--` (git: a pathspec). */
  afterDashDash: boolean;
}

export interface Refusal {
  reason: string;
  /** The option, as the program spells it in full, that decided it. */
  option?: string;
}

export interface ParsedWords {
  options: ParsedOption[];
  operands: ParsedOperand[];
  refused?: Refusal;
  /** Words after this many operands were left for a command the program runs (wrappers): not parsed. */
  rest?: ShellWord[];
}

/** What a model says its operands are, once it has seen the options. */
export interface OperandPlan {
  /** One kind per operand (a missing entry: the model cannot place that operand). */
  kinds: WordKind[];
  /** Unquoted plain variables are harmless among these operands (echo's arguments). */
  splitHarmless?: boolean;
  refused?: Refusal;
  /** What the command touches besides its path operands and option values. */
  extra?: Partial<Omit<ProgramVerdict, 'model' | 'refused' | 'option'>>;
}

/** The options seen, by full name, for a model's operand plan. */
export interface OptionsSeen {
  all: readonly ParsedOption[];
  /** Given (and not negated) under any of these full names. */
  has(...names: string[]): boolean;
  /** Values of the options with these full names, in order. */
  values(...names: string[]): ShellWord[];
}

export interface ProgramModel {
  /** As `policy explain` names it: `sort`, `git status`. */
  name: string;
  syntax: OptionSyntax;
  options: readonly OptionSpec[];
  /** Operands the program reads before the words of a command it runs (wrappers: `timeout 5 cmd` has one). */
  operandsBeforeCommand?: number;
  plan(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan;
}

/**
 * An option from a compact description: names separated by `|`, one character
 * for a short option, more for a long one; a trailing `=` on the last name
 * means a required value, `[=]` an optional one. `opt('o|output=', {refuse})`.
 */
export function opt(names: string, extra: Partial<Omit<OptionSpec, 'long' | 'short' | 'arg'>> = {}): OptionSpec {
  let arg: ArgKind = 'none';
  let text = names;
  if (text.endsWith('[=]')) {
    arg = 'optional';
    text = text.slice(0, -3);
  } else if (text.endsWith('=')) {
    arg = 'required';
    text = text.slice(0, -1);
  }
  const parts = text.split('|');
  return {
    long: parts.filter((p) => p.length > 1),
    short: parts.filter((p) => p.length === 1).join(''),
    arg,
    value: extra.value ?? 'literal',
    ...(extra.refuse === undefined ? {} : { refuse: extra.refuse }),
    ...(extra.negationRefused === true ? { negationRefused: true } : {}),
  };
}

/** Several accepted options without a value at once: `flags('a|all', 'l', 'h|human-readable')`. */
export function flags(...names: string[]): OptionSpec[] {
  return names.map((n) => opt(n));
}

/** Several options refused for one reason. */
export function refused(reason: string, ...names: string[]): OptionSpec[] {
  return names.map((n) => opt(n, { refuse: reason }));
}

/** The full name a program documents for an option: its first long name, else its first letter. */
export function optionName(spec: OptionSpec): string {
  return spec.long[0] !== undefined ? `--${spec.long[0]}` : `-${spec.short[0] ?? '?'}`;
}

/** The usual `--help` and `--version` of a GNU program: they print and exit. */
export const GNU_STANDARD: readonly OptionSpec[] = [opt('help'), opt('version')];

export const GNU: OptionSyntax = { long: 'getopt', permute: true };
export const GNU_STOP: OptionSyntax = { long: 'getopt', permute: false };

/** Reasons shared by many models. */
export const WHY = {
  writes: 'writes a file',
  runs: 'runs another program',
  fileList: 'reads the names of the files to work on from a file, so they are not statically known',
} as const;

/** A plan where every operand is of one kind. */
export function every(kind: WordKind, operands: readonly ParsedOperand[]): WordKind[] {
  return operands.map(() => kind);
}

/** The synthetic `.` a program searches when it is given no directory (grep -r, rg). */
export function cwdWord(): ShellWord {
  return { text: '.', static: true };
}

/** Trees read from these paths. */
export function treesOf(words: readonly ShellWord[], hidden: boolean, follow: boolean): TreeRead[] {
  return words.map((dir) => ({ dir, hidden, ...(follow ? { follow: true } : {}) }));
}

/** Trees a recursive search reads: its paths, or `.` when it is given none (grep -r, rg). */
export function searchTrees(words: readonly ShellWord[], hidden: boolean, follow: boolean): TreeRead[] {
  return treesOf(words.length === 0 ? [cwdWord()] : words, hidden, follow);
}
