// Deciding an agent action in two pure steps around one edge step (SPEC §18):
// plan (which commands, which paths to resolve) → the edge resolves the paths on
// the real file system → decide. The plan and the resolved paths are plain data.
import type { PolicyValue } from './policyValue.js';
import { approvePath, NO_AUTO_APPROVALS, type AutoApprovals } from './autoApproval.js';
import { deleteRisks, orderRisks, writeRisks, type PlannedDelete, type RiskSignal } from './approvalRisk.js';
import { atLeastPrompt, mostRestrictive } from './decisions.js';
import { evaluatePathForms, type CompiledPaths, type PathAccess } from './pathPolicy.js';

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
}

export interface ActionPlan {
  parts: PolicyPart[];
  paths: PlannedPath[];
  requests: PathRequest[];
  /** The agent's cwd, as given. */
  cwd: string;
  /** What the commands themselves risk, for the approval's risk (R-POL-10); never a policy input. */
  risks?: RiskSignal[];
  /** Recursive deletes' operands, judged by where they land for the risk alone (R-POL-10). */
  deletes?: PlannedDelete[];
}

/** What the edge found for one request: every absolute form (lexical and physical, per base). */
export type ResolvedPaths = readonly (readonly string[])[];

export interface ActionVerdict {
  decision: PolicyValue;
  parts: PolicyPart[];
  /** What the rules found for the risk (R-POL-10): the commands' own findings, writes and deletes by where they land. */
  risks?: RiskSignal[];
}

/**
 * Judges the planned paths against `policy.paths` (R-PATH-1) and folds every
 * part into one decision, the most restrictive. `cwds` are the forms of the
 * agent's cwd that `${cwd}` stands for (lexical and physical). A path the rules
 * leave at prompt is allowed by a `--path` rule whose glob holds all its forms.
 */
export function decidePlan(plan: ActionPlan, resolved: ResolvedPaths, paths: CompiledPaths, cwds: readonly string[], auto: AutoApprovals = NO_AUTO_APPROVALS): ActionVerdict {
  const parts = plan.parts.map((part) => ({ ...part }));
  const risks: RiskSignal[] = [...(plan.risks ?? []), ...deleteRisks(plan.deletes ?? [], resolved, cwds)];
  for (const path of plan.paths) {
    // A write that may land outside the cwd (or where, is not known), or on a gate file, is on the risk line.
    if (path.access === 'write' && path.denyOnly !== true) risks.push(...writeRisks(path.unknown === undefined ? (resolved[path.request ?? -1] ?? []) : [], cwds));
    if (path.unknown !== undefined) {
      parts.push({ kind: 'path', text: `${path.access} ${path.shown}`, decision: atLeastPrompt(paths[path.access]), rule: `policy.paths.${path.access}`, reason: path.unknown });
      continue;
    }
    const forms = resolved[path.request ?? -1] ?? [];
    const verdict = evaluatePathForms(paths, forms, path.access, cwds);
    if (path.denyOnly === true && verdict.decision !== 'deny') continue;
    const landed = forms.filter((form) => form !== path.shown);
    const part: PolicyPart = { kind: 'path', text: `${path.access} ${path.shown}`, decision: verdict.decision, rule: verdict.rule };
    if (landed.length > 0) part.reason = `resolves to ${[...new Set(landed)].join(', ')}`;
    const approval = verdict.decision === 'prompt' ? approvePath(auto, forms, path.access, cwds) : undefined;
    parts.push(approval === undefined ? part : autoApprovedPart(part, approval));
  }
  let decision: PolicyValue = 'allow';
  for (const part of parts) decision = mostRestrictive(decision, part.decision);
  if (parts.length === 0) decision = 'prompt';
  const verdict: ActionVerdict = { decision, parts };
  if (risks.length > 0) verdict.risks = orderRisks(risks);
  return verdict;
}
