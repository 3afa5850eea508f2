// The program models (R-SH-6), by the command names they answer to. A shell
// policy asks `judgeProgram` what one simple command does; undefined means no
// model knows the program, and the policy decides without one.
import { commandBaseName, type ShellWord } from '../shellCommand.js';
import { ASSENT_AUDIT, ASSENT_AUDIT_VERIFY, ASSENT_DAEMON_STATUS, ASSENT_PENDING, ASSENT_POLICY_EXPLAIN, judgeAssent } from './assent.js';
import { judgeCd, judgeEcho, judgeIgnoringArguments, judgePrintf, judgePushd } from './builtins.js';
import { CP, MV } from './copyMove.js';
import { CMP, DIFF } from './diffCmp.js';
import { DU, TREE } from './duTree.js';
import { CHECKSUMS } from './checksums.js';
import { DOCKER_GLOBAL, DOCKER_MODELS, judgeDocker } from './docker.js';
import { CAT, HEAD, TAIL, WC } from './fileReaders.js';
import { FILE, STAT } from './fileInfo.js';
import { MKDIR, TOUCH } from './fileOps.js';
import { FD, FDFIND, judgeFd } from './fd.js';
import { judgeFind } from './find.js';
import { GH_MODELS, judgeGh } from './gh.js';
import { GIT_GLOBAL, GIT_SUBCOMMAND_MODELS, gitDeclaresVariable, judgeGit } from './git.js';
import { GIT_STASH_APPLY, GIT_STASH_LIST, GIT_STASH_POP, GIT_STASH_PUSH, GIT_STASH_SHOW } from './gitWork.js';
import { EGREP, FGREP, GREP } from './grep.js';
import { judgeJq } from './jq.js';
import { judgeModel } from './judgeModel.js';
import { LS } from './ls.js';
import { COMMAND, TYPE } from './nameLookup.js';
import { BASENAME, DIRNAME, REALPATH } from './pathNames.js';
import type { ProgramModel } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';
import { RG } from './rg.js';
import { SED } from './sed.js';
import { judgeExpr, judgeSeq, SEQ } from './seqExpr.js';
import { SORT, UNIQ } from './sortUniq.js';
import { DATE, PWD, UNAME, WHICH, WHOAMI } from './systemInfo.js';
import { SYSTEM_TOOLS } from './systemTools.js';
import { judgeBracket, judgeTest } from './testBuiltin.js';
import { TEXT_TOOLS } from './textTools.js';
import { judgeVersion } from './version.js';
import { NICE, NOHUP, STDBUF, TIME, TIMEOUT } from './wrappers.js';

export { judgeVersion, DASH_V_VERSION } from './version.js';
export { DESCRIPTIVE_VARIABLES } from './judgeModel.js';
export { FIND_PLAIN, FIND_REFUSED, FIND_WITH_ARG } from './find.js';
export { GIT_GLOBAL_OPTIONS } from './git.js';
export type { ProgramVerdict, TreeRead, TreeWrite } from './programVerdict.js';

type ProgramJudge = (args: readonly ShellWord[], assigned: ReadonlySet<string>) => ProgramVerdict;

/** Models read by the interpreter, one per program (or subcommand): the data `policy explain` and the tests enumerate. */
export const PROGRAM_MODELS: readonly ProgramModel[] = [
  LS, CAT, HEAD, TAIL, WC, FILE, STAT, GREP, RG, SORT, UNIQ, DIFF, CMP, DU, TREE, BASENAME, DIRNAME, REALPATH, DATE, WHOAMI, UNAME, WHICH,
  PWD, SED, MKDIR, TOUCH, CP, MV, TIME, TIMEOUT, NICE, NOHUP, STDBUF,
  GIT_GLOBAL, ...GIT_SUBCOMMAND_MODELS, GIT_STASH_PUSH, GIT_STASH_LIST, GIT_STASH_SHOW, GIT_STASH_APPLY, GIT_STASH_POP,
  ASSENT_PENDING, ASSENT_DAEMON_STATUS, ASSENT_POLICY_EXPLAIN, ASSENT_AUDIT, ASSENT_AUDIT_VERIFY,
  // Read-only programs that coding agents approve on their own.
  ...TEXT_TOOLS, ...CHECKSUMS, SEQ,
  ...SYSTEM_TOOLS,
  EGREP, FGREP, FD, FDFIND,
  COMMAND, TYPE,
  ...GH_MODELS, DOCKER_GLOBAL, ...DOCKER_MODELS,
];

/** Programs with subcommands, judged by their own function (their models are named `git status`, `docker ps`). */
const WITH_SUBCOMMANDS = new Set(['git', 'docker']);
const SIMPLE_PROGRAMS = PROGRAM_MODELS.filter((m) => !m.name.includes(' ') && !WITH_SUBCOMMANDS.has(m.name));

const JUDGES: ReadonlyMap<string, ProgramJudge> = new Map<string, ProgramJudge>([
  ...SIMPLE_PROGRAMS.map((m): [string, ProgramJudge] => [m.name, (args, assigned) => judgeModel(m, args, assigned)]),
  ['find', judgeFind],
  ['git', judgeGit],
  ['gh', judgeGh],
  ['docker', judgeDocker],
  ['fd', judgeFd(FD)],
  ['fdfind', judgeFd(FDFIND)],
  ['seq', judgeSeq],
  ['expr', judgeExpr],
  ['jq', judgeJq],
  ['test', judgeTest],
  ['[', judgeBracket],
  ['assent', judgeAssent],
  ['echo', judgeEcho],
  ['printf', judgePrintf],
  ['true', judgeIgnoringArguments('true')],
  ['false', judgeIgnoringArguments('false')],
  ['cd', (args) => judgeCd(args)],
  ['pushd', (args) => judgePushd(args)],
]);

/** Every command name a model answers to. */
export const MODELLED_PROGRAMS: readonly string[] = [...JUDGES.keys()].sort();

/**
 * What one simple command does under its program's model: refused (with the
 * option or word that decided it) or accepted, with the paths it reads and
 * writes, the trees it reads and the repository it obeys. `assigned` holds the
 * variables the command line assigns anywhere (`*`: a name not statically
 * known). Undefined when no model knows `words[0]` (a command named by a path
 * with `/` has none); `NAME --version` is then judged by the version model.
 */
export function judgeProgram(words: readonly ShellWord[], assigned: ReadonlySet<string>, prefixes: ReadonlySet<string> = NO_PREFIXES): ProgramVerdict | undefined {
  const first = words[0];
  const name = commandBaseName(first);
  if (first === undefined || name === undefined || first.text.includes('/')) return undefined;
  const judge = JUDGES.get(name);
  if (judge === undefined) return judgeVersion(words);
  if (prefixes.has('POSIXLY_CORRECT')) {
    // getopt stops at the first operand: `POSIXLY_CORRECT=1 cp README.md -t . ../out` copies to ../out.
    const model = SIMPLE_PROGRAMS.find((m) => m.name === name);
    if (model === undefined || model.syntax.long !== 'getopt') {
      return { model: model?.name ?? name, refused: `POSIXLY_CORRECT changes how ${name} reads its options, and its model does not say how`, reads: [], writes: [], trees: [] };
    }
    return judgeModel({ ...model, syntax: { ...model.syntax, permute: false } }, words.slice(1), assigned);
  }
  return judge(words.slice(1), assigned);
}

const NO_PREFIXES: ReadonlySet<string> = new Set();

/**
 * Whether the model of the command `words` runs declares the variable a
 * prefix assigns and judges it itself (R-SH-3): POSIXLY_CORRECT for a program
 * that reads its options with getopt (parsed then without permutation), and
 * a pager of `cat` (or none) for git.
 */
export function modelDeclaresVariable(words: readonly ShellWord[], name: string, value: ShellWord): boolean {
  const first = words[0];
  const program = commandBaseName(first);
  if (first === undefined || program === undefined || first.text.includes('/') || !JUDGES.has(program)) return false;
  if (name === 'POSIXLY_CORRECT') return SIMPLE_PROGRAMS.some((m) => m.name === program && m.syntax.long === 'getopt');
  if (program === 'git') return gitDeclaresVariable(name, value);
  return false;
}
