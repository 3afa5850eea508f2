// Plans the decision for a shell action (R-SH-1..4): each simple command against
// `policy.commands`, each redirection and read operand as a path for
// `policy.paths`, `cd` followed so relative paths are judged where they land.
import { autoApprovedPart, type ActionPlan, type PlannedPath, type PolicyPart } from './actionPlan.js';
import { networkIntoShellParts } from './networkIntoShell.js';
import { GIT_ENVIRONMENT } from './programs/git.js';
import type { ProgramVerdict } from './programs/programVerdict.js';
import { approveCommand, NO_AUTO_APPROVALS, type AutoApprovals } from './autoApproval.js';
import { planCommandRisks, planLineRisks } from './commandRisks.js';
import { confineKey, evaluateCommand, type CompiledCommands } from './commandPolicy.js';
import { changesLaterCommands } from './inertVariables.js';
import { atLeastPrompt, mostRestrictive } from './decisions.js';
import type { PathAccess } from './pathPolicy.js';
import { commandBaseName, type ParsedShell, type ShellAssignment, type ShellWord, type SimpleCommand } from './shellCommand.js';

const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>']);
/** Commands after which later commands in the line may run something else (an alias, a changed PATH, a trap). */
const TAINTING = new Set(['alias', 'hash', 'enable', 'shopt', 'source', '.', 'trap']);
const DECLARATIONS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

interface PlanState {
  plan: ActionPlan;
  home: string;
  /** Directories relative paths may be relative to; undefined once a `cd` went somewhere not statically known. */
  bases: string[] | undefined;
  /** Why later commands are not statically known (set by an earlier part). */
  taint: string | undefined;
  /** The `--command` rules that may turn a prompt part into allow (R-POL-6). */
  auto: AutoApprovals;
  /** Every variable the line assigns anywhere (R-SH-7): their expansions are never inert. `*`: a name not known. */
  assigned: ReadonlySet<string>;
}

function expandTilde(word: ShellWord, home: string): string {
  if (word.tilde !== true) return word.text;
  return word.text === '~' ? home : `${home}${word.text.slice(1)}`;
}

function addPath(state: PlanState, word: ShellWord, access: PathAccess, bases: string[] | undefined, denyOnly = false): void {
  const planned: PlannedPath = { shown: word.text, access };
  if (denyOnly) planned.denyOnly = true;
  if (!word.static) planned.unknown = `the path is not statically known (${word.why ?? word.text})`;
  else {
    const text = expandTilde(word, state.home);
    if (!text.startsWith('/') && bases === undefined) planned.unknown = 'the directory is not known after an earlier cd';
    else {
      planned.request = state.plan.requests.length;
      state.plan.requests.push({ text, bases: text.startsWith('/') ? [] : (bases ?? []) });
    }
  }
  if (denyOnly && planned.unknown !== undefined) return;
  state.plan.paths.push(planned);
}

/** Directories the command runs in: the bases so far, or where a wrapper's `-C DIR` points. */
function basesFor(state: PlanState, command: SimpleCommand): string[] | undefined {
  if (command.chdir === undefined) return state.bases;
  if (!command.chdir.static) return undefined;
  const dir = expandTilde(command.chdir, state.home);
  if (dir.startsWith('/')) return [dir];
  return state.bases?.map((base) => `${base}/${dir}`);
}

/** Follows `cd DIR` / `pushd DIR`: later relative paths may be relative to DIR as well (scope is not tracked). */
function followCd(state: PlanState, command: SimpleCommand): void {
  const name = commandBaseName(command.words[0]);
  if (name !== 'cd' && name !== 'pushd' && name !== 'popd') return;
  const operands = command.words.slice(1).filter((w) => !(w.static && /^-[LPe@]+$/.test(w.text)));
  if (name === 'popd' || operands.length > 1) {
    state.bases = undefined;
    return;
  }
  const target = operands[0];
  if (target === undefined) {
    if (name === 'cd') state.bases = state.bases === undefined ? undefined : [...state.bases, state.home];
    else state.bases = undefined;
    return;
  }
  if (!target.static || target.text === '-') {
    state.bases = undefined;
    return;
  }
  const dir = expandTilde(target, state.home);
  if (state.bases === undefined) return;
  const next = dir.startsWith('/') ? [dir] : state.bases.map((base) => `${base}/${dir}`);
  state.bases = [...new Set([...state.bases, ...next])];
}

/** bash's special builtins: a prefix assignment before one of them persists (in POSIX mode; assumed always). */
const SPECIAL_BUILTINS = new Set([':', '.', 'source', 'break', 'continue', 'eval', 'exec', 'exit', 'export', 'readonly', 'return', 'set', 'shift', 'times', 'trap', 'unset']);

/** The name and static value of a declaration operand (`NAME=value`, `NAME`), when it is one. */
function declared(word: ShellWord): { name: string; value: string | undefined } | undefined {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(\[.*?\])?(\+?=(.*))?$/s.exec(word.text);
  if (match === null) return undefined;
  return { name: match[1] as string, value: match[3] === undefined ? undefined : word.static ? match[4] : undefined };
}

/**
 * A variable the command sets for the rest of the line that changes what
 * later commands run or read (R-SH-3, R-SH-7): an export of any name off the
 * inert list, or an unexported assignment of one a program may read from the
 * environment. A prefix of an ordinary command lasts for that command only.
 */
function persistentRisk(command: SimpleCommand): string | undefined {
  const name = commandBaseName(command.words[0]);
  const flagged = command.words.slice(1).filter((w) => w.static && /^-[A-Za-z]+$/.test(w.text));
  const exported = name === 'export' || (name !== undefined && DECLARATIONS.has(name) && flagged.some((w) => w.text.includes('x')));
  const values = new Map<string, string | undefined>(command.assignments.map((a) => [a.name.replace(/\[.*$/s, ''), a.value.static ? a.value.text : undefined]));
  const prefixOnly = command.words.length > 0 && (name === undefined || !SPECIAL_BUILTINS.has(name));
  const prefixNames = new Set(prefixOnly ? command.assignments.map((a) => a.name.replace(/\[.*$/s, '')) : []);
  if (name !== undefined && DECLARATIONS.has(name)) {
    for (const word of command.words.slice(1)) {
      const one = word.static ? declared(word) : undefined;
      if (one === undefined) {
        if (!word.static) return '*';
        continue;
      }
      if (changesLaterCommands(one.name, exported, one.value)) return one.name;
      values.set(one.name, one.value);
      prefixNames.delete(one.name);
    }
  }
  for (const assigned of command.assigns ?? []) {
    if (prefixNames.has(assigned)) continue;
    const inDeclaration = name !== undefined && DECLARATIONS.has(name);
    if (changesLaterCommands(assigned, exported && inDeclaration, values.get(assigned))) return assigned;
  }
  return undefined;
}

/** A part that changes what later commands in the line run: an alias, `source`, an exported PATH, `read PATH`. */
function taintOf(command: SimpleCommand): string | undefined {
  const name = commandBaseName(command.words[0]);
  const assigned = persistentRisk(command);
  if (assigned !== undefined) {
    const what = assigned === '*' ? 'a variable whose name is not statically known' : assigned;
    return `an earlier part (${command.text.length > 40 ? `${command.text.slice(0, 40)}…` : command.text}) assigns ${what}, which may change what later commands run`;
  }
  if (name !== undefined && TAINTING.has(name)) return `an earlier part (${name}) changes what later commands run`;
  return undefined;
}

/** Directories a path relative to the repository's top may be relative to: each base and every directory above it. */
function ancestorsOf(bases: readonly string[]): string[] {
  const out = new Set<string>();
  for (const base of bases) {
    let dir = base.replace(/\/+$/, '');
    for (;;) {
      out.add(dir === '' ? '/' : dir);
      const slash = dir.lastIndexOf('/');
      if (slash <= 0) break;
      dir = dir.slice(0, slash);
    }
    out.add('/');
  }
  return [...out];
}

/** Bases moved by `git -C DIR…` (each relative to the one before), or undefined when one is not static. */
function chdirBases(state: PlanState, bases: string[] | undefined, dirs: readonly ShellWord[]): string[] | undefined {
  let current = bases;
  for (const dir of dirs) {
    if (!dir.static) return undefined;
    const text = expandTilde(dir, state.home);
    if (text.startsWith('/')) current = [text];
    else current = current?.map((base) => `${base}/${text}`);
  }
  return current;
}

/**
 * The prefix assignments that move where git finds its configuration
 * (R-SH-12), for the edge to follow: `~` expanded as bash does in an
 * assignment. `GIT_DIR` is a read of the repository it names (a credential
 * location stays refused). A `~` bash would expand after a `:` is not followed.
 */
function gitEnvironment(state: PlanState, assignments: readonly ShellAssignment[], bases: string[] | undefined, partIndex: number): Record<string, string> | undefined {
  let env: Record<string, string> | undefined;
  for (const assignment of assignments) {
    if (!GIT_ENVIRONMENT.test(assignment.name) || !assignment.value.static) continue;
    const text = expandTilde(assignment.value, state.home);
    if (/:~/.test(text)) {
      const part = state.plan.parts[partIndex] as PolicyPart;
      part.decision = mostRestrictive(part.decision, 'prompt');
      part.reason = `${part.reason === undefined ? '' : `${part.reason}; `}bash expands the ~ after a colon in ${assignment.name}=…, which this model does not follow`;
    }
    (env ??= {})[assignment.name] = text;
    if (assignment.name === 'GIT_DIR') addPath(state, assignment.value, 'read', bases);
  }
  return env;
}

/** The paths, trees and repository a program model found (R-SH-6, R-SH-9, R-SH-10) become path requests and edge checks. */
function planProgram(state: PlanState, program: ProgramVerdict, bases: string[] | undefined, partIndex: number, assignments: readonly ShellAssignment[]): void {
  const moved = program.repository === undefined ? bases : chdirBases(state, bases, program.repository.chdir);
  const env = program.repository === undefined ? undefined : gitEnvironment(state, assignments, moved, partIndex);
  if (program.repository !== undefined && moved === undefined) {
    const part = state.plan.parts[partIndex] as PolicyPart;
    part.decision = 'prompt';
    part.reason = 'git -C names a directory that is not statically known';
  }
  for (const word of program.reads) addPath(state, word, 'read', moved);
  const before = state.plan.paths.length;
  for (const word of program.writes) addPath(state, word, 'write', moved);
  if (program.repository !== undefined) for (const path of state.plan.paths.slice(before)) path.byGit = true;
  for (const word of program.revisionPaths ?? []) addPath(state, word, 'read', moved === undefined ? undefined : ancestorsOf(moved));
  for (const tree of program.trees) {
    const before = state.plan.requests.length;
    addPath(state, tree.dir, 'read', moved);
    if (state.plan.requests.length > before) (state.plan.trees ??= []).push({ request: before, shown: tree.dir.text, hidden: tree.hidden, follow: tree.follow === true });
  }
  for (const copy of program.treeWrites ?? []) {
    // Both ends must be known for the entries beneath to be judged where they land; else the part is not allowed.
    if (!copy.from.static || !copy.to.static || moved === undefined) continue;
    const from = state.plan.requests.length;
    const fromText = expandTilde(copy.from, state.home);
    state.plan.requests.push({ text: fromText, bases: fromText.startsWith('/') ? [] : moved });
    const toText = expandTilde(copy.to, state.home);
    state.plan.requests.push({ text: toText, bases: toText.startsWith('/') ? [] : moved });
    (state.plan.trees ??= []).push({ request: from, shown: copy.from.text, hidden: true, landsIn: from + 1 });
  }
  const checkout = program.repository?.checkout;
  if (checkout !== undefined) {
    const first = state.plan.paths.length;
    for (const word of checkout.paths) addPath(state, word, 'write', moved);
    for (const path of state.plan.paths.slice(first)) path.byGit = true;
    if (checkout.paths.length === 0) {
      const part = state.plan.parts[partIndex] as PolicyPart;
      if (part.decision === 'allow') part.decision = 'prompt';
      const why = `git writes the files of ${checkout.revision.text} into the worktree; which ones only the repository knows, and a gate file (R-SH-9) may be among them`;
      part.reason = part.reason === undefined ? why : `${part.reason}; ${why}`;
    }
  }
  if (program.launcher !== undefined) {
    if (moved === undefined) {
      const part = state.plan.parts[partIndex] as PolicyPart;
      part.decision = 'prompt';
      part.reason = 'the directory the launcher runs in is not statically known';
    } else {
      const request = state.plan.requests.length;
      state.plan.requests.push({ text: '.', bases: moved });
      (state.plan.launchers ??= []).push({ request, part: partIndex, files: program.launcher.files, why: program.launcher.why });
    }
  }
  if (program.repository !== undefined && moved !== undefined) {
    const request = state.plan.requests.length;
    state.plan.requests.push({ text: '.', bases: moved });
    const { hooks, recurses, wholeTree } = program.repository;
    (state.plan.repositories ??= []).push({
      request,
      part: partIndex,
      ...(hooks === undefined ? {} : { hooks }),
      ...(recurses === true ? { recurses } : {}),
      ...(wholeTree === true ? { wholeTree } : {}),
      ...(env === undefined ? {} : { env }),
    });
  }
}

function commandPart(state: PlanState, commands: CompiledCommands, command: SimpleCommand): void {
  const bases = basesFor(state, command);
  const extra: string[] = [];
  if (state.taint !== undefined) extra.push(state.taint);
  if (command.chdir !== undefined && bases === undefined) extra.push('a wrapper runs it in a directory that is not statically known');
  const assigned = persistentRisk(command);
  if (assigned !== undefined) extra.push(`it assigns ${assigned === '*' ? 'a variable whose name is not statically known' : assigned}, which may change what commands run`);
  const text = command.via === undefined ? command.text : `${command.text}  (run by ${command.via})`;
  if (command.words.length > 0) {
    const verdict = evaluateCommand(commands, command, extra, state.assigned);
    const part: PolicyPart = { kind: 'command', text, decision: verdict.decision, rule: verdict.rule };
    if (verdict.reasons.length > 0) part.reason = verdict.reasons.join('; ');
    const approval = verdict.decision === 'prompt' ? approveCommand(state.auto, command, extra) : undefined;
    const confine = verdict.decision === 'prompt' && approval === undefined ? confineKey(commands, command, extra) : undefined;
    if (confine !== undefined) {
      part.confine = confine;
      part.reason = part.reason === undefined ? 'runs project code: it may run confined' : `${part.reason}; runs project code: it may run confined`;
    }
    const partIndex = state.plan.parts.length;
    state.plan.parts.push(approval === undefined ? part : autoApprovedPart(part, approval));
    planCommandRisks(state.plan, command, bases, state.home);
    if (verdict.program !== undefined) planProgram(state, verdict.program, bases, partIndex, command.assignments);
    for (const operand of verdict.readOperands) addPath(state, operand, 'read', bases);
    const name = commandBaseName(command.words[0]);
    if (name === 'tee') {
      for (const word of command.words.slice(1)) if (!(word.static && word.text.startsWith('-'))) addPath(state, word, 'write', bases);
    } else if (verdict.program === undefined && verdict.readOperands.length === 0) {
      // A word that names a path of its own (`rm -rf ~/.ssh`, `cp ~/.aws/credentials x`): a deny rule still applies.
      for (const word of command.words.slice(1)) {
        if (word.static && (word.tilde === true || word.text.includes('/')) && !word.text.startsWith('-')) addPath(state, word, 'read', bases, true);
      }
    }
  } else {
    // No command name: assignments, a loop or case header, a redirection of a group. It runs nothing by
    // itself, but an expansion in it may (`x=$((a[$(cmd)]))`, `${x@P}`), and it may assign what changes later parts.
    const risky = command.assignments.filter((a) => changesLaterCommands(a.name.replace(/\[.*$/s, ''), false, a.value.static ? a.value.text : undefined)).map((a) => a.name);
    const reasons = [...command.unknown, ...extra];
    if (risky.length > 0) reasons.push(`sets ${risky.join(', ')}, which changes what later commands run`);
    if (reasons.length > 0 || command.redirects.length === 0) {
      const part: PolicyPart = { kind: 'command', text, decision: reasons.length > 0 ? atLeastPrompt(commands.default) : 'allow', rule: 'assignment' };
      if (reasons.length > 0) part.reason = reasons.join('; ');
      else if (command.assignments.some((a) => !a.value.static)) {
        // The value's own substitutions are parts of their own; a plain assignment runs nothing itself.
        part.reason = 'the value is expanded at run time; later expansions of the variable are not statically known';
      }
      state.plan.parts.push(part);
    }
  }
  for (const redirect of command.redirects) {
    const op = redirect.op;
    const target = redirect.target;
    const dup = (op === '>&' || op === '<&') && target.static && /^([0-9]+-?|-)$/.test(target.text);
    if (dup || op === '<<<' || op === '<<' || op === '<<-') continue;
    if (WRITE_OPS.has(op) || op === '>&') addPath(state, target, 'write', bases);
    else if (op === '<' || op === '<&') addPath(state, target, 'read', bases);
    else addPath(state, { text: `${op}${target.text}`, static: false, why: `the redirection ${op} is not one assent knows` }, 'write', bases);
  }
}

/** Every variable the line assigns, anywhere (R-SH-5, R-SH-7): by statements, prefixes, builtins and loops. */
function assignedNames(parsed: ParsedShell): Set<string> {
  const names = new Set<string>();
  for (const command of parsed.commands) {
    for (const assignment of command.assignments) names.add(assignment.name.replace(/\[.*$/s, ''));
    for (const name of command.assigns ?? []) names.add(name);
  }
  return names;
}

/**
 * The plan for one shell command line: a part per simple command (in the order
 * written, with what wrappers and `-c` strings run), a part per parse error,
 * and the paths to resolve at the edge. `cwd` is the agent's cwd. A simple
 * command the rules leave at prompt is allowed by a matching `--command` rule
 * of `auto`; every other part still counts, so `npm test; rm -rf /` is not.
 */
export function planShell(parsed: ParsedShell, commands: CompiledCommands, cwd: string, home: string, auto: AutoApprovals = NO_AUTO_APPROVALS): ActionPlan {
  const state: PlanState = { plan: { parts: [], paths: [], requests: [], cwd }, home, bases: [cwd], taint: undefined, auto, assigned: assignedNames(parsed) };
  for (const error of parsed.errors) {
    state.plan.parts.push({ kind: 'error', text: parsed.source, decision: atLeastPrompt(commands.default), rule: 'parse', reason: error });
  }
  for (const command of parsed.commands) {
    commandPart(state, commands, command);
    followCd(state, command);
    state.taint ??= taintOf(command);
  }
  state.plan.parts.push(...networkIntoShellParts(parsed, commands.networkIntoShell));
  planLineRisks(state.plan, parsed.commands);
  return state.plan;
}
