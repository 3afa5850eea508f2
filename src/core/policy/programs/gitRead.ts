// git's other reading subcommands (git 2.39, options from each one's `-h`):
// blame, rev-parse, ls-files, ls-tree, cat-file, describe, for-each-ref,
// show-ref, merge-base, rev-list, shortlog, grep, reflog, and the list forms of
// tag, worktree, remote and config. They print what the repository holds and
// write nothing. Refused: the forms that write (a tag, a config value, a
// worktree, a remote), run a program (cat-file --textconv/--filters, grep -O
// opens a pager), contact a remote (`remote show` without -n), or read files
// git does not track (`grep --no-index`, `--untracked`), which may be secrets.
import type { ShellWord } from '../shellCommand.js';
import { DIFF_OPTIONS, pathspecProblem, REVISION_OPTIONS } from './gitOptions.js';
import { GIT_EXACT, GIT_SYNTAX, planPathspecs, planRevisionsAndPaths } from './gitInspect.js';
import { judgeModel, refusedVerdict } from './judgeModel.js';
import { flags, opt, refused, type OperandPlan, type OptionsSeen, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

const RUNS_FILTERS = 'runs the textconv or filter programs of the attributes';

/** `[REV] [--] FILE`: the one file blamed is read (at REV, from the repository). */
function planBlame(_options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  if (operands.length === 0) return { kinds: [] };
  const file = operands[operands.length - 1] as ParsedOperand;
  const kinds: WordKind[] = operands.map((o) => (o === file ? 'read-path' : 'revision'));
  const problem = pathspecProblem(file.word);
  return problem === undefined ? { kinds } : { kinds, refused: { reason: problem } };
}

export const GIT_BLAME: ProgramModel = {
  name: 'git blame',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('incremental', 'b', 'root', 'show-stats', 'progress', 'score-debug', 'f|show-name', 'n|show-number', 'p|porcelain', 'line-porcelain'),
    ...flags('c', 't', 'l', 's', 'e|show-email', 'w', 'color-lines', 'color-by-age', 'minimal', 'reverse', 'first-parent', 'encoding'),
    opt('ignore-rev=', { value: 'revision' }),
    opt('ignore-revs-file=', { value: 'read-path' }),
    opt('S=', { value: 'read-path' }),
    opt('contents=', { value: 'read-path' }),
    opt('C[=]'),
    opt('M[=]'),
    opt('L=', { value: 'inert' }),
    opt('abbrev[=]'),
    opt('date=', { value: 'inert' }),
  ],
  plan: planBlame,
};

// rev-parse has no parse-options table: it reads each word itself, by exact name.
export const GIT_REV_PARSE: ProgramModel = {
  name: 'git rev-parse',
  syntax: { long: 'exact', permute: true },
  options: [
    ...flags(
      'verify', 'q|quiet', 'sq', 'not', 'symbolic', 'symbolic-full-name', 'all', 'show-toplevel', 'show-prefix', 'show-cdup', 'git-dir',
      'git-common-dir', 'absolute-git-dir', 'is-inside-git-dir', 'is-inside-work-tree', 'is-bare-repository', 'is-shallow-repository',
      'show-superproject-working-tree', 'shared-index-path', 'local-env-vars', 'flags', 'no-flags', 'revs-only', 'no-revs', 'keep-dashdash',
      'stop-at-non-option', 'show-object-format',
    ),
    opt('default=', { value: 'revision' }),
    opt('short[=]'),
    opt('abbrev-ref[=]'),
    opt('disambiguate=', { value: 'inert' }),
    ...['branches', 'tags', 'remotes', 'glob', 'exclude'].map((n) => opt(`${n}[=]`, { value: 'pattern' })),
    ...['since', 'after', 'until', 'before'].map((n) => opt(`${n}=`, { value: 'inert' })),
    opt('git-path=', { value: 'inert' }),
    opt('path-format=', { value: 'inert' }),
    opt('prefix=', { value: 'inert' }),
    opt('resolve-git-dir=', { value: 'read-path' }),
    ...refused('reads what it parses from its input, so it is not statically known', 'parseopt', 'sq-quote', 'stdin'),
  ],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

export const GIT_LS_FILES: ProgramModel = {
  name: 'git ls-files',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('z', 't', 'v', 'f', 'c|cached', 'd|deleted', 'm|modified', 'o|others', 'i|ignored', 's|stage', 'k|killed', 'directory', 'eol'),
    ...flags('empty-directory', 'no-empty-directory', 'u|unmerged', 'resolve-undo', 'exclude-standard', 'full-name', 'recurse-submodules', 'error-unmatch', 'debug', 'deduplicate', 'sparse'),
    opt('x|exclude=', { value: 'pattern' }),
    opt('X|exclude-from=', { value: 'read-path' }),
    opt('exclude-per-directory=', { value: 'inert' }),
    opt('with-tree=', { value: 'revision' }),
    opt('abbrev[=]'),
    opt('format=', { value: 'inert' }),
  ],
  plan: (_options, operands) => planPathspecs(operands, 'read-path'),
};

export const GIT_LS_TREE: ProgramModel = {
  name: 'git ls-tree',
  syntax: GIT_SYNTAX,
  options: [...flags('d', 'r', 't', 'z', 'l|long', 'name-only', 'name-status', 'object-only', 'full-name', 'full-tree'), opt('format=', { value: 'inert' }), opt('abbrev[=]')],
  plan: (_options, operands) => ({ kinds: operands.map((_o, i) => (i === 0 ? 'revision' : 'read-path')) }),
};

export const GIT_CAT_FILE: ProgramModel = {
  name: 'git cat-file',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('e', 'p', 't', 's', 'allow-unknown-type', 'use-mailmap|mailmap', 'buffer', 'follow-symlinks', 'unordered', 'z', 'batch-all-objects'),
    ...['batch', 'batch-check', 'batch-command'].map((n) => opt(`${n}[=]`, { refuse: 'reads the objects to print from its input, so they are not statically known' })),
    ...refused(RUNS_FILTERS, 'textconv', 'filters'),
    opt('path=', { refuse: RUNS_FILTERS }),
  ],
  // `git cat-file -p HEAD:.env` reads .env from the repository; `git cat-file blob X` names a type first.
  plan: (_options, operands) => {
    const types = ['blob', 'tree', 'commit', 'tag'];
    const objects = operands.length === 2 && operands[0]?.word.static === true && types.includes(operands[0].word.text) ? operands.slice(1) : operands;
    const plan = planRevisionsAndPaths(objects);
    return objects.length === operands.length ? plan : { ...plan, kinds: ['literal', ...plan.kinds] };
  },
};

export const GIT_DESCRIBE: ProgramModel = {
  name: 'git describe',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('contains', 'debug', 'all', 'tags', 'long', 'first-parent', 'exact-match', 'always'),
    opt('abbrev[=]'),
    opt('candidates='),
    opt('match=', { value: 'pattern' }),
    opt('exclude=', { value: 'pattern' }),
    opt('dirty[=]', { value: 'inert' }),
    opt('broken[=]', { value: 'inert' }),
  ],
  plan: (_options, operands) => ({ kinds: operands.map(() => 'revision') }),
};

const REF_FILTERS = [
  opt('format=', { value: 'inert' }),
  opt('color[=]'),
  opt('sort=', { value: 'inert' }),
  opt('points-at=', { value: 'revision' }),
  opt('merged[=]', { value: 'revision' }),
  opt('no-merged[=]', { value: 'revision' }),
  opt('contains[=]', { value: 'revision' }),
  opt('no-contains[=]', { value: 'revision' }),
  opt('i|ignore-case'),
];

export const GIT_FOR_EACH_REF: ProgramModel = {
  name: 'git for-each-ref',
  syntax: GIT_SYNTAX,
  options: [...flags('s|shell', 'p|perl', 'python', 'tcl'), opt('count='), ...REF_FILTERS, opt('stdin', { refuse: 'reads the patterns from its input, so they are not statically known' })],
  plan: (_options, operands) => ({ kinds: operands.map(() => 'pattern') }),
};

export const GIT_SHOW_REF: ProgramModel = {
  name: 'git show-ref',
  syntax: GIT_SYNTAX,
  options: [...flags('tags', 'heads', 'verify', 'head', 'd|dereference', 'q|quiet', 'exists'), opt('s|hash[=]'), opt('abbrev[=]'), opt('exclude-existing[=]', { value: 'pattern' })],
  plan: (_options, operands) => ({ kinds: operands.map(() => 'pattern') }),
};

export const GIT_MERGE_BASE: ProgramModel = {
  name: 'git merge-base',
  syntax: GIT_SYNTAX,
  options: flags('a|all', 'octopus', 'independent', 'is-ancestor', 'fork-point'),
  plan: (_options, operands) => ({ kinds: operands.map(() => 'revision') }),
};

export const GIT_REV_LIST: ProgramModel = {
  name: 'git rev-list',
  syntax: GIT_EXACT,
  options: [...DIFF_OPTIONS, ...REVISION_OPTIONS, ...flags('header', 'timestamp', 'bisect-vars', 'bisect-all'), opt('missing=')],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

export const GIT_SHORTLOG: ProgramModel = {
  name: 'git shortlog',
  syntax: GIT_EXACT,
  // shortlog's own -n (--numbered) and -c/--committer come before the revision walk's.
  options: [
    ...flags('c|committer', 'n|numbered', 's|summary', 'e|email'),
    opt('w[=]'),
    opt('group=', { value: 'inert' }),
    ...REVISION_OPTIONS.map((o) => ({ ...o, short: o.short.replace(/[nc]/g, ''), long: o.long.filter((l) => l !== 'committer') })).filter((o) => o.long.length > 0 || o.short !== ''),
  ],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

export const GIT_GREP: ProgramModel = {
  name: 'git grep',
  syntax: GIT_SYNTAX,
  options: [
    ...flags(
      'cached', 'recurse-submodules', 'a|text', 'textconv', 'no-textconv', 'i|ignore-case', 'I', 'r|recursive', 'w|word-regexp', 'v|invert-match',
      'h', 'H', 'full-name', 'E|extended-regexp', 'G|basic-regexp', 'F|fixed-strings', 'P|perl-regexp', 'n|line-number', 'column', 'l|files-with-matches',
      'name-only', 'L|files-without-match', 'z|null', 'o|only-matching', 'c|count', 'break', 'heading', 'p|show-function', 'W|function-context',
      'and', 'or', 'not', 'all-match', 'q|quiet', 'exclude-standard', 'no-exclude-standard', 'color',
    ),
    opt('max-depth='),
    opt('A|after-context='),
    opt('B|before-context='),
    opt('C|context='),
    opt('0|1|2|3|4|5|6|7|8|9'),
    opt('m|max-count='),
    opt('threads='),
    opt('e=', { value: 'pattern' }),
    opt('f=', { value: 'read-path' }),
    opt('O|open-files-in-pager[=]', { refuse: 'opens the matching files in a pager, which runs a program' }),
    ...refused('searches files git does not track, which may hold secrets', 'no-index', 'untracked'),
  ],
  // The first operand is the pattern (unless -e or -f gave it), then revisions, then `--` paths.
  plan: (options, operands) => {
    const patternGiven = options.has('-e', '-f');
    const rest = patternGiven ? operands : operands.slice(1);
    const plan = planRevisionsAndPaths(rest);
    return patternGiven ? plan : { ...plan, kinds: ['pattern', ...plan.kinds] };
  },
};

export const GIT_REFLOG: ProgramModel = {
  name: 'git reflog',
  syntax: GIT_EXACT,
  options: [...DIFF_OPTIONS, ...REVISION_OPTIONS],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

export const GIT_TAG_LIST: ProgramModel = {
  name: 'git tag',
  syntax: GIT_SYNTAX,
  options: [
    opt('l|list'),
    opt('n[=]'),
    opt('column[=]'),
    ...REF_FILTERS,
    ...refused('creates, deletes or signs a tag', 'd|delete', 'a|annotate', 's|sign', 'f|force', 'create-reflog', 'e|edit'),
    opt('m|message=', { refuse: 'creates a tag' }),
    opt('F|file=', { refuse: 'creates a tag' }),
    opt('u|local-user=', { refuse: 'creates a signed tag' }),
    opt('cleanup=', { refuse: 'creates a tag' }),
    opt('v|verify', { refuse: 'runs gpg to verify the tag' }),
  ],
  // Operands are patterns with --list (or -n, --contains…); with none of them, a name creates a tag.
  plan: (options, operands) => {
    // builtin/tag.c: no operand, --list, or a filter that only a listing takes.
    const listing = operands.length === 0 || options.has('--list', '-n', '--contains', '--no-contains', '--merged', '--no-merged', '--points-at');
    if (operands.length > 0 && !listing) return { kinds: [], refused: { reason: `git tag ${operands[0]?.word.text ?? ''} creates a tag (list with git tag -l PATTERN)` } };
    return { kinds: operands.map(() => 'pattern') };
  },
};

export const GIT_WORKTREE_LIST: ProgramModel = {
  name: 'git worktree list',
  syntax: GIT_SYNTAX,
  options: [...flags('porcelain', 'v|verbose', 'z'), opt('expire=', { value: 'inert' })],
  plan: () => ({ kinds: [] }),
};

export const GIT_REMOTE_LIST: ProgramModel = {
  name: 'git remote',
  syntax: GIT_SYNTAX,
  options: flags('v|verbose'),
  plan: () => ({ kinds: [] }),
};

export const GIT_REMOTE_GET_URL: ProgramModel = {
  name: 'git remote get-url',
  syntax: GIT_SYNTAX,
  options: flags('push', 'all'),
  plan: (_options, operands) => ({ kinds: operands.length === 1 ? ['inert'] : [] }),
};

export const GIT_REMOTE_SHOW: ProgramModel = {
  name: 'git remote show',
  syntax: GIT_SYNTAX,
  options: flags('n'),
  plan: (options, operands) =>
    options.has('-n') ? { kinds: operands.map(() => 'inert') } : { kinds: [], refused: { reason: 'git remote show contacts the remote (add -n to show what the configuration says)' } },
};

const CONFIG_READS = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '--get-color', '--get-colorbool'];
const CONFIG_WRITES = 'changes the configuration, which can make git run programs';

export const GIT_CONFIG_READ: ProgramModel = {
  name: 'git config',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('global', 'system', 'local', 'worktree', 'get', 'get-all', 'get-regexp', 'get-urlmatch', 'l|list', 'fixed-value', 'get-color', 'get-colorbool'),
    ...flags('bool', 'int', 'bool-or-int', 'bool-or-str', 'path', 'expiry-date', 'z|null', 'name-only', 'includes', 'show-origin', 'show-scope'),
    opt('f|file=', { value: 'read-path' }),
    opt('blob=', { value: 'revision' }),
    opt('t|type=', { value: 'inert' }),
    opt('default=', { value: 'inert' }),
    ...refused(CONFIG_WRITES, 'replace-all', 'add', 'unset', 'unset-all', 'rename-section', 'remove-section'),
    opt('e|edit', { refuse: 'opens an editor on the configuration' }),
  ],
  // With no read option, one operand is a get and two are a set.
  plan: (options, operands) => {
    const reading = options.has(...CONFIG_READS);
    if (!reading && operands.length !== 1) return { kinds: [], refused: { reason: operands.length === 0 ? 'git config needs a name or --list' : `git config NAME VALUE ${CONFIG_WRITES}` } };
    return { kinds: operands.map(() => 'inert') };
  },
};

/** The models above that git.ts answers to by their one-word subcommand. */
export const GIT_READ_MODELS: readonly ProgramModel[] = [
  GIT_BLAME, GIT_REV_PARSE, GIT_LS_FILES, GIT_LS_TREE, GIT_CAT_FILE, GIT_DESCRIBE, GIT_FOR_EACH_REF, GIT_SHOW_REF, GIT_MERGE_BASE, GIT_REV_LIST,
  GIT_SHORTLOG, GIT_GREP, GIT_TAG_LIST, GIT_CONFIG_READ,
];

/** Models of two-word forms, for tests and `policy explain`. */
export const GIT_READ_FORMS: readonly ProgramModel[] = [GIT_WORKTREE_LIST, GIT_REMOTE_LIST, GIT_REMOTE_GET_URL, GIT_REMOTE_SHOW, GIT_REFLOG];

/** `git reflog [show] …` reads like log; expire and delete write. */
export function judgeGitReflog(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const first = args[0];
  if (first?.static === true && ['expire', 'delete', 'drop'].includes(first.text)) return refusedVerdict(`git reflog ${first.text}`, { reason: `git reflog ${first.text} rewrites the reflog` });
  const rest = first?.static === true && (first.text === 'show' || first.text === 'exists') ? args.slice(1) : args;
  return judgeModel(GIT_REFLOG, rest, assigned);
}

/** `git worktree list`; add, remove, move, prune and lock change worktrees. */
export function judgeGitWorktree(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const first = args[0];
  if (first?.static === true && first.text === 'list') return judgeModel(GIT_WORKTREE_LIST, args.slice(1), assigned);
  return refusedVerdict(`git worktree ${first?.text ?? ''}`.trim(), { reason: `git worktree ${first?.text ?? ''} is not a listing form (git worktree list)`.replace('  ', ' ') });
}

/** `git remote [-v]`, `git remote get-url NAME`, `git remote show -n NAME`; the rest change remotes or contact them. */
export function judgeGitRemote(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const sub = args.findIndex((w) => !(w.static && w.text.startsWith('-')));
  if (sub < 0) return judgeModel(GIT_REMOTE_LIST, args, assigned);
  const word = args[sub] as ShellWord;
  const before = args.slice(0, sub);
  const form = word.static ? word.text : undefined;
  if (form === 'get-url' || form === 'show') {
    const listing = judgeModel(GIT_REMOTE_LIST, before, assigned);
    if (listing.refused !== undefined) return listing;
    return judgeModel(form === 'show' ? GIT_REMOTE_SHOW : GIT_REMOTE_GET_URL, args.slice(sub + 1), assigned);
  }
  return refusedVerdict(`git remote ${word.text}`, { reason: `git remote ${word.text} touches a remote or changes the list of remotes` });
}
