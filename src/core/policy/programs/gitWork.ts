// Local work in git 2.39: add, commit and stash (R-POL-8). Refused: what opens
// an editor or an interactive prompt (-e, -p, -i, a commit without a message),
// what runs gpg (-S), what takes its paths from a file (--pathspec-from-file),
// and stash drop/clear, which discard work.
import type { ShellWord } from '../shellCommand.js';
import { judgeModel, refusedVerdict } from './judgeModel.js';
import { DIFF_OPTIONS, REVISION_OPTIONS, revisionPath } from './gitOptions.js';
import { GIT_EXACT, GIT_SYNTAX, planPathspecs, planRevisionsAndPaths } from './gitInspect.js';
import { flags, opt, refused, type OperandPlan, type OptionsSeen, type ParsedOperand, type ProgramModel } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

const EDITOR = 'opens an editor';
const INTERACTIVE = 'asks interactively which changes to take';
const PATHSPEC_FILE = opt('pathspec-from-file=', { refuse: 'reads the paths from a file, so they are not statically known' });

export const GIT_ADD: ProgramModel = {
  name: 'git add',
  syntax: GIT_SYNTAX,
  options: [
    ...flags(
      'n|dry-run', 'v|verbose', 'f|force', 'u|update', 'renormalize', 'N|intent-to-add', 'A|all', 'ignore-removal', 'refresh', 'ignore-errors',
      'ignore-missing', 'sparse', 'warn-embedded-repo', 'pathspec-file-nul',
    ),
    opt('chmod='),
    ...refused(INTERACTIVE, 'i|interactive', 'p|patch'),
    opt('e|edit', { refuse: EDITOR }),
    PATHSPEC_FILE,
  ],
  plan: (_options, operands) => planPathspecs(operands, 'read-path'),
};

function planCommit(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  const fixups = options.values('--fixup');
  const editingFixup = fixups.find((f) => /^(amend|reword):/.test(f.text));
  if (editingFixup !== undefined) return { kinds: [], refused: { reason: `the option --fixup=${editingFixup.text} ${EDITOR}`, option: '--fixup' } };
  const noEdit = options.all.some((o) => o.name === '--edit' && o.negated);
  const message = options.has('--message', '--file', '--reuse-message') || noEdit || fixups.length > 0;
  if (!message) return { kinds: [], refused: { reason: `git commit without -m, -F, -C or --no-edit ${EDITOR}` } };
  return planPathspecs(operands, 'read-path');
}

export const GIT_COMMIT: ProgramModel = {
  name: 'git commit',
  syntax: GIT_SYNTAX,
  options: [
    ...flags(
      'q|quiet', 'v|verbose', 'reset-author', 's|signoff', 'status', 'a|all', 'i|include', 'o|only', 'n|no-verify', 'verify', 'dry-run', 'short',
      'branch', 'ahead-behind', 'porcelain', 'long', 'z|null', 'amend', 'no-post-rewrite', 'post-rewrite', 'pathspec-file-nul', 'allow-empty',
      'allow-empty-message',
    ),
    opt('F|file=', { value: 'read-path' }),
    opt('author=', { value: 'inert' }),
    opt('date=', { value: 'inert' }),
    opt('m|message=', { value: 'inert' }),
    opt('C|reuse-message=', { value: 'revision' }),
    opt('fixup=', { value: 'revision' }),
    opt('squash=', { value: 'revision' }),
    opt('trailer=', { value: 'inert' }),
    opt('t|template=', { value: 'read-path' }),
    opt('cleanup='),
    opt('u|untracked-files[=]'),
    opt('c|reedit-message=', { refuse: EDITOR }),
    opt('e|edit', { refuse: EDITOR }),
    opt('S|gpg-sign[=]', { refuse: 'runs gpg to sign the commit' }),
    ...refused(INTERACTIVE, 'interactive', 'p|patch'),
    PATHSPEC_FILE,
  ],
  plan: planCommit,
};

export const GIT_STASH_PUSH: ProgramModel = {
  name: 'git stash push',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('k|keep-index', 'S|staged', 'q|quiet', 'u|include-untracked', 'a|all', 'pathspec-file-nul'),
    opt('m|message=', { value: 'inert' }),
    opt('p|patch', { refuse: INTERACTIVE }),
    PATHSPEC_FILE,
  ],
  // Stashing puts the named files back to their committed state: a write.
  plan: (_options, operands) => planPathspecs(operands, 'write-path'),
};

function stashRevision(operands: readonly ParsedOperand[]): OperandPlan {
  if (operands.length > 1) return { kinds: ['revision'] };
  const word = operands[0]?.word;
  if (word !== undefined && word.static && revisionPath(word.text) !== undefined) return { kinds: ['revision'], refused: { reason: `${JSON.stringify(word.text)} is not a stash` } };
  return { kinds: operands.map(() => 'revision') };
}

/** apply and pop write the stash's files into the worktree. */
function planStashApply(_options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  const plan = stashRevision(operands);
  const revision: ShellWord = operands[0]?.word ?? { text: 'stash@{0}', static: true };
  return plan.refused !== undefined ? plan : { ...plan, extra: { repository: { chdir: [], checkout: { revision, paths: [] } } } };
}

export const GIT_STASH_APPLY: ProgramModel = {
  name: 'git stash apply',
  syntax: GIT_SYNTAX,
  options: flags('q|quiet', 'index'),
  plan: planStashApply,
};

export const GIT_STASH_POP: ProgramModel = { ...GIT_STASH_APPLY, name: 'git stash pop' };

export const GIT_STASH_SHOW: ProgramModel = {
  name: 'git stash show',
  syntax: GIT_EXACT,
  options: [...DIFF_OPTIONS, ...flags('include-untracked', 'only-untracked')],
  plan: (_options, operands) => stashRevision(operands),
};

// `git stash list` hands its options to `git log`.
export const GIT_STASH_LIST: ProgramModel = {
  name: 'git stash list',
  syntax: GIT_EXACT,
  options: [...DIFF_OPTIONS, ...REVISION_OPTIONS],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

const STASH_SUBCOMMANDS: ReadonlyMap<string, ProgramModel> = new Map([
  ['push', GIT_STASH_PUSH],
  ['apply', GIT_STASH_APPLY],
  ['pop', GIT_STASH_POP],
  ['show', GIT_STASH_SHOW],
  ['list', GIT_STASH_LIST],
]);

/** `git stash [SUBCOMMAND] …`; without one (or with an option first) it is `push`. */
export function judgeGitStash(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const first = args[0];
  if (first === undefined || (first.static && first.text.startsWith('-'))) return judgeModel(GIT_STASH_PUSH, args, assigned, 'git stash');
  if (!first.static) return refusedVerdict('git stash', { reason: `the stash subcommand ${JSON.stringify(first.text)} is not statically known` });
  const model = STASH_SUBCOMMANDS.get(first.text);
  if (model === undefined) return refusedVerdict(`git stash ${first.text}`, { reason: `git stash ${first.text} is not a modelled form (push, list, show, apply, pop)` });
  return judgeModel(model, args.slice(1), assigned);
}
