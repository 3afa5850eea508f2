// The comparison half of the bash oracle: what bash executed (from the shims' log),
// wrote (the sandbox before and after) and read (credential canaries, atimes, fds),
// set against the parts the policy judged. Pure but for resolving paths in the sandbox.
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import type { ActionVerdict, PolicyPart } from '../../src/core/policy/actionPlan.js';
import type { ParsedShell, ShellWord, SimpleCommand } from '../../src/core/policy/shellCommand.js';
import type { BashRun, Execution } from './bashOracle.js';
import { programEffects } from './bashOracleModels.js';

/** What the checks need to know of the sandbox a command ran in. */
export interface SandboxFacts {
  home: string;
  /** The agent's cwd (physical). */
  cwd: string;
  /** The only PATH entry: a program found anywhere else is not the one its name stands for. */
  shims: string;
  credentialFiles: string[];
  /** A string in every credential file: seen anywhere else, a credential was read. */
  canary: string;
}

export type FindingKind =
  /** (1) bash executed a program that no part names, and no part that could run anything is refused. */
  | 'unjudged'
  /** (2) allowed, but an executed program's argv is not the static words of any allowed part. */
  | 'unmatched'
  /** (2) allowed, but the program is none of the default policy's models (R-SH-6, R-POL-8). */
  | 'not-a-model'
  /** (2) allowed, but the program that ran is not the shims' one (a changed PATH, a path in the project). */
  | 'foreign-program'
  /** (3) allowed, but something was written outside the cwd. */
  | 'wrote-outside'
  /** (3) allowed, but a gate file (R-SH-9) or a credential location (R-POL-8) was written. */
  | 'wrote-gate'
  /** (3) allowed, but a credential location was read (R-POL-8, R-SH-10). */
  | 'read-credential'
  /** (3) allowed, but an allowed program was given an option that makes it run another program. */
  | 'ran-program';

export interface Finding {
  kind: FindingKind;
  program?: string;
  detail: string;
}

/**
 * Programs the default policy may allow (R-POL-8 and its wrappers, R-SH-1);
 * `PROGRAM --version`/`-V` is allowed for any program.
 */
export const ALLOWED_MODELS: ReadonlySet<string> = new Set([
  'ls', 'pwd', 'cat', 'head', 'tail', 'wc', 'grep', 'rg', 'file', 'stat', 'git', 'which', 'echo', 'printf', 'sort', 'uniq', 'diff',
  'cmp', 'du', 'tree', 'basename', 'dirname', 'realpath', 'date', 'whoami', 'uname', 'find', 'sed', 'mkdir', 'touch', 'cp', 'mv',
  'timeout', 'nice', 'nohup', 'stdbuf',
  // Its read-only subcommands (`assent pending`, `policy explain`…) only.
  'assent',
]);

/** One parsed simple command and the part that judged it (none: the policy dropped it). */
export interface JudgedCommand {
  command: SimpleCommand;
  part?: PolicyPart;
}

/**
 * Pairs the parser's simple commands with the verdict's command parts. A part's
 * text is the command as written, with `  (run by …)` for what a wrapper or a
 * substitution runs (src/core/policy/shellPolicy.ts); parts keep the parser's order.
 */
export function pairParts(parsed: ParsedShell, verdict: ActionVerdict): JudgedCommand[] {
  const parts = verdict.parts.filter((p) => p.kind === 'command');
  const used = new Set<number>();
  let cursor = 0;
  return parsed.commands.map((command): JudgedCommand => {
    if (command.words.length === 0 && command.redirects.length > 0) return { command };
    const fits = (p: PolicyPart): boolean => p.text === command.text || p.text.startsWith(`${command.text}  (run by `);
    let index = parts.findIndex((p, i) => i >= cursor && !used.has(i) && fits(p));
    if (index < 0) index = parts.findIndex((p, i) => !used.has(i) && fits(p));
    if (index < 0) return { command };
    used.add(index);
    cursor = index + 1;
    return { command, part: parts[index] as PolicyPart };
  });
}

function nameOf(command: SimpleCommand): string | undefined {
  const first = command.words[0];
  if (first === undefined || !first.static || first.tilde === true) return undefined;
  return first.text.slice(first.text.lastIndexOf('/') + 1);
}

/** R-SH-1: `-c`/`eval` strings are parsed again to depth 3; deeper ones are not statically known. (The helper imports no value from src/, so the bench can load it against dist/.) */
const MAX_SHELL_DEPTH = 3;

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);
/** Builtins that evaluate text as code, or assign names bash evaluates as array subscripts (arithmetic runs `$(…)` there). */
const EVALUATING = new Set(['source', '.', 'trap', 'alias', 'hash', 'enable', 'let', 'declare', 'typeset', 'local', 'export', 'readonly', 'read', 'mapfile', 'readarray', 'unset', 'getopts', 'select', '[[', '((']);
/** Expansions that evaluate a variable's value as arithmetic or a prompt string: `${x@P}`, `${!x}`, `${a[i]}`, `${x:i}`, `$((x))`, `$[x]`. */
const EVALUATING_WORD = /\$\{[!#]?[A-Za-z_0-9]*(\[|@|:(?![-=?+]))|\$\{!|\$\(\(|\$\[/;
/** Wrappers (R-SH-1) that run a real program: with a word not statically known, they may run any program. */
const WRAPPERS = new Set(['env', 'xargs', 'timeout', 'nice', 'nohup', 'stdbuf', 'find', 'command', 'exec', 'builtin', 'time', 'coproc', 'sudo', 'doas', 'watch', 'busybox']);
/** Variables that make bash or a child shell run code no word names (a startup file, a trace prompt). */
const LINE_TAINT = /\b(BASH_ENV|ENV|PS4|SHELLOPTS|BASHOPTS|PROMPT_COMMAND)\b/;

/** Whether the code a shell runs is one static `-c` string (then the parser reads it: R-SH-1). */
function staticCode(words: readonly ShellWord[]): boolean {
  let hasC = false;
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    if (!word.static) return false;
    if (word.text === '--') return hasC && words[i + 1]?.static === true;
    if (/^[-+][A-Za-z]+$/.test(word.text)) {
      if (word.text.startsWith('-') && word.text.includes('c')) hasC = true;
      if (/[oO]$/.test(word.text)) i += 1;
      continue;
    }
    return hasC;
  }
  return false;
}

/**
 * A part that may run a program no word names: a command name that is not
 * static, code from a variable, a file or stdin (`eval "$x"`, `source f`,
 * `bash f`, `… | sh`), a wrapper given a word that is not static
 * (`time ${x:-ls}`), or an expansion bash evaluates as code. Refused, it covers
 * whatever bash ran (the person is told it is not statically known).
 */
export function opaque(command: SimpleCommand): boolean {
  if (command.words.length === 0) return command.assignments.some((a) => a.name.includes('['));
  const name = nameOf(command);
  if (name === undefined) return true;
  if (EVALUATING.has(name)) return true;
  if ((name === 'printf' && command.words.some((w) => w.static && /^-[^-]*v/.test(w.text))) || ((name === 'test' || name === '[') && command.words.some((w) => w.text === '-v'))) return true;
  if (name === 'eval') return command.words.slice(1).some((w) => !w.static) || command.depth >= MAX_SHELL_DEPTH;
  if (SHELLS.has(name) && (!staticCode(command.words) || command.depth >= MAX_SHELL_DEPTH)) return true;
  if (WRAPPERS.has(name) && command.words.some((w) => !w.static)) return true;
  if (command.assignments.some((a) => a.name.includes('['))) return true;
  return command.words.some((w) => !w.static && EVALUATING_WORD.test(w.text));
}

// ---- argv against words ---------------------------------------------------------

type Slot = { exact: string } | { one: true } | { any: true };

/** What each word lets bash pass: its static text (`~` expanded), or for a plain `$NAME` anything (R-SH-5). */
function slotsOf(words: readonly ShellWord[], home: string): Slot[] | undefined {
  const slots: Slot[] = [];
  for (const word of words) {
    if (word.static) slots.push({ exact: word.tilde === true ? `${home}${word.text.slice(1)}` : word.text });
    else if (word.plainVars !== undefined) slots.push(word.plainVars.quoted ? { one: true } : { any: true });
    else return undefined;
  }
  return slots;
}

function fits(slots: readonly Slot[], args: readonly string[], i = 0, j = 0): boolean {
  if (i === slots.length) return j === args.length;
  const slot = slots[i] as Slot;
  if ('any' in slot) {
    for (let k = j; k <= args.length; k += 1) if (fits(slots, args, i + 1, k)) return true;
    return false;
  }
  if (j >= args.length) return false;
  if ('exact' in slot && slot.exact !== args[j]) return false;
  return fits(slots, args, i + 1, j + 1);
}

/** Whether an allowed part's words are exactly what this program was run with. */
export function argvFits(command: SimpleCommand, execution: Execution, home: string): boolean {
  if (nameOf(command) !== execution.program) return false;
  const slots = slotsOf(command.words.slice(1), home);
  return slots !== undefined && fits(slots, execution.args);
}

// ---- paths ------------------------------------------------------------------------

/** Where `path` lands from `base`, as the kernel resolves it, following symlinks even when dangling (R-PATH-1). */
export function landing(path: string, base: string): string {
  let rest = (path.startsWith('/') ? path : `${base}/${path}`).split('/');
  let resolved = '';
  let hops = 0;
  while (rest.length > 0) {
    const part = rest.shift() as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      resolved = resolved.slice(0, Math.max(0, resolved.lastIndexOf('/')));
      continue;
    }
    const next = `${resolved}/${part}`;
    let target: string | undefined;
    try {
      if (lstatSync(next).isSymbolicLink()) target = readlinkSync(next);
    } catch {
      // does not exist (yet): taken as written
    }
    if (target !== undefined && hops < 40) {
      hops += 1;
      rest = [...target.split('/'), ...rest];
      if (target.startsWith('/')) resolved = '';
      continue;
    }
    resolved = next;
  }
  return resolved === '' ? '/' : resolved;
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** Credential locations (R-POL-8) and assent's own state, inside the sandbox's HOME or anywhere as `.env`. */
export function isCredential(path: string, home: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (/^\.env(\.(?!example$).+)?$/.test(base)) return true;
  if (['.ssh', '.aws', '.gnupg', '.config/gh', '.config/gcloud', '.azure', '.assent'].some((d) => under(path, `${home}/${d}`))) return true;
  return ['.kube/config', '.docker/config.json', '.npmrc', '.pypirc', '.netrc', '.git-credentials'].some((f) => path === `${home}/${f}`);
}

/** Gate files (R-SH-9) under the cwd and the agents' own settings (R-POL-8). */
export function isGate(path: string, cwd: string, home: string): boolean {
  if (['.git/config', '.gitmodules', '.mcp.json', '.envrc'].some((f) => path === `${cwd}/${f}`)) return true;
  if (['.git/hooks', '.git/info', '.claude', '.gemini', '.codex', '.cursor', '.opencode', '.github/hooks'].some((d) => under(path, `${cwd}/${d}`))) return true;
  return /^\/(\.claude\/settings[^/]*\.json|\.gemini\/settings\.json|\.codex(\/.*)?)$/.test(path.startsWith(home) ? path.slice(home.length) : '');
}

const DEVICES = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

function writeFinding(path: string, facts: SandboxFacts, how: string): Finding | undefined {
  if (DEVICES.has(path)) return undefined;
  if (isCredential(path, facts.home) || isGate(path, facts.cwd, facts.home)) return { kind: 'wrote-gate', detail: `${how} wrote ${path}, a gate file or credential location` };
  if (!under(path, facts.cwd)) return { kind: 'wrote-outside', detail: `${how} wrote ${path}, outside the cwd` };
  return undefined;
}

/** Every credential file beneath `dir`, skipping hidden entries when the reader does (`rg` without `--hidden`). */
function credentialsBeneath(dir: string, hidden: boolean, facts: SandboxFacts): string[] {
  return facts.credentialFiles.filter((cred) => under(cred, dir) && (hidden || !cred.slice(dir.length).split('/').some((c) => c.startsWith('.'))));
}

// ---- git's repository configuration ----------------------------------------------

function isGitDir(dir: string): boolean {
  try {
    return existsSync(`${dir}/HEAD`) && statSync(`${dir}/objects`).isDirectory() && statSync(`${dir}/refs`).isDirectory();
  } catch {
    return false;
  }
}

/** The repository git would use from `dir`: a `.git` in it or above it, or a bare repository `dir` is inside. */
export function gitDirFrom(dir: string): string | undefined {
  for (let at = dir; ; at = at.slice(0, at.lastIndexOf('/'))) {
    if (isGitDir(`${at}/.git`)) return `${at}/.git`;
    if (isGitDir(at)) return at;
    if (at.lastIndexOf('/') <= 0) return undefined;
  }
}

/** Keys of a git configuration that make git run a program (R-SH-9). */
export function gitExecutionKeys(config: string): string[] {
  const keys: string[] = [];
  let section = '';
  for (const raw of config.split('\n')) {
    let line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (header !== null) {
      // `[core] fsmonitor = x`: git reads a key after the header on the same line.
      section = (header[1] as string).toLowerCase();
      line = line.slice(header[0].length).trim();
    }
    const entry = /^([A-Za-z0-9-]+)\s*(?:=\s*(.*))?$/.exec(line);
    if (entry === null) continue;
    const key = `${section}.${(entry[1] as string).toLowerCase()}`;
    if (/^core\.(fsmonitor|pager|editor|sshcommand|hookspath)$|^diff\.(textconv|command|external)$|^filter\.|^include\.path$|^includeif\.|^(pager|sequence)\./.test(key)) keys.push(key);
    else if (section === 'alias' && (entry[2] ?? '').trim().startsWith('!')) keys.push(key);
  }
  return keys;
}

/** Why git run from `pwd` (after `-C` arguments) would run a program its repository's configuration names. */
function gitConfigRuns(args: readonly string[], pwd: string): string | undefined {
  let dir = pwd;
  for (let i = 0; i < args.length && (args[i] as string).startsWith('-'); i += 1) {
    if (args[i] === '-C' && args[i + 1] !== undefined) dir = landing(args[(i += 1)] as string, dir);
    else if (args[i] === '-c' || args[i] === '--git-dir' || args[i] === '--work-tree') i += 1;
  }
  const gitDir = gitDirFrom(landing('.', dir));
  if (gitDir === undefined) return undefined;
  let keys: string[];
  try {
    keys = gitExecutionKeys(readFileSync(`${gitDir}/config`, 'utf8'));
  } catch {
    return undefined;
  }
  return keys.length === 0 ? undefined : `the repository ${gitDir} sets ${keys.join(', ')}, which makes git run a program`;
}

// ---- the checks ---------------------------------------------------------------------

export interface CheckInput {
  command: string;
  parsed: ParsedShell;
  verdict: ActionVerdict;
  run: BashRun;
  sandbox: SandboxFacts;
}

function shown(execution: Execution): string {
  return `${execution.program} ${JSON.stringify(execution.args)}`;
}

/** (2) and (3) for one execution under an `allow`. */
function allowedExecution(execution: Execution, allowed: readonly JudgedCommand[], facts: SandboxFacts, out: Finding[]): void {
  const program = execution.program;
  const at = landing(execution.path.includes('/') ? execution.path : `${facts.shims}/${program}`, execution.pwd);
  if (at.slice(0, at.lastIndexOf('/')) !== facts.shims) out.push({ kind: 'foreign-program', program, detail: `bash ran ${at}, not the ${program} the allowed part stands for` });
  const version = execution.args.length === 1 && (execution.args[0] === '--version' || execution.args[0] === '-V');
  if (!ALLOWED_MODELS.has(program) && !version) out.push({ kind: 'not-a-model', program, detail: `bash executed ${shown(execution)}, and ${program} is not one of the allowed models` });
  if (!allowed.some((j) => argvFits(j.command, execution, facts.home))) out.push({ kind: 'unmatched', program, detail: `bash executed ${shown(execution)}, which no allowed part's static words describe` });
  if (execution.fds.length > 0) out.push({ kind: 'read-credential', program, detail: `bash opened ${execution.fds.join(', ')} as ${program}'s stdin/stdout/stderr` });
  if (execution.args.some((a) => a.includes(facts.canary))) out.push({ kind: 'read-credential', program, detail: `${program} was given a credential's content as an argument` });
  if (version) return;
  const effects = programEffects(program, execution.args);
  for (const path of effects.reads) {
    const at = landing(path, execution.pwd);
    if (isCredential(at, facts.home)) out.push({ kind: 'read-credential', program, detail: `${shown(execution)} reads ${at}` });
  }
  for (const tree of effects.trees) {
    const found = credentialsBeneath(landing(tree.dir, execution.pwd), tree.hidden, facts);
    if (found.length > 0) out.push({ kind: 'read-credential', program, detail: `${shown(execution)} reads ${tree.dir} recursively, and ${found.join(', ')} lie beneath` });
  }
  for (const path of effects.writes) {
    const finding = writeFinding(landing(path, execution.pwd), facts, shown(execution));
    if (finding !== undefined) out.push({ ...finding, program });
  }
  for (const runs of effects.runs) out.push({ kind: 'ran-program', program, detail: `${shown(execution)}: ${runs}` });
  const config = program === 'git' ? gitConfigRuns(execution.args, execution.pwd) : undefined;
  if (config !== undefined) out.push({ kind: 'ran-program', program, detail: `${shown(execution)}: ${config}` });
}

/**
 * The oracle's verdict on one command: (1) every program bash executed is named by
 * a judged part, or a refused part could have run anything; (2) under `allow`,
 * every execution is an allowed part's exact words and an allowed model; (3) under
 * `allow`, nothing was written outside the cwd or to a gate file, and no credential was read.
 */
export function checkRun(input: CheckInput): Finding[] {
  const { parsed, verdict, run, sandbox: facts } = input;
  const judged = pairParts(parsed, verdict);
  const findings: Finding[] = [];
  const covers =
    verdict.parts.some((p) => p.kind === 'error' && p.decision !== 'allow') ||
    judged.some((j) => j.part !== undefined && j.part.decision !== 'allow' && opaque(j.command)) ||
    (verdict.decision !== 'allow' && LINE_TAINT.test(input.command));
  for (const execution of run.executions) {
    if (covers || judged.some((j) => j.part !== undefined && nameOf(j.command) === execution.program)) continue;
    findings.push({ kind: 'unjudged', program: execution.program, detail: `bash executed ${shown(execution)}, and no judged part names ${execution.program}` });
  }
  if (verdict.decision === 'allow') {
    const allowed = judged.filter((j) => j.part?.decision === 'allow' && j.command.words.length > 0);
    for (const execution of run.executions) allowedExecution(execution, allowed, facts, findings);
    for (const path of run.changed) {
      const finding = writeFinding(path, facts, 'the command');
      if (finding !== undefined) findings.push(finding);
    }
    for (const path of run.atimeReads) findings.push({ kind: 'read-credential', detail: `${path} was read (its atime moved)` });
    for (const path of run.canaryFiles) findings.push({ kind: 'read-credential', detail: `${path} now holds a credential's content` });
    if (run.stdout.includes(facts.canary) || run.stderr.includes(facts.canary)) findings.push({ kind: 'read-credential', detail: `a credential's content was printed` });
  }
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.kind}\0${f.program ?? ''}\0${f.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
