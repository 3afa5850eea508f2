// The edge step of deciding an agent action (SPEC §18): parse the command line,
// plan in core, resolve the planned paths on this host, decide in core.
import { lstatSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { autoApprovedPart, decidePlan, type ActionPlan, type ActionVerdict, type PolicyPart, type ResolvedChecks, type ResolvedPaths, type ResolvedTree } from '../core/policy/actionPlan.js';
import type { AgentPolicySnapshot } from '../core/policy/agentPolicyConfig.js';
import { approveUrl, NO_AUTO_APPROVALS, type AutoApprovals } from '../core/policy/autoApproval.js';
import type { PathAccess } from '../core/policy/pathPolicy.js';
import { planShell } from '../core/policy/shellPolicy.js';
import { evaluateUrl } from '../core/policy/urlPolicy.js';
import { gitExecutionKeys, gitGateFiles, globalExcludesFiles } from './gitRepository.js';
import { cwdForms, physicalPath, resolvePathRequests } from './resolvePaths.js';
import { scanTree } from './treeScan.js';
import type { ShellParser } from './shellParser.js';

/** The most entries a recursive read lists before it is judged too large to know (R-SH-10). */
const TREE_LIMIT = 10_000;

/** What lies beneath each planned tree and which repository each git part obeys, read from this host's file system. */
function resolveChecks(plan: ActionPlan, resolved: ResolvedPaths, home: string, cache: Map<string, string | undefined>, cwds: readonly string[]): ResolvedChecks {
  let globalIgnoreFiles: string[] | undefined;
  const trees = (plan.trees ?? []).map((tree): ResolvedTree => {
    const entries: string[] = [];
    let truncated = false;
    if (!tree.hidden) globalIgnoreFiles ??= globalExcludesFiles(home);
    for (const dir of new Set(resolved[tree.request] ?? [])) {
      const found = scanTree(dir, { hidden: tree.hidden, follow: tree.follow === true, limit: TREE_LIMIT - entries.length, cache, globalIgnoreFiles });
      entries.push(...found.entries);
      truncated ||= found.truncated || entries.length >= TREE_LIMIT;
      if (truncated) break;
    }
    return { entries, truncated };
  });
  // Several git parts of one line usually run in one directory: its repository is read once per decision.
  const byDir = new Map<string, ReturnType<typeof gitExecutionKeys>>();
  const keysOf = (dir: string, recurses: boolean, env: Readonly<Record<string, string>> | undefined): ReturnType<typeof gitExecutionKeys> => {
    const key = `${recurses ? 'r' : '-'}${env === undefined ? '' : JSON.stringify(env)}${dir}`;
    let found = byDir.get(key);
    if (found === undefined) byDir.set(key, (found = gitExecutionKeys(dir, home, { recurses, ...(env === undefined ? {} : { env }) })));
    return found;
  };
  const repositories = (plan.repositories ?? []).map((repository) => {
    const dirs = [...new Set(resolved[repository.request] ?? [])];
    const keys = new Set<string>();
    const hooks = new Set<string>();
    const found: { repository?: string; keys: string[]; hooks?: string[]; unreadable?: string; workTreeAbove?: string; coreWorktree?: string } = { keys: [] };
    if (dirs.length === 0) found.unreadable = 'the directory git runs in could not be resolved';
    for (const dir of dirs) {
      const one = keysOf(dir, repository.recurses === true, repository.env);
      if (one.repository !== undefined) found.repository = one.repository;
      one.keys.forEach((key, k) => keys.add(one.keySources?.[k] === undefined ? key : `${key} (${one.keySources[k]})`));
      // R-SH-13: the hooks this command runs, where git would look for them (and in each submodule it recurses into).
      for (const hook of one.hooks) if (repository.hooks?.includes(basename(hook)) === true) hooks.add(hook);
      if (one.unreadable !== undefined) found.unreadable = one.unreadable;
      if (one.coreWorktree !== undefined) found.coreWorktree = one.coreWorktree;
      const top = one.workTree;
      if (top !== undefined && !cwds.some((cwd) => top === cwd || top.startsWith(`${cwd}/`))) found.workTreeAbove = top;
    }
    found.keys = [...keys];
    if (hooks.size > 0) found.hooks = [...hooks];
    return found;
  });
  return { trees, repositories };
}

/**
 * The files of each launcher's list that exist in the directory it runs in or
 * one above it, up to the agent's cwd (R-SH-11). Above the cwd the files are
 * the person's: an agent writes there only past a prompt.
 */
function resolveLaunchers(plan: ActionPlan, resolved: ResolvedPaths, cwds: readonly string[]): (readonly string[])[] {
  return (plan.launchers ?? []).map((launcher) => {
    const found = new Set<string>();
    for (const start of new Set(resolved[launcher.request] ?? [])) {
      let dir = start;
      for (;;) {
        for (const file of launcher.files) {
          const path = join(dir, file);
          if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) found.add(path);
        }
        const up = dirname(dir);
        if (up === dir || !cwds.some((cwd) => up === cwd || up.startsWith(`${cwd}/`))) break;
        dir = up;
      }
    }
    return [...found];
  });
}

/**
 * Per planned path, whether a write lands where git runs or reads
 * configuration from on its own for the repository that holds it (R-SH-12,
 * R-SH-13): the folder `core.hooksPath` names (`.githooks/`, `scripts/hooks/`)
 * and every config file git reads or an include names (`include.path =
 * ../.gitconfig` in `.git/config` makes the project's `.gitconfig` one).
 */
function resolveGitGates(plan: ActionPlan, resolved: ResolvedPaths, home: string, cache: Map<string, string | undefined>): ({ file: string; why: string } | undefined)[] | undefined {
  if (!plan.paths.some((path) => path.access === 'write')) return undefined;
  const byDir = new Map<string, { files: Set<string>; hooksDir?: string }>();
  const physical = (path: string): string => physicalPath(path, cache) ?? path;
  const gatesOf = (dir: string): { files: Set<string>; hooksDir?: string } => {
    let found = byDir.get(dir);
    if (found === undefined) {
      const gates = gitGateFiles(dir, home);
      found = { files: new Set(gates.files.map(physical)), ...(gates.hooksDir === undefined ? {} : { hooksDir: physical(gates.hooksDir) }) };
      byDir.set(dir, found);
    }
    return found;
  };
  return plan.paths.map((path) => {
    if (path.access !== 'write' || path.denyOnly === true || path.request === undefined) return undefined;
    for (const form of new Set(resolved[path.request] ?? [])) {
      if (form.startsWith('/dev/') || form.startsWith('/proc/')) continue;
      const gates = gatesOf(dirname(form));
      const { hooksDir } = gates;
      if (hooksDir !== undefined && (form === hooksDir || form.startsWith(`${hooksDir}/`))) {
        return { file: form, why: `${form} is in ${hooksDir}, the hooks folder git runs hooks from (core.hooksPath)` };
      }
      if (gates.files.has(form)) return { file: form, why: `${form} is a configuration file git reads for this repository, which may name programs git runs` };
    }
    return undefined;
  });
}

function decide(plan: ActionPlan, snapshot: AgentPolicySnapshot, auto: AutoApprovals): ActionVerdict {
  // One decision resolves each directory once, whichever of its paths, trees and repositories needs it.
  const cache = new Map<string, string | undefined>();
  const resolved = resolvePathRequests(plan.requests, cache);
  const cwds = cwdForms(plan.cwd, cache);
  const checks: ResolvedChecks = resolveChecks(plan, resolved, snapshot.vars.home, cache, cwds);
  const launchers = plan.launchers === undefined ? undefined : resolveLaunchers(plan, resolved, cwds);
  const gates = resolveGitGates(plan, resolved, snapshot.vars.home, cache);
  return decidePlan(plan, resolved, snapshot.paths, cwds, auto, { ...checks, ...(launchers === undefined ? {} : { launchers }), ...(gates === undefined ? {} : { gates }) });
}

/**
 * A shell action's decision (R-SH-1..4): each simple command, redirection and
 * read operand; `auto` are the auto-approval rules for this action (R-POL-6).
 */
export function judgeShell(parser: ShellParser, snapshot: AgentPolicySnapshot, command: string, cwd: string, auto: AutoApprovals = NO_AUTO_APPROVALS): ActionVerdict {
  return decide(planShell(parser.parse(command), snapshot.commands, cwd, snapshot.vars.home, auto), snapshot, auto);
}

/**
 * A `read`/`write` action's decision (R-PATH-1): each path it touches,
 * relative ones against `cwd`; a content search (`recursive`) is judged by
 * everything beneath each path too (R-SH-10), hidden entries included.
 */
export function judgePaths(
  snapshot: AgentPolicySnapshot,
  paths: readonly string[],
  access: PathAccess,
  cwd: string,
  auto: AutoApprovals = NO_AUTO_APPROVALS,
  recursive = false,
): ActionVerdict {
  const plan: ActionPlan = { parts: [], paths: [], requests: [], cwd };
  for (const path of paths) {
    const text = path === '~' ? snapshot.vars.home : path.startsWith('~/') ? `${snapshot.vars.home}${path.slice(1)}` : path;
    const request = plan.requests.length;
    plan.paths.push({ shown: path, access, request });
    plan.requests.push({ text, bases: [cwd] });
    if (recursive && access === 'read') (plan.trees ??= []).push({ request, shown: path, hidden: true });
  }
  return decide(plan, snapshot, auto);
}

/** A `fetch` action's decision (R-URL-1). */
export function judgeUrl(snapshot: AgentPolicySnapshot, url: string, auto: AutoApprovals = NO_AUTO_APPROVALS): ActionVerdict {
  const verdict = evaluateUrl(snapshot.urls, url);
  const part: PolicyPart = { kind: 'url', text: verdict.normalized ?? url, decision: verdict.decision, rule: verdict.rule };
  if (verdict.reason !== undefined) part.reason = verdict.reason;
  const approval = verdict.decision === 'prompt' && verdict.normalized !== undefined ? approveUrl(auto, url) : undefined;
  const judged = approval === undefined ? part : autoApprovedPart(part, approval);
  return { decision: judged.decision, parts: [judged] };
}
