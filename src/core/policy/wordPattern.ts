// Word patterns of command rules (R-SH-2): `git push --force *`. Each pattern
// word is compared with one command word after quote removal; `*`, `?` and
// `[…]` glob within that word; a final lone `*` matches any remaining words.
import { AssentError } from '../base/errors.js';
import type { ShellWord } from './shellCommand.js';

/** One pattern word: a literal compared exactly, or a glob within one word. */
export type WordMatcher = { literal: string } | { glob: RegExp; source: string };

export interface WordPattern {
  source: string;
  words: WordMatcher[];
  /** The pattern ends in a lone `*`: any number (≥ 0) of further words match. */
  rest: boolean;
}

interface Token {
  text: string;
  /** Per character: true where `*`, `?`, `[` act as glob characters (unquoted, unescaped). */
  active: boolean[];
}

/** Splits a pattern into words: whitespace separates, quotes group, a backslash escapes. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let current: Token | undefined;
  const add = (ch: string, active: boolean): void => {
    current ??= { text: '', active: [] };
    current.text += ch;
    current.active.push(active);
  };
  for (let i = 0; i < source.length; i += 1) {
    const ch = source[i] as string;
    if (ch === ' ' || ch === '\t' || ch === '\n') {
      if (current !== undefined) tokens.push(current);
      current = undefined;
    } else if (ch === '\\') {
      const next = source[i + 1];
      if (next === undefined) throw new AssentError('invalid_params', `the pattern ${JSON.stringify(source)} ends in a lone backslash; write "\\\\" for a backslash`);
      add(next, false);
      i += 1;
    } else if (ch === "'" || ch === '"') {
      const end = source.indexOf(ch, i + 1);
      if (end < 0) throw new AssentError('invalid_params', `the pattern ${JSON.stringify(source)} has an unclosed ${ch}; close the quote`);
      current ??= { text: '', active: [] };
      for (const quoted of source.slice(i + 1, end)) add(quoted, false);
      i = end;
    } else add(ch, true);
  }
  if (current !== undefined) tokens.push(current);
  return tokens;
}

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

/** A glob within one word; `*` and `?` match any character, `/` included. */
function compileGlob(token: Token, source: string): WordMatcher {
  if (!token.active.some((active, i) => active && '*?['.includes(token.text[i] as string))) return { literal: token.text };
  let regex = '^';
  for (let i = 0; i < token.text.length; i += 1) {
    const ch = token.text[i] as string;
    if (!token.active[i]) regex += escapeRegex(ch);
    else if (ch === '*') regex += '[\\s\\S]*';
    else if (ch === '?') regex += '[\\s\\S]';
    else if (ch === '[') {
      let end = i + 1;
      if (token.text[end] === '!' || token.text[end] === '^') end += 1;
      if (token.text[end] === ']') end += 1;
      while (end < token.text.length && token.text[end] !== ']') end += 1;
      if (end >= token.text.length) {
        throw new AssentError('invalid_params', `the pattern ${JSON.stringify(source)} has an unclosed "[" in ${JSON.stringify(token.text)}; close it with "]" or write "\\[" for a literal bracket`);
      }
      let body = token.text.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      regex += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else regex += escapeRegex(ch);
  }
  return { glob: new RegExp(`${regex}$`), source: token.text };
}

/** Compiles a rule's `match`; throws an AssentError naming what is wrong (empty, unclosed quote or bracket). */
export function compileWordPattern(source: string): WordPattern {
  const tokens = tokenize(source);
  if (tokens.length === 0) throw new AssentError('invalid_params', 'the pattern is empty; name at least the command, e.g. "git status"');
  const last = tokens[tokens.length - 1] as Token;
  const rest = tokens.length > 1 && last.text === '*' && last.active[0] === true;
  const words = (rest ? tokens.slice(0, -1) : tokens).map((token) => compileGlob(token, source));
  return { source, words, rest };
}

/** Whether one pattern word matches one command word; a word that is not static never matches. */
export function wordMatches(matcher: WordMatcher, word: ShellWord): boolean {
  if (!word.static) return false;
  return 'literal' in matcher ? matcher.literal === word.text : matcher.glob.test(word.text);
}

/**
 * Whether `pattern` matches `words` (R-SH-2). With `baseName`, a literal first
 * pattern word without `/` also matches a command named by a path ending in it
 * (`/usr/bin/git` for `git`); rules that deny or prompt use this, allow rules do not.
 */
export function patternMatches(pattern: WordPattern, words: readonly ShellWord[], baseName = false): boolean {
  if (words.length < pattern.words.length) return false;
  if (!pattern.rest && words.length !== pattern.words.length) return false;
  for (let i = 0; i < pattern.words.length; i += 1) {
    const matcher = pattern.words[i] as WordMatcher;
    const word = words[i] as ShellWord;
    if (wordMatches(matcher, word)) continue;
    if (i === 0 && baseName && 'literal' in matcher && !matcher.literal.includes('/') && word.static && word.text.endsWith(`/${matcher.literal}`)) continue;
    return false;
  }
  return true;
}

/** Whether pattern word `index` is a literal (no glob): a rule that "names that exact code" (R-SH-3). */
export function literalAt(pattern: WordPattern, index: number): boolean {
  const matcher = pattern.words[index];
  return matcher !== undefined && 'literal' in matcher;
}
