// Option tables git 2.39 shares between subcommands: the diff options (diff,
// log, show, stash show) and the revision-walk options (log, show, stash
// list), and how git reads a `REV:PATH` word and a pathspec. Refused: options
// that write a file (--output) or run a program (--ext-diff, --textconv,
// --show-signature runs gpg) or take paths from the input (--stdin).
import type { ShellWord } from '../shellCommand.js';
import { flags, opt, type OptionSpec } from './programModel.js';

export const DIFF_OPTIONS: readonly OptionSpec[] = [
  ...flags(
    'p|u|patch', 's|no-patch', 'W|function-context', 'raw', 'patch-with-raw', 'patch-with-stat', 'numstat', 'shortstat', 'cumulative',
    'check', 'summary', 'name-only', 'name-status', 'compact-summary', 'binary', 'full-index', 'no-prefix', 'D|irreversible-delete',
    'find-copies-harder', 'no-renames', 'rename-empty', 'follow', 'minimal', 'w|ignore-all-space', 'b|ignore-space-change',
    'ignore-space-at-eol', 'ignore-cr-at-eol', 'ignore-blank-lines', 'indent-heuristic', 'patience', 'histogram', 'a|text', 'exit-code',
    'quiet', 'ita-invisible-in-index', 'ita-visible-in-index', 'pickaxe-all', 'pickaxe-regex', 'R', 'z',
  ),
  opt('U|unified[=]'),
  opt('stat[=]'),
  opt('X|dirstat[=]'),
  opt('dirstat-by-file[=]'),
  opt('color[=]'),
  opt('abbrev[=]'),
  opt('B|break-rewrites[=]'),
  opt('M|find-renames[=]'),
  opt('C|find-copies[=]'),
  opt('submodule[=]'),
  opt('ignore-submodules[=]'),
  opt('word-diff[=]'),
  opt('color-words[=]', { value: 'pattern' }),
  opt('color-moved[=]'),
  opt('relative[=]', { value: 'inert' }),
  opt('stat-width='),
  opt('stat-name-width='),
  opt('stat-graph-width='),
  opt('stat-count='),
  opt('ws-error-highlight='),
  opt('src-prefix=', { value: 'inert' }),
  opt('dst-prefix=', { value: 'inert' }),
  opt('line-prefix=', { value: 'inert' }),
  opt('inter-hunk-context='),
  opt('output-indicator-new=', { value: 'inert' }),
  opt('output-indicator-old=', { value: 'inert' }),
  opt('output-indicator-context=', { value: 'inert' }),
  opt('I|ignore-matching-lines=', { value: 'pattern' }),
  opt('diff-algorithm='),
  opt('anchored=', { value: 'inert' }),
  opt('word-diff-regex=', { value: 'pattern' }),
  opt('color-moved-ws='),
  opt('rotate-to=', { value: 'inert' }),
  opt('skip-to=', { value: 'inert' }),
  opt('find-object=', { value: 'revision' }),
  opt('diff-filter='),
  opt('l='),
  opt('S=', { value: 'pattern' }),
  opt('G=', { value: 'pattern' }),
  opt('O=', { value: 'read-path' }),
  opt('output=', { refuse: 'writes a file' }),
  opt('ext-diff', { refuse: 'runs an external diff program' }),
  opt('textconv', { refuse: 'runs the textconv programs of the attributes' }),
];

/**
 * What `git log`/`git show` take besides the diff options: log's own and the
 * revision walk's (revision.c reads these by exact name; `--opt value` only
 * where it uses parse_long_opt, so the others are `=`-only here).
 */
export const REVISION_OPTIONS: readonly OptionSpec[] = [
  opt('0|1|2|3|4|5|6|7|8|9'),
  ...flags(
    'all-match', 'invert-grep', 'i|regexp-ignore-case', 'basic-regexp', 'E|extended-regexp', 'F|fixed-strings', 'P|perl-regexp',
    'remove-empty', 'merges', 'no-merges', 'no-min-parents', 'no-max-parents', 'first-parent', 'exclude-first-parent-only', 'not', 'all',
    'reflog', 'alternate-refs', 'single-worktree', 'ignore-missing', 'bisect', 'cherry-mark', 'cherry-pick', 'left-only',
    'right-only', 'cherry', 'g|walk-reflogs', 'merge', 'boundary', 'simplify-by-decoration', 'show-pulls', 'full-history', 'dense',
    'sparse', 'simplify-merges', 'date-order', 'author-date-order', 'topo-order', 'reverse', 'do-walk', 'abbrev-commit',
    'no-abbrev-commit', 'oneline', 'no-expand-tabs', 'no-notes', 'standard-notes', 'no-standard-notes', 'relative-date', 'parents',
    'children', 'left-right', 'graph', 'no-graph', 'no-diff-merges', 'combined-all-paths', 'remerge-diff', 'cc', 'c', 'm', 't', 'r',
    'root', 'no-commit-id', 'always', 'in-commit-order', 'objects', 'objects-edge', 'unpacked', 'count', 'log-size',
    'encode-email-headers', 'no-encode-email-headers', 'full-diff', 'source', 'use-mailmap|mailmap', 'clear-decorations', 'q',
    'no-show-signature',
  ),
  opt('n|max-count='),
  opt('skip='),
  ...['max-age', 'since', 'since-as-filter', 'after', 'min-age', 'before', 'until', 'date'].map((n) => opt(`${n}=`, { value: 'inert' })),
  ...['author', 'committer', 'grep-reflog', 'grep', 'glob', 'exclude'].map((n) => opt(`${n}=`, { value: 'pattern' })),
  opt('encoding='),
  opt('decorate-refs=', { value: 'pattern' }),
  opt('decorate-refs-exclude=', { value: 'pattern' }),
  ...['min-parents', 'max-parents', 'expand-tabs', 'notes', 'show-notes', 'diff-merges', 'no-walk', 'exclude-hidden', 'decorate'].map((n) => opt(`${n}[=]`)),
  opt('ancestry-path[=]', { value: 'revision' }),
  ...['pretty', 'format', 'show-linear-break'].map((n) => opt(`${n}[=]`, { value: 'inert' })),
  ...['branches', 'tags', 'remotes'].map((n) => opt(`${n}[=]`, { value: 'pattern' })),
  opt('show-signature', { refuse: 'runs gpg to verify signatures' }),
  opt('stdin', { refuse: 'reads more revisions and paths from its input, so they are not statically known' }),
  opt('L=', { refuse: 'reads the file a line range names, at every revision' }),
];

/**
 * The path a revision word reads: `HEAD:.env` → `.env`, `:0:x` and `:x` (the
 * index) → `x`. Undefined for a word that names no path (`HEAD~2`, `:/message`);
 * `unreadable` when its braces do not balance, so the `:` cannot be placed.
 */
export function revisionPath(text: string): string | 'unreadable' | undefined {
  if (text.startsWith(':/')) return undefined;
  if (text.startsWith(':')) {
    const staged = /^:[0-3]:/.exec(text);
    return staged !== null ? text.slice(3) : text.slice(1);
  }
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '{') depth += 1;
    else if (ch === '}') depth -= 1;
    else if (ch === ':' && depth === 0) return text.slice(i + 1);
    if (depth < 0) return 'unreadable';
  }
  return depth === 0 ? undefined : 'unreadable';
}

/** A revision-path word as the verdict reports it (an empty path is the tree's top). */
export function revisionPathWord(word: ShellWord, path: string): ShellWord {
  return { text: path === '' ? '.' : path, static: true };
}

/**
 * Why git would read more than the pathspec names: wildcards (git matches
 * them itself, across directories) and magic (`:(glob)`, `:!`). Undefined for a
 * plain path.
 */
export function pathspecProblem(word: ShellWord): string | undefined {
  if (!word.static) return undefined; // refused as not statically known by the interpreter
  if (/[*?[]/.test(word.text)) return `the pathspec ${JSON.stringify(word.text)} has wildcards git expands itself, so what it reads is not statically known`;
  if (word.text.startsWith(':')) return `the pathspec ${JSON.stringify(word.text)} uses pathspec magic, which this model does not read`;
  return undefined;
}
