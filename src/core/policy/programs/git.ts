// git (2.39): the options before the subcommand, then one of the modelled
// subcommands. `-C DIR` moves where git runs (and where its path operands are
// relative to); options that bring their own configuration, repository or
// programs (-c, --git-dir, --exec-path…) are refused. Every accepted form sets
// `repository`, so the edge checks the configuration git would obey (R-SH-9).
// Anything touching a remote is no modelled subcommand, so it is refused.
import type { ShellWord } from '../shellCommand.js';
import { GIT_BRANCH, GIT_CHECKOUT, GIT_RESTORE, GIT_SWITCH } from './gitBranch.js';
import { GIT_DIFF, GIT_LOG, GIT_SHOW, GIT_STATUS } from './gitInspect.js';
import { GIT_READ_FORMS, GIT_READ_MODELS, judgeGitReflog, judgeGitRemote, judgeGitWorktree } from './gitRead.js';
import { gitHooksRun } from './gitHooks.js';
import { GIT_ADD, GIT_COMMIT, judgeGitStash } from './gitWork.js';
import { judgeModel, refusedOption, refusedVerdict } from './judgeModel.js';
import { parseOptions } from './optionParser.js';
import { flags, opt, type OptionSpec, type OptionSyntax, type ProgramModel } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

// git.c reads these itself, by exact name, up to the first word that is no option.
const GIT_GLOBAL_SYNTAX: OptionSyntax = { long: 'exact', permute: false };

const CONFIG = 'brings its own configuration, which can run programs';

export const GIT_GLOBAL_OPTIONS: readonly OptionSpec[] = [
  opt('C=', { value: 'read-path' }),
  ...flags(
    'P|no-pager', 'no-replace-objects', 'literal-pathspecs', 'no-literal-pathspecs', 'glob-pathspecs', 'noglob-pathspecs', 'icase-pathspecs',
    'no-optional-locks', 'v|version', 'html-path', 'man-path', 'info-path',
  ),
  opt('c=', { refuse: CONFIG }),
  opt('config-env=', { refuse: CONFIG }),
  opt('exec-path[=]', { refuse: 'chooses the directory git runs its programs from' }),
  ...['git-dir', 'work-tree', 'namespace', 'super-prefix', 'shallow-file', 'list-cmds', 'attr-source'].map((n) => opt(`${n}=`, { refuse: 'chooses another repository or what git reads, which this model does not follow' })),
  opt('bare', { refuse: 'chooses another repository, which this model does not follow' }),
  opt('p|paginate', { refuse: 'runs a pager' }),
  opt('h|help', { refuse: 'may open a manual page or a browser' }),
];

/** The global options' model, for tests and `policy explain`. */
export const GIT_GLOBAL: ProgramModel = { name: 'git', syntax: GIT_GLOBAL_SYNTAX, options: GIT_GLOBAL_OPTIONS, plan: () => ({ kinds: [] }) };

type SubcommandJudge = (args: readonly ShellWord[], assigned: ReadonlySet<string>) => ProgramVerdict;

function model(m: ProgramModel): SubcommandJudge {
  return (args, assigned) => judgeModel(m, args, assigned);
}

export const GIT_SUBCOMMAND_MODELS: readonly ProgramModel[] = [GIT_STATUS, GIT_DIFF, GIT_LOG, GIT_SHOW, GIT_BRANCH, GIT_ADD, GIT_COMMIT, GIT_SWITCH, GIT_CHECKOUT, GIT_RESTORE, ...GIT_READ_MODELS, ...GIT_READ_FORMS];

const SUBCOMMANDS: ReadonlyMap<string, SubcommandJudge> = new Map<string, SubcommandJudge>([
  ...GIT_SUBCOMMAND_MODELS.map((m): [string, SubcommandJudge] => [m.name.slice('git '.length), model(m)]),
  ['stash', judgeGitStash],
  ['reflog', judgeGitReflog],
  ['worktree', judgeGitWorktree],
  ['remote', judgeGitRemote],
]);

/** Subcommands that look into each submodule, and so run what its own configuration names (R-SH-12). */
const RECURSING = new Set(['status', 'diff', 'describe']);

const REMOTE = ['push', 'fetch', 'pull', 'clone', 'submodule', 'ls-remote', 'archive', 'request-pull', 'send-email', 'svn', 'p4'];

export function judgeGit(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const parsed = parseOptions(args, GIT_GLOBAL_SYNTAX, GIT_GLOBAL_OPTIONS, 0);
  if (parsed.refused !== undefined) return refusedVerdict('git', parsed.refused);
  const refusal = refusedOption(parsed.options);
  if (refusal !== undefined) return refusedVerdict('git', refusal);
  const chdir: ShellWord[] = [];
  for (const option of parsed.options) {
    if (option.name !== '-C' || option.value === undefined) continue;
    if (!option.value.static) return refusedVerdict('git', { reason: `the directory of -C is not statically known (${option.value.why ?? option.value.text})`, option: '-C' });
    chdir.push(option.value);
  }
  const rest = parsed.rest ?? [];
  const sub = rest[0];
  if (sub === undefined) return { model: 'git', reads: [], writes: [], trees: [], repository: { chdir } };
  if (!sub.static) return refusedVerdict('git', { reason: `the subcommand ${JSON.stringify(sub.text)} is not statically known (${sub.why ?? 'not a literal'})` });
  const judge = SUBCOMMANDS.get(sub.text);
  if (judge === undefined) {
    const why = REMOTE.includes(sub.text) ? 'touches a remote or another repository' : 'is not a modelled subcommand';
    return refusedVerdict(`git ${sub.text}`, { reason: `git ${sub.text} ${why}` });
  }
  const verdict = judge(rest.slice(1), assigned);
  if (verdict.refused !== undefined) return verdict;
  const checkout = verdict.repository?.checkout;
  const subArgs = rest.slice(1);
  const hooks = gitHooksRun(sub.text, subArgs);
  const recurses = RECURSING.has(sub.text) || subArgs.some((w) => w.static && w.text.startsWith('--recurse-submodules'));
  // git stash resets and deletes files across the whole work tree (also above the cwd) unless paths narrow it.
  const stashSub = sub.text === 'stash' ? (subArgs[0]?.static === true && !subArgs[0].text.startsWith('-') ? subArgs[0].text : 'push') : undefined;
  const wholeTree = stashSub !== undefined && stashSub !== 'list' && stashSub !== 'show' && (stashSub !== 'push' || verdict.writes.length === 0);
  verdict.repository = {
    chdir,
    ...(checkout === undefined ? {} : { checkout }),
    ...(hooks.length > 0 ? { hooks } : {}),
    ...(recurses ? { recurses: true } : {}),
    ...(wholeTree ? { wholeTree: true } : {}),
  };
  return verdict;
}

/**
 * The environment that moves where git finds its configuration and
 * repository (R-SH-12): a prefix assigning one of these with a static value is
 * followed by the edge, which reads the files git would read under it.
 */
export const GIT_ENVIRONMENT = /^(HOME|XDG_CONFIG_HOME|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_CONFIG_NOSYSTEM|GIT_DIR|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_[0-9]+|GIT_CONFIG_VALUE_[0-9]+)$/;

/**
 * The prefix assignments the git model judges itself (R-SH-3): a pager that
 * only copies its input (`GIT_PAGER=cat git log`), and the environment of
 * {@link GIT_ENVIRONMENT}. Every other GIT_* variable moves the repository,
 * its work tree or what git runs in ways this model does not follow.
 */
export function gitDeclaresVariable(name: string, value: ShellWord): boolean {
  if ((name === 'GIT_PAGER' || name === 'PAGER') && value.static && (value.text === 'cat' || value.text === '')) return true;
  return GIT_ENVIRONMENT.test(name) && value.static;
}
