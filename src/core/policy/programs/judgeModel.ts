// The one interpreter of program models (R-SH-6): parses a simple command's
// words with the model's option syntax, refuses what the model does not accept,
// and collects what the command reads and writes. Pure.
import type { ShellWord } from '../shellCommand.js';
import { notStaticAt, parseOptions } from './optionParser.js';
import type { OptionsSeen, ParsedOption, ProgramModel, Refusal, WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

/** Where a word stands, for the plain-variable rule (R-SH-5). */
export interface WordPosition {
  /** The program no longer reads options here, or the word is the separate value of an option. */
  free: boolean;
  /** Splitting and globbing the word is harmless here (echo's arguments). */
  splitHarmless: boolean;
  /** For messages: `a path position`, `the value of --label`. */
  where: string;
}

const WHERE: Record<WordKind, string> = {
  'read-path': 'a path position',
  'write-path': 'a path position',
  revision: 'a revision position',
  literal: 'a position that must be a literal',
  inert: 'an operand position',
  pattern: 'a pattern position',
};

export function whereFor(kind: WordKind): string {
  return WHERE[kind];
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/**
 * Why a word cannot stand where it is, or undefined when it may. A static word
 * always may; a plain `$NAME` only as inert text or a pattern, when nothing in
 * the command line assigns NAME and it cannot become an option or split.
 */
/**
 * Variables whose values describe the session, not its secrets: a plain
 * expansion of one of these may stand as inert text. Any other variable of the
 * agent's environment may hold an API key or token (which is why `env` and
 * `printenv` are not allowed either), so printing it or committing it asks.
 */
export const DESCRIPTIVE_VARIABLES: ReadonlySet<string> = new Set([
  'HOME', 'PWD', 'OLDPWD', 'USER', 'LOGNAME', 'SHELL', 'PATH', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'HOSTNAME', 'TMPDIR', 'TZ',
  'EDITOR', 'VISUAL', 'PAGER', 'UID', 'EUID', 'PPID', 'SHLVL', 'BASH_VERSION', 'OSTYPE', 'HOSTTYPE', 'MACHTYPE', 'XDG_CONFIG_HOME',
  'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR', 'GOPATH', 'GOROOT', 'JAVA_HOME', 'NODE_ENV', 'VIRTUAL_ENV', 'CI',
]);

export function checkWord(word: ShellWord, kind: WordKind, position: WordPosition, assigned: ReadonlySet<string>): string | undefined {
  if (word.static) return undefined;
  const vars = word.plainVars;
  if (vars === undefined || (kind !== 'inert' && kind !== 'pattern')) return notStaticAt(word, position.where);
  if (assigned.has('*')) return `${quote(word.text)} is not statically known: a variable whose name is not statically known is assigned in this command line`;
  const taken = vars.names.find((name) => assigned.has(name));
  if (taken !== undefined) return `${quote(word.text)} is not statically known: ${taken} is assigned in this command line`;
  if (position.splitHarmless) return undefined;
  if (!vars.quoted) return `${quote(word.text)} is not statically known here: unquoted, it may split into several words or glob`;
  if (!position.free) return `${quote(word.text)} is not statically known here: the program still reads options at this word, so it could become one (write "--" before it)`;
  return undefined;
}

/** How a refusal names an option: `--output`, `-o (--output)`, `--output (written "--outp")`. */
export function describeOption(option: ParsedOption): string {
  if (option.negated) return option.written === `--no-${option.spec.long[0] ?? ''}` ? option.written : `${option.written} (a negation of ${option.name})`;
  if (option.written === option.name) return option.name;
  if (!option.written.startsWith('--')) return `${option.written} (${option.name})`;
  return `${option.name} (written ${quote(option.written)})`;
}

export function refusedVerdict(model: string, refusal: Refusal): ProgramVerdict {
  return { model, refused: refusal.reason, ...(refusal.option === undefined ? {} : { option: refusal.option }), reads: [], writes: [], trees: [] };
}

export function seenOptions(options: readonly ParsedOption[]): OptionsSeen {
  return {
    all: options,
    has: (...names) => options.some((o) => !o.negated && names.includes(o.name)),
    values: (...names) => options.filter((o) => !o.negated && names.includes(o.name) && o.value !== undefined).map((o) => o.value as ShellWord),
  };
}

/** The first option the model refuses, as a refusal. */
export function refusedOption(options: readonly ParsedOption[]): Refusal | undefined {
  for (const option of options) {
    const reason = option.spec.refuse;
    if (reason === undefined || (option.negated && option.spec.negationRefused !== true)) continue;
    return { reason: `the option ${describeOption(option)} ${reason}`, option: option.negated ? `--no-${option.spec.long[0] ?? ''}` : option.name };
  }
  return undefined;
}

/** Adds a word of a kind to what the verdict touches. */
export function collect(verdict: ProgramVerdict, word: ShellWord, kind: WordKind): void {
  if (kind === 'read-path') verdict.reads.push(word);
  else if (kind === 'write-path') verdict.writes.push(word);
}

/** Checks option values against their kinds and collects the paths among them. */
export function judgeValues(verdict: ProgramVerdict, options: readonly ParsedOption[], assigned: ReadonlySet<string>): Refusal | undefined {
  for (const option of options) {
    if (option.value === undefined) continue;
    const kind = option.spec.value;
    const why = checkWord(option.value, kind, { free: option.separate, splitHarmless: false, where: `the value of ${option.name}` }, assigned);
    if (why !== undefined) return { reason: why, option: option.name };
    collect(verdict, option.value, kind);
  }
  return undefined;
}

/** Judges a program's arguments (`args`: the words after its name) with a model. */
export function judgeModel(model: ProgramModel, args: readonly ShellWord[], assigned: ReadonlySet<string>, name: string = model.name): ProgramVerdict {
  const parsed = parseOptions(args, model.syntax, model.options, model.operandsBeforeCommand);
  if (parsed.refused !== undefined) return refusedVerdict(name, parsed.refused);
  const refusal = refusedOption(parsed.options);
  if (refusal !== undefined) return refusedVerdict(name, refusal);
  const verdict: ProgramVerdict = { model: name, reads: [], writes: [], trees: [] };
  const valueRefusal = judgeValues(verdict, parsed.options, assigned);
  if (valueRefusal !== undefined) return refusedVerdict(name, valueRefusal);
  const plan = model.plan(seenOptions(parsed.options), parsed.operands);
  if (plan.refused !== undefined) return refusedVerdict(name, plan.refused);
  for (const [i, operand] of parsed.operands.entries()) {
    const kind = plan.kinds[i];
    if (kind === undefined) return refusedVerdict(name, { reason: `the operand ${quote(operand.word.text)} is more than ${model.name} takes` });
    const why = checkWord(operand.word, kind, { free: operand.free, splitHarmless: plan.splitHarmless === true, where: whereFor(kind) }, assigned);
    if (why !== undefined) return refusedVerdict(name, { reason: why });
    collect(verdict, operand.word, kind);
  }
  return mergeExtra(verdict, plan.extra);
}

/** Adds what a plan says the command touches besides its operands. */
export function mergeExtra(verdict: ProgramVerdict, extra: Partial<ProgramVerdict> | undefined): ProgramVerdict {
  if (extra === undefined) return verdict;
  verdict.reads.push(...(extra.reads ?? []));
  verdict.writes.push(...(extra.writes ?? []));
  verdict.trees.push(...(extra.trees ?? []));
  if (extra.treeWrites !== undefined) verdict.treeWrites = [...(verdict.treeWrites ?? []), ...extra.treeWrites];
  if (extra.revisionPaths !== undefined) verdict.revisionPaths = [...(verdict.revisionPaths ?? []), ...extra.revisionPaths];
  if (extra.repository !== undefined) verdict.repository = extra.repository;
  return verdict;
}
