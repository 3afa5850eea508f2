// Branches and the worktree in git 2.39: branch (listing, or creating a local
// branch), switch, `checkout -b`, restore (R-POL-8). Refused: deleting,
// renaming, copying or force-resetting branches, changing upstreams, editing
// descriptions, throwing away local changes, recursing into submodules.
// Switching writes the worktree files that differ, known only from the
// repository: reported as `repository.checkout`.
import type { ShellWord } from '../shellCommand.js';
import { GIT_SYNTAX, planPathspecs } from './gitInspect.js';
import { flags, opt, refused, type OperandPlan, type OptionsSeen, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';

const SUBMODULES = 'runs in every submodule, whose configuration is not checked';
const DISCARDS = 'throws away local changes';

const LISTING_FILTERS = ['--contains', '--no-contains', '--with', '--without', '--merged', '--no-merged', '--points-at'];

function planBranch(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  const listing = options.has('--list', '--show-current', ...LISTING_FILTERS) || operands.length === 0;
  if (listing) return { kinds: operands.map(() => 'pattern') };
  if (options.has('--all', '--remotes')) return { kinds: [], refused: { reason: 'git branch -a/-r takes a name only with --list' } };
  // NAME [START]
  return { kinds: operands.slice(0, 2).map((_o, i): WordKind => (i === 0 ? 'literal' : 'revision')) };
}

export const GIT_BRANCH: ProgramModel = {
  name: 'git branch',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('v|verbose', 'q|quiet', 'r|remotes', 'a|all', 'l|list', 'show-current', 'create-reflog', 'i|ignore-case'),
    opt('t|track[=]'),
    opt('color[=]'),
    opt('abbrev[=]'),
    opt('column[=]'),
    ...['contains', 'no-contains', 'with', 'without', 'merged', 'no-merged', 'points-at'].map((n) => opt(`${n}=`, { value: 'revision' })),
    opt('sort=', { value: 'inert' }),
    opt('format=', { value: 'inert' }),
    ...refused('deletes a branch', 'd|delete', 'D'),
    ...refused('renames a branch', 'm|move', 'M'),
    ...refused('copies a branch over another', 'c|copy', 'C'),
    opt('f|force', { refuse: 'overwrites an existing branch' }),
    opt('u|set-upstream-to=', { refuse: "changes the branch's upstream" }),
    ...refused("changes the branch's upstream", 'unset-upstream', 'set-upstream'),
    opt('edit-description', { refuse: 'opens an editor' }),
    opt('recurse-submodules', { refuse: SUBMODULES }),
  ],
  plan: planBranch,
};

function checkoutOf(revision: ShellWord | undefined): OperandPlan['extra'] {
  return revision === undefined ? {} : { repository: { chdir: [], checkout: { revision, paths: [] } } };
}

function planSwitch(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  if (operands.some((o) => o.afterDashDash)) return { kinds: [], refused: { reason: 'git switch takes no paths' } };
  const creating = options.has('--create', '--orphan');
  if (operands.length > 1 || (!creating && operands.length === 0)) return { kinds: ['revision'], refused: { reason: 'git switch takes one branch (or, with -c, one start point)' } };
  // --orphan empties the worktree of tracked files: nothing is written into it.
  const target = options.has('--orphan') ? undefined : operands[0]?.word;
  return { kinds: operands.map(() => 'revision'), extra: checkoutOf(target) };
}

export const GIT_SWITCH: ProgramModel = {
  name: 'git switch',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('guess', 'q|quiet', 'progress', 'm|merge', 'd|detach', 'overwrite-ignore', 'ignore-other-worktrees'),
    opt('c|create=', { value: 'literal' }),
    opt('orphan='),
    opt('conflict='),
    opt('t|track[=]'),
    opt('C|force-create=', { refuse: 'resets an existing branch' }),
    ...refused(DISCARDS, 'discard-changes', 'f|force'),
    opt('recurse-submodules[=]', { refuse: SUBMODULES }),
  ],
  plan: planSwitch,
};

function planCheckout(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  if (!options.has('-b')) return { kinds: [], refused: { reason: 'git checkout is modelled only as `git checkout -b NAME [START]` (use git switch or git restore)' } };
  if (operands.some((o) => o.afterDashDash) || operands.length > 1) return { kinds: [], refused: { reason: 'git checkout -b takes one start point and no paths' } };
  return { kinds: operands.map(() => 'revision'), extra: checkoutOf(operands[0]?.word) };
}

export const GIT_CHECKOUT: ProgramModel = {
  name: 'git checkout',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('l', 'guess', 'overlay', 'q|quiet', 'progress', 'm|merge', 'overwrite-ignore', 'ignore-other-worktrees', 'pathspec-file-nul'),
    opt('b=', { value: 'literal' }),
    opt('conflict='),
    opt('t|track[=]'),
    opt('B=', { refuse: 'resets an existing branch' }),
    opt('orphan=', { refuse: 'is not the modelled `checkout -b` form' }),
    ...refused('is not the modelled `checkout -b` form', 'd|detach', '2|ours', '3|theirs', 'ignore-skip-worktree-bits'),
    opt('f|force', { refuse: DISCARDS }),
    opt('p|patch', { refuse: 'asks interactively which changes to take' }),
    opt('pathspec-from-file=', { refuse: 'reads the paths from a file, so they are not statically known' }),
    opt('recurse-submodules[=]', { refuse: SUBMODULES }),
  ],
  plan: planCheckout,
};

function planRestore(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  if (operands.length === 0) return { kinds: [], refused: { reason: 'git restore needs paths' } };
  // The paths are written from the index, or from --source.
  const plan = planPathspecs(operands, 'write-path');
  const source = options.values('--source')[0];
  if (plan.refused !== undefined || source === undefined) return plan;
  return { ...plan, extra: { repository: { chdir: [], checkout: { revision: source, paths: operands.map((o) => o.word) } } } };
}

export const GIT_RESTORE: ProgramModel = {
  name: 'git restore',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('S|staged', 'W|worktree', 'ignore-unmerged', 'overlay', 'q|quiet', 'progress', 'm|merge', '2|ours', '3|theirs', 'ignore-skip-worktree-bits', 'pathspec-file-nul'),
    opt('s|source=', { value: 'revision' }),
    opt('conflict='),
    opt('p|patch', { refuse: 'asks interactively which changes to take' }),
    opt('pathspec-from-file=', { refuse: 'reads the paths from a file, so they are not statically known' }),
    opt('recurse-submodules[=]', { refuse: SUBMODULES }),
  ],
  plan: planRestore,
};
