// Options read the way the program reads them (R-SH-6): GNU getopt_long (exact
// name or unambiguous prefix, `--opt=v` / `--opt v`, bundled short options,
// `--`, permutation), git's parse-options (prefixes and `--no-` negations) and
// exact-name parsers. A word the parser cannot place is a refusal, never skipped.
import type { ShellWord } from '../shellCommand.js';
import { optionName, type OptionSpec, type OptionSyntax, type ParsedOption, type ParsedOperand, type ParsedWords, type Refusal } from './programModel.js';

/** How one long option word resolves: a spec (maybe negated), several (ambiguous), or none. */
export type LongResolution =
  | { kind: 'option'; spec: OptionSpec; negated: boolean }
  | { kind: 'ambiguous'; candidates: string[] }
  | { kind: 'unknown' };

interface Candidate {
  spec: OptionSpec;
  negated: boolean;
  name: string;
}

function negatable(syntax: OptionSyntax): boolean {
  return syntax.long === 'git' || syntax.long === 'git-exact';
}

function abbreviates(syntax: OptionSyntax): boolean {
  return syntax.long === 'getopt' || syntax.long === 'git';
}

/**
 * An exact name wins over a negation that spells the same word, so that
 * `--show-signature` is that option and not the negation of
 * `--no-show-signature` (which would mean the same, but would escape its refusal).
 */
function exactMatch(name: string, specs: readonly OptionSpec[], negate: boolean): Candidate | undefined {
  for (const spec of specs) if (spec.long.includes(name)) return { spec, negated: false, name };
  if (!negate) return undefined;
  for (const spec of specs) {
    for (const long of spec.long) {
      if (name === `no-${long}`) return { spec, negated: true, name };
      // parse-options: `--verify` is the negation of an option named `no-verify`.
      if (long.startsWith('no-') && name === long.slice(3)) return { spec, negated: true, name };
    }
  }
  return undefined;
}

/**
 * Every option a prefix could stand for. Under git's rules this is a superset of
 * what parse-options considers: a prefix of `no-` may be any negated option, so
 * `--n` is ambiguous whenever there are two of them.
 */
function prefixCandidates(prefix: string, specs: readonly OptionSpec[], negate: boolean): Candidate[] {
  const found: Candidate[] = [];
  for (const spec of specs) {
    for (const long of spec.long) {
      if (long.startsWith(prefix)) found.push({ spec, negated: false, name: long });
      if (!negate) continue;
      if ('no-'.startsWith(prefix)) found.push({ spec, negated: true, name: `no-${long}` });
      else if (prefix.startsWith('no-') && long.startsWith(prefix.slice(3))) found.push({ spec, negated: true, name: `no-${long}` });
      if (long.startsWith('no-') && !prefix.startsWith('no-') && long.slice(3).startsWith(prefix)) found.push({ spec, negated: true, name: long.slice(3) });
    }
  }
  return found;
}

/** Resolves the name part of `--name[=value]` as the program would. */
export function resolveLong(name: string, specs: readonly OptionSpec[], syntax: OptionSyntax): LongResolution {
  if (name === '') return { kind: 'unknown' };
  const negate = negatable(syntax);
  const exact = exactMatch(name, specs, negate);
  if (exact !== undefined) return { kind: 'option', spec: exact.spec, negated: exact.negated };
  if (!abbreviates(syntax)) return { kind: 'unknown' };
  const candidates = prefixCandidates(name, specs, negate);
  const first = candidates[0];
  if (first === undefined) return { kind: 'unknown' };
  // Aliases (one spec, several names) are one option, as getopt_long treats entries with the same meaning.
  if (candidates.every((c) => c.spec === first.spec && c.negated === first.negated)) return { kind: 'option', spec: first.spec, negated: first.negated };
  return { kind: 'ambiguous', candidates: [...new Set(candidates.map((c) => `--${c.name}`))] };
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/** A word the shell may still expand into anything, at a position where the program reads options. */
export function notStaticAt(word: ShellWord, where: string): string {
  return `${quote(word.text)} in ${where} is not statically known (${word.why ?? 'not a literal'})`;
}

function attached(text: string): ShellWord {
  return { text, static: true };
}

interface Cursor {
  words: readonly ShellWord[];
  i: number;
}

function takeNext(cursor: Cursor, written: string, spec: OptionSpec): ShellWord | Refusal {
  const next = cursor.words[cursor.i + 1];
  if (next === undefined) return { reason: `the option ${written} needs a value and has none`, option: optionName(spec) };
  cursor.i += 1;
  return next;
}

function isRefusal(value: ShellWord | Refusal): value is Refusal {
  return 'reason' in value;
}

function parseLong(cursor: Cursor, text: string, specs: readonly OptionSpec[], syntax: OptionSyntax): ParsedOption | Refusal {
  const body = text.slice(2);
  const eq = body.indexOf('=');
  const name = eq < 0 ? body : body.slice(0, eq);
  const written = `--${name}`;
  const found = resolveLong(name, specs, syntax);
  if (found.kind === 'unknown') return { reason: `the option ${written} is not one this model knows` };
  if (found.kind === 'ambiguous') return { reason: `the option ${written} is ambiguous (it could be ${found.candidates.join(' or ')})` };
  const { spec, negated } = found;
  const full = negated ? `--no-${spec.long[0] ?? ''}` : optionName(spec);
  const base = { spec, name: optionName(spec), written, negated };
  if (negated || spec.arg === 'none') {
    if (eq >= 0) return { reason: `the option ${full} takes no value (written ${quote(text)})`, option: optionName(spec) };
    return { ...base, separate: false };
  }
  if (eq >= 0) return { ...base, value: attached(body.slice(eq + 1)), separate: false };
  if (spec.arg === 'optional') return { ...base, separate: false };
  const value = takeNext(cursor, written, spec);
  return isRefusal(value) ? value : { ...base, value, separate: true };
}

function parseShort(cursor: Cursor, text: string, specs: readonly OptionSpec[], syntax: OptionSyntax): ParsedOption[] | Refusal {
  const found: ParsedOption[] = [];
  for (let k = 1; k < text.length; k += 1) {
    const letter = text[k] as string;
    const spec = specs.find((s) => s.short.includes(letter));
    const written = `-${letter}`;
    if (spec === undefined) return { reason: `the option ${written}${text.length > 2 ? ` (in ${quote(text)})` : ''} is not one this model knows` };
    const base = { spec, name: optionName(spec), written, negated: false };
    if (spec.arg === 'none') {
      found.push({ ...base, separate: false });
      continue;
    }
    if (syntax.shortValues === 'next') {
      const value = takeNext(cursor, written, spec);
      if (isRefusal(value)) return value;
      found.push({ ...base, value, separate: true });
      continue;
    }
    let rest = text.slice(k + 1);
    if (syntax.shortEquals === true && rest.startsWith('=')) rest = rest.slice(1);
    if (rest !== '' || (syntax.shortEquals === true && text[k + 1] === '=')) found.push({ ...base, value: attached(rest), separate: false });
    else if (spec.arg === 'required') {
      const value = takeNext(cursor, written, spec);
      if (isRefusal(value)) return value;
      found.push({ ...base, value, separate: true });
    } else found.push({ ...base, separate: false });
    return found;
  }
  return found;
}

/**
 * Splits `words` (the program's arguments, without its name) into options and
 * operands. Stops with a refusal at the first word it cannot place. With
 * `operandsBeforeCommand`, the words after that many operands belong to a
 * command the program runs and are returned unparsed in `rest`.
 */
export function parseOptions(
  words: readonly ShellWord[],
  syntax: OptionSyntax,
  specs: readonly OptionSpec[],
  operandsBeforeCommand?: number,
): ParsedWords {
  const options: ParsedOption[] = [];
  const operands: ParsedOperand[] = [];
  const cursor: Cursor = { words, i: 0 };
  let optionsEnded = false;
  let afterDashDash = false;
  const atCommand = (): boolean => operandsBeforeCommand !== undefined && operands.length >= operandsBeforeCommand;
  for (; cursor.i < words.length; cursor.i += 1) {
    const word = words[cursor.i] as ShellWord;
    if (optionsEnded) {
      if (atCommand()) return { options, operands, rest: words.slice(cursor.i) };
      operands.push({ word, free: true, afterDashDash });
      continue;
    }
    if (!word.static) return { options, operands, refused: { reason: notStaticAt(word, 'an option position') } };
    const text = word.text;
    if (text === '--') {
      optionsEnded = true;
      afterDashDash = true;
      continue;
    }
    if (text.length < 2 || !text.startsWith('-') || word.tilde === true) {
      if (atCommand()) return { options, operands, rest: words.slice(cursor.i) };
      operands.push({ word, free: false, afterDashDash: false });
      if (!syntax.permute) optionsEnded = true;
      continue;
    }
    const parsed = text.startsWith('--') ? parseLong(cursor, text, specs, syntax) : parseShort(cursor, text, specs, syntax);
    if ('reason' in parsed) return { options, operands, refused: parsed };
    options.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  }
  return { options, operands };
}
