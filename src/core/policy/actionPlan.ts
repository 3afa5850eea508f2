// Deciding an agent action in two pure steps around one edge step (SPEC §18):
// plan (which commands, which paths to resolve) → the edge resolves the paths on
// the real file system → decide. The plan and the resolved paths are plain data.
import type { PolicyValue } from './policyValue.js';
import { approvePath, NO_AUTO_APPROVALS, type AutoApprovals } from './autoApproval.js';
import { deleteRisks, orderRisks, writeRisks, type PlannedDelete, type RiskSignal } from '../approval/approvalRisk.js';
import { atLeastPrompt, mostRestrictive } from './decisions.js';
import { evaluatePath, evaluatePathForms, type CompiledPaths, type PathAccess } from './pathPolicy.js';

/** One line of an explanation (R-POL-9): a simple command, a path, a URL or a parse error. */
export interface PolicyPart {
  kind: 'command' | 'path' | 'url' | 'error';
  text: string;
  decision: PolicyValue;
  /** The config key (or rule) that decided, e.g. `policy.commands.rules.0 "git status"`. */
  rule?: string;
  /** Why it was not statically known, or where a path lands. */
  reason?: string;
  /** The auto-approval rule that turned this part's prompt into allow (R-POL-6); `rule` then names it too. */
  ruleId?: string;
  /** A prompt that runs project code and may run confined instead (R-SH-14): the `policy.commands.confine` key it matched. */
  confine?: string;
}

/** A part the policy left at prompt, allowed by the auto-approval rule `label` (R-POL-6): the rule and what it overrode are named. */
export function autoApprovedPart(part: PolicyPart, approval: { ruleId: string; label: string }): PolicyPart {
  const said = `${part.rule ?? 'policy'} says prompt; an auto-approval rule allows it`;
  return { ...part, decision: 'allow', rule: approval.label, reason: part.reason === undefined ? said : `${part.reason}; ${said}`, ruleId: approval.ruleId };
}

/** A path the edge must resolve: `text` is absolute or relative to each of `bases`. */
export interface PathRequest {
  text: string;
  bases: string[];
}

/** A path access the plan wants judged once its request is resolved. */
export interface PlannedPath {
  /** As the command or tool wrote it. */
  shown: string;
  access: PathAccess;
  /** Index into `ActionPlan.requests`; undefined when the path is not statically known. */
  request?: number;
  /** Why it is not statically known (then at least prompt). */
  unknown?: string;
  /** Only a `deny` from the path rules counts (a word that merely looks like a path). */
  denyOnly?: boolean;
  /** Written by git itself (`git restore PATH`): not a write that could change what git reads before it runs. */
  byGit?: boolean;
}

/** A recursive read (R-SH-10): every entry beneath the directory of `request` is judged as a read. */
export interface PlannedTree {
  /** Index into `ActionPlan.requests`: the starting directory. */
  request: number;
  /** As the command wrote it. */
  shown: string;
  /** False when the program skips hidden entries (`rg` without `--hidden`): the edge does not list them. */
  hidden: boolean;
  /** True when the program walks into symlinked directories (`grep -R`, `rg -L`). */
  follow?: boolean;
  /**
   * A recursive copy or move (`cp -r`, `mv`): every entry beneath lands beneath
   * the destination of this request (or beneath it plus the tree's own name),
   * and is judged as a write there — a gate file may be among them (R-SH-9).
   */
  landsIn?: number;
}

/** A program that obeys a repository's configuration (git; R-SH-9): the edge reads the configuration git would use from there. */
export interface PlannedRepository {
  /** Index into `ActionPlan.requests`: the directory git runs in. */
  request: number;
  /** The part (index into `ActionPlan.parts`) the repository's configuration may refuse. */
  part: number;
  /** The hooks the command may run (R-SH-13): one that exists in the hooks directory git uses makes the part prompt. */
  hooks?: readonly string[];
  /** The command reads each submodule's configuration too (R-SH-12). */
  recurses?: boolean;
  /** The command writes anywhere in the work tree: it is allow only where the work tree's top is the cwd or beneath it. */
  wholeTree?: boolean;
  /** Prefix assignments that move where git finds its configuration (`HOME=. git status`; R-SH-12), `~` expanded. */
  env?: Readonly<Record<string, string>>;
}

/** A launcher's configuration files (R-SH-11): the part is allow only where none of them exists. */
export interface PlannedLauncher {
  /** Index into `ActionPlan.requests`: the directory the launcher runs in. */
  request: number;
  /** The part (index into `ActionPlan.parts`) such a file refuses. */
  part: number;
  /** Relative to that directory and each one above it, up to the agent's cwd. */
  files: readonly string[];
  why: string;
}

export interface ActionPlan {
  parts: PolicyPart[];
  paths: PlannedPath[];
  requests: PathRequest[];
  trees?: PlannedTree[];
  repositories?: PlannedRepository[];
  launchers?: PlannedLauncher[];
  /** The agent's cwd, as given. */
  cwd: string;
  /** What the commands themselves risk, for the approval's risk (R-POL-10); never a policy input. */
  risks?: RiskSignal[];
  /** Recursive deletes' operands, judged by where they land for the risk alone (R-POL-10). */
  deletes?: PlannedDelete[];
}

/** What the edge found for one request: every absolute form (lexical and physical, per base). */
export type ResolvedPaths = readonly (readonly string[])[];

/** What the edge found beneath one planned tree: every entry's physical path, and whether it stopped at its limit. */
export interface ResolvedTree {
  entries: readonly string[];
  truncated: boolean;
}

/** What the edge found of one planned repository: the keys of its configuration that make git run a program. */
export interface ResolvedRepository {
  repository?: string;
  keys: readonly string[];
  /** The planned hooks that exist, executable, where git would run them from (R-SH-13). */
  hooks?: readonly string[];
  /** The top of the work tree git would use, when it lies above every form of the cwd. */
  workTreeAbove?: string;
  /** `core.worktree` of the repository: git's work tree is elsewhere, which the git model does not follow. */
  coreWorktree?: string;
  /** Why the configuration could not be read (then at least prompt). */
  unreadable?: string;
}

/** The edge's findings beyond paths: trees listed and repositories read, index for index with the plan's. */
export interface ResolvedChecks {
  trees: readonly ResolvedTree[];
  repositories: readonly ResolvedRepository[];
  /** Per planned launcher, the files of its list that exist (undefined: not looked at). */
  launchers?: readonly (readonly string[])[];
  /**
   * Per planned path, for a write the edge found to be a file git runs or
   * reads configuration from on its own (R-SH-12, R-SH-13) — the folder
   * `core.hooksPath` names, a file an include names — what it is.
   */
  gates?: readonly ({ file: string; why: string } | undefined)[];
}

const NO_CHECKS: ResolvedChecks = { trees: [], repositories: [] };

/** Where an entry beneath a copied tree lands: beneath each destination form, directly and under the tree's own name. */
function landings(entry: string, root: string, destinations: readonly string[]): string[] {
  const rest = entry === root ? '' : entry.startsWith(`${root}/`) ? entry.slice(root.length) : undefined;
  if (rest === undefined) return [];
  const name = root.slice(root.lastIndexOf('/'));
  return destinations.flatMap((to) => [`${to}${rest}`, `${to}${name}${rest}`]);
}

/** The most restrictive entry beneath a tree (R-SH-10): a credential location anywhere beneath decides the read; a gate file, the copy. */
function treePart(tree: PlannedTree, found: ResolvedTree | undefined, resolved: ResolvedPaths, paths: CompiledPaths, cwds: readonly string[]): PolicyPart {
  const access: PathAccess = tree.landsIn === undefined ? 'read' : 'write';
  const text = access === 'read' ? `read ${tree.shown} (recursively)` : `write what lies beneath ${tree.shown} (copied or moved)`;
  if (found === undefined) return { kind: 'path', text, decision: atLeastPrompt(paths[access]), rule: `policy.paths.${access}`, reason: 'what lies beneath was not listed' };
  const roots = resolved[tree.request] ?? [];
  const destinations = tree.landsIn === undefined ? [] : (resolved[tree.landsIn] ?? []);
  let worst: { decision: PolicyValue; rule: string; entry: string } | undefined;
  for (const entry of found.entries) {
    const targets = access === 'read' ? [entry] : roots.flatMap((root) => landings(entry, root, destinations));
    for (const target of targets) {
      const verdict = evaluatePath(paths, target, access, cwds);
      if (worst === undefined || mostRestrictive(worst.decision, verdict.decision) !== worst.decision) worst = { ...verdict, entry: target };
    }
    if (worst?.decision === 'deny') break;
  }
  if (found.truncated && (worst === undefined || worst.decision === 'allow')) {
    return { kind: 'path', text, decision: atLeastPrompt(paths[access]), rule: `policy.paths.${access}`, reason: `more than ${found.entries.length} entries beneath; assent lists at most that many` };
  }
  if (worst === undefined) return { kind: 'path', text, decision: paths[access], rule: `policy.paths.${access}`, reason: 'nothing beneath' };
  const reason = worst.decision === 'allow' ? `${found.entries.length} entries beneath, none a protected location` : `reaches ${worst.entry}`;
  return { kind: 'path', text, decision: worst.decision, rule: worst.rule, reason };
}

export interface ActionVerdict {
  decision: PolicyValue;
  parts: PolicyPart[];
  /** What the rules found for the risk (R-POL-10): the commands' own findings, writes and deletes by where they land. */
  risks?: RiskSignal[];
  /**
   * R-SH-14: the action is prompt only because of parts that run project code
   * and may run confined (each has `confine`); nothing in it is denied. Whether
   * it does is up to the host (a sandbox) and the agent (a hook that rewrites).
   */
  confinable?: boolean;
}

/**
 * Judges the planned paths against `policy.paths` (R-PATH-1) and folds every
 * part into one decision, the most restrictive. `cwds` are the forms of the
 * agent's cwd that `${cwd}` stands for (lexical and physical). A path the rules
 * leave at prompt is allowed by a `--path` rule whose glob holds all its forms.
 */
export function decidePlan(
  plan: ActionPlan,
  resolved: ResolvedPaths,
  paths: CompiledPaths,
  cwds: readonly string[],
  auto: AutoApprovals = NO_AUTO_APPROVALS,
  checks: ResolvedChecks = NO_CHECKS,
): ActionVerdict {
  const parts = plan.parts.map((part) => ({ ...part }));
  // A repository whose configuration runs programs: git there is not the read-only git its model describes (R-SH-9).
  // A write earlier in the same line may create the repository git then obeys (`printf … > e/config; cd e && git status`):
  // what is on disk now does not say what git will read.
  const writes = plan.paths.some((path) => path.access === 'write' && path.denyOnly !== true && path.byGit !== true && path.shown !== '/dev/null');
  const hookRisks: RiskSignal[] = [];
  (plan.repositories ?? []).forEach((repository, i) => {
    const found = checks.repositories[i];
    const part = parts[repository.part];
    if (part === undefined || part.decision !== 'allow') return;
    let why: string | undefined;
    if (writes) why = 'the command also writes files, which may change the repository configuration git reads before it runs';
    else if (found === undefined) why = 'the repository configuration git would use was not read';
    else if (found.unreadable !== undefined) why = `the repository configuration could not be read (${found.unreadable})`;
    else if (found.keys.length > 0) why = `the configuration git reads for ${found.repository ?? 'the cwd'} sets ${found.keys.join(', ')}, which makes git run a program`;
    else if (found.coreWorktree !== undefined) why = `the repository ${found.repository ?? ''} sets core.worktree to ${found.coreWorktree}, so git reads and writes files there, which this model does not follow`;
    else if (repository.wholeTree === true && found.workTreeAbove !== undefined) why = `git acts on the whole work tree at ${found.workTreeAbove}, above the cwd`;
    else if (found.hooks !== undefined && found.hooks.length > 0) {
      why = `runs ${found.hooks.join(', ')}, ${found.hooks.length === 1 ? 'a hook that runs' : 'hooks that run'} project code`;
      hookRisks.push({ flag: 'runs project code', detail: 'git hook' });
    }
    if (why === undefined) return;
    part.decision = 'prompt';
    part.reason = part.reason === undefined ? why : `${part.reason}; ${why}`;
  });
  (plan.launchers ?? []).forEach((launcher, i) => {
    const found = checks.launchers?.[i];
    const part = parts[launcher.part];
    if (part === undefined || part.decision !== 'allow') return;
    let why: string | undefined;
    if (writes) why = 'the command also writes files, which may create the files a version manager reads first';
    else if (found === undefined) why = 'the files a version manager reads first were not looked for';
    else if (found.length > 0) why = `${launcher.why}: ${found.join(', ')}`;
    if (why === undefined) return;
    part.decision = 'prompt';
    part.reason = part.reason === undefined ? why : `${part.reason}; ${why}`;
  });
  (plan.trees ?? []).forEach((tree, i) => parts.push(treePart(tree, checks.trees[i], resolved, paths, cwds)));
  const risks: RiskSignal[] = [...(plan.risks ?? []), ...hookRisks, ...deleteRisks(plan.deletes ?? [], resolved, cwds)];
  plan.paths.forEach((path, index) => {
    // A write that may land outside the cwd (or where, is not known), or on a gate file, is on the risk line.
    if (path.access === 'write' && path.denyOnly !== true) risks.push(...writeRisks(path.unknown === undefined ? (resolved[path.request ?? -1] ?? []) : [], cwds));
    if (path.unknown !== undefined) {
      parts.push({ kind: 'path', text: `${path.access} ${path.shown}`, decision: atLeastPrompt(paths[path.access]), rule: `policy.paths.${path.access}`, reason: path.unknown });
      return;
    }
    const forms = resolved[path.request ?? -1] ?? [];
    const verdict = evaluatePathForms(paths, forms, path.access, cwds);
    if (path.denyOnly === true && verdict.decision !== 'deny') return;
    const landed = forms.filter((form) => form !== path.shown);
    const part: PolicyPart = { kind: 'path', text: `${path.access} ${path.shown}`, decision: verdict.decision, rule: verdict.rule };
    if (landed.length > 0) part.reason = `resolves to ${[...new Set(landed)].join(', ')}`;
    const gate = path.access === 'write' ? checks.gates?.[index] : undefined;
    if (gate !== undefined && verdict.decision === 'allow') {
      part.decision = 'prompt';
      part.reason = part.reason === undefined ? gate.why : `${part.reason}; ${gate.why}`;
      risks.push({ flag: 'gate file write', detail: gate.file });
    }
    const approval = part.decision === 'prompt' ? approvePath(auto, forms, path.access, cwds) : undefined;
    parts.push(approval === undefined ? part : autoApprovedPart(part, approval));
  });
  let decision: PolicyValue = 'allow';
  for (const part of parts) decision = mostRestrictive(decision, part.decision);
  if (parts.length === 0) decision = 'prompt';
  const verdict: ActionVerdict = { decision, parts };
  if (decision === 'prompt' && parts.every((part) => part.decision === 'allow' || part.confine !== undefined)) {
    verdict.confinable = true;
  }
  if (risks.length > 0) verdict.risks = orderRisks(risks);
  return verdict;
}
