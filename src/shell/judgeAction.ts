// The edge step of deciding an agent action (SPEC §18): parse the command line,
// plan in core, resolve the planned paths on this host, decide in core.
import { decidePlan, type ActionPlan, type ActionVerdict, type PolicyPart } from '../core/actionPlan.js';
import type { AgentPolicySnapshot } from '../core/agentPolicyConfig.js';
import type { PathAccess } from '../core/pathPolicy.js';
import { planShell } from '../core/shellPolicy.js';
import { evaluateUrl } from '../core/urlPolicy.js';
import { cwdForms, resolvePathRequests } from './resolvePaths.js';
import type { ShellParser } from './shellParser.js';

function decide(plan: ActionPlan, snapshot: AgentPolicySnapshot): ActionVerdict {
  return decidePlan(plan, resolvePathRequests(plan.requests), snapshot.paths, cwdForms(plan.cwd));
}

/** A shell action's decision (R-SH-1..4): each simple command, redirection and read operand. */
export function judgeShell(parser: ShellParser, snapshot: AgentPolicySnapshot, command: string, cwd: string): ActionVerdict {
  return decide(planShell(parser.parse(command), snapshot.commands, cwd, snapshot.vars.home), snapshot);
}

/** A `read`/`write` action's decision (R-PATH-1): each path it touches, relative ones against `cwd`. */
export function judgePaths(snapshot: AgentPolicySnapshot, paths: readonly string[], access: PathAccess, cwd: string): ActionVerdict {
  const plan: ActionPlan = { parts: [], paths: [], requests: [], cwd };
  for (const path of paths) {
    const text = path === '~' ? snapshot.vars.home : path.startsWith('~/') ? `${snapshot.vars.home}${path.slice(1)}` : path;
    plan.paths.push({ shown: path, access, request: plan.requests.length });
    plan.requests.push({ text, bases: [cwd] });
  }
  return decide(plan, snapshot);
}

/** A `fetch` action's decision (R-URL-1). */
export function judgeUrl(snapshot: AgentPolicySnapshot, url: string): ActionVerdict {
  const verdict = evaluateUrl(snapshot.urls, url);
  const part: PolicyPart = { kind: 'url', text: verdict.normalized ?? url, decision: verdict.decision, rule: verdict.rule };
  if (verdict.reason !== undefined) part.reason = verdict.reason;
  return { decision: verdict.decision, parts: [part] };
}
