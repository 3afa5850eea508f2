// git's reading subcommands: status, diff, log, show (git 2.39). Operands
// before `--` are revisions or paths (git decides which by what exists), so a
// plain one is reported as a possible read and a `REV:PATH` one as the path it
// reads from the repository (R-SH-10). `git diff --no-index A B`, and any
// two-operand `git diff` (git falls back to it when a path lies outside the
// repository), reads A and B as trees.
import type { ShellWord } from '../shellCommand.js';
import { DIFF_OPTIONS, pathspecProblem, REVISION_OPTIONS, revisionPath, revisionPathWord } from './gitOptions.js';
import { flags, opt, treesOf, type OperandPlan, type OptionsSeen, type OptionSyntax, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';

/** parse-options: prefixes, `--no-` negations, options anywhere. */
export const GIT_SYNTAX: OptionSyntax = { long: 'git', permute: true };
/** log, show and stash list read their options by exact name (revision.c, and parse-options with abbreviation off). */
export const GIT_EXACT: OptionSyntax = { long: 'git-exact', permute: true };

/**
 * Operands before `--` as revisions (each a possible path too, or the path a
 * `REV:PATH` reads) and after it as pathspecs. Shared by the subcommands that
 * take `[<revision>…] [--] [<path>…]`.
 */
export function planRevisionsAndPaths(operands: readonly ParsedOperand[], pathKind: WordKind = 'read-path'): OperandPlan {
  const kinds: WordKind[] = [];
  const reads: ShellWord[] = [];
  const revisionPaths: ShellWord[] = [];
  for (const operand of operands) {
    const word = operand.word;
    kinds.push(operand.afterDashDash ? pathKind : 'revision');
    if (!word.static) continue; // refused by kind
    const problem = pathspecProblem(word);
    if (operand.afterDashDash) {
      if (problem !== undefined) return { kinds, refused: { reason: problem } };
      continue;
    }
    const path = revisionPath(word.text);
    if (path === 'unreadable') return { kinds, refused: { reason: `the revision ${JSON.stringify(word.text)} cannot be read (its braces do not balance)` } };
    if (path !== undefined) revisionPaths.push(revisionPathWord(word, path));
    else if (problem !== undefined) return { kinds, refused: { reason: problem } };
    else reads.push(word);
  }
  return { kinds, extra: { reads, ...(revisionPaths.length > 0 ? { revisionPaths } : {}) } };
}

/** Operands that are pathspecs only (status, add, commit…). */
export function planPathspecs(operands: readonly ParsedOperand[], kind: WordKind): OperandPlan {
  const kinds: WordKind[] = operands.map(() => kind);
  for (const operand of operands) {
    const problem = pathspecProblem(operand.word);
    if (problem !== undefined) return { kinds, refused: { reason: problem } };
  }
  return { kinds };
}

export const GIT_STATUS: ProgramModel = {
  name: 'git status',
  syntax: GIT_SYNTAX,
  options: [
    ...flags('v|verbose', 's|short', 'b|branch', 'show-stash', 'ahead-behind', 'long', 'z|null', 'no-renames', 'renames'),
    opt('porcelain[=]'),
    opt('u|untracked-files[=]'),
    opt('ignored[=]'),
    opt('ignore-submodules[=]'),
    opt('column[=]'),
    opt('M|find-renames[=]'),
  ],
  plan: (_options, operands) => planPathspecs(operands, 'read-path'),
};

function planDiff(options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  const dashDash = operands.some((o) => o.afterDashDash);
  const noIndex = options.has('--no-index') || (!dashDash && operands.length === 2 && !options.has('--cached', '--staged', '--merge-base'));
  if (!noIndex) return planRevisionsAndPaths(operands);
  if (operands.length !== 2) return { kinds: [], refused: { reason: 'git diff --no-index compares exactly two paths' } };
  const words = operands.map((o) => o.word).filter((w) => w.static && w.text !== '-');
  const plan = planRevisionsAndPaths(operands);
  if (plan.refused !== undefined) return plan;
  // Both are paths here (or revisions, when git does not fall back): read, and read as trees, either way.
  const revisionPaths = plan.extra?.revisionPaths;
  return { kinds: operands.map(() => 'read-path'), extra: { trees: treesOf(words, true, false), ...(revisionPaths === undefined ? {} : { revisionPaths }) } };
}

export const GIT_DIFF: ProgramModel = {
  name: 'git diff',
  syntax: GIT_SYNTAX,
  options: [...DIFF_OPTIONS, ...flags('cached', 'staged', 'merge-base', 'no-index', '1|base', '2|ours', '3|theirs', '0', 'c', 'cc')],
  plan: planDiff,
};

export const GIT_LOG: ProgramModel = {
  name: 'git log',
  syntax: GIT_EXACT,
  options: [...DIFF_OPTIONS, ...REVISION_OPTIONS],
  plan: (_options, operands) => planRevisionsAndPaths(operands),
};

export const GIT_SHOW: ProgramModel = { ...GIT_LOG, name: 'git show' };
