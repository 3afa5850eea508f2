// Policy for agent actions (SPEC §18, R-POL-6): `policy.tools["<agent>/<tool>"]`
// wins outright; else the kind's rules (a shell action's commands and
// redirections, a read or write action's paths, a fetch's URL), judged by the
// daemon beforehand and handed in as a verdict; an MCP tool is judged by its
// MCP id like a gateway call; anything else gets `policy.agents.default`.
// Auto-approval rules may turn prompt into allow, never deny into anything:
// `--command`/`--path`/`--url` rules part by part inside the verdict, `--tool`
// rules on the whole action here.
import type { ActionVerdict, PolicyPart } from './actionPlan.js';
import { agentToolId, isBookkeepingTool, mcpToolOf, type AgentAction } from '../agent/agentAction.js';
import type { RiskSignal } from '../approval/approvalRisk.js';
import type { PolicyValue } from '../config/config.js';
import { evaluateToolPolicy, matchingRuleId, type PolicySnapshot, type ToolPolicyResult } from './toolPolicy.js';

/** The decision of an agent action, and, when the kind's rules decided, every part they judged. */
export interface AgentPolicyResult extends ToolPolicyResult {
  parts?: PolicyPart[];
  /** The part whose decision is the action's (the first of the most restrictive). */
  decidingPart?: PolicyPart;
  /** What the kind's rules found for the risk (R-POL-10): the commands' own findings, writes and deletes by where they land. */
  risks?: RiskSignal[];
  /** R-SH-14: allowed to run confined, in the sandbox; `key` names the `policy.commands.confine` pattern. */
  confined?: true;
  /** R-SH-14: the action could have run confined, and why it does not here (no sandbox, an agent that cannot rewrite). */
  notConfined?: string;
}

/** Whether an action that runs project code may run confined on this host for this agent (R-SH-14). */
export type Confinement = { available: true } | { available: false; why: string };

const KIND_SOURCE = { shell: 'commands', read: 'paths', write: 'paths', fetch: 'urls' } as const;

/** `policy.agents`: the decision for bookkeeping tools and for anything no other key decides. */
export interface AgentsPolicy {
  default: PolicyValue;
  bookkeeping: PolicyValue;
}

/**
 * Decides one agent action. Pure; `agents` is `policy.agents` (a lone value is
 * its `default`, bookkeeping then allowed), `verdict` the kind's rules
 * (undefined: not covered).
 */
export function evaluateAgentPolicy(
  snapshot: PolicySnapshot,
  agents: PolicyValue | AgentsPolicy,
  action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'mcpServer'>,
  nowMs: number,
  verdict?: ActionVerdict,
  confinement?: Confinement,
): AgentPolicyResult {
  const id = agentToolId(action.agent, action.tool);
  const explicit = snapshot.tools.get(id);
  if (explicit !== undefined) {
    const result: ToolPolicyResult = { decision: explicit, source: 'tool', key: `policy.tools.${id}` };
    return withRule(snapshot, result, id, action.input, nowMs);
  }
  if (verdict !== undefined && action.kind in KIND_SOURCE) {
    const deciding = verdict.parts.find((part) => part.decision === verdict.decision);
    const source = KIND_SOURCE[action.kind as keyof typeof KIND_SOURCE];
    const result: AgentPolicyResult = { decision: verdict.decision, source, key: deciding?.rule ?? `policy.${source}`, parts: verdict.parts };
    if (deciding !== undefined) result.decidingPart = deciding;
    // Allowed only because `--command`/`--path`/`--url` rules allowed some parts: the call is recorded with the first of them.
    const ruleId = verdict.decision === 'allow' ? verdict.parts.find((part) => part.ruleId !== undefined)?.ruleId : undefined;
    if (ruleId !== undefined) result.ruleId = ruleId;
    if (verdict.risks !== undefined) result.risks = verdict.risks;
    const ruled = withRule(snapshot, result, id, action.input, nowMs);
    // A rule the person made for the tool outranks confinement: what they allowed runs as they allowed it.
    return ruled.decision === 'prompt' && verdict.confinable === true ? confined(ruled, verdict, confinement) : ruled;
  }
  const agentsPolicy: AgentsPolicy = typeof agents === 'string' ? { default: agents, bookkeeping: 'allow' } : agents;
  if (action.kind === 'other' && isBookkeepingTool(action.agent, action.tool)) {
    return withRule(snapshot, { decision: agentsPolicy.bookkeeping, source: 'agents', key: 'policy.agents.bookkeeping' }, id, action.input, nowMs);
  }
  const mcp = action.kind === 'mcp' ? mcpToolOf(action.agent, action.tool, action.mcpServer) : undefined;
  if (mcp !== undefined) {
    // No annotations reach a hook, so the tool counts as destructive (R-POL-3) unless policy.tools names it.
    const result = evaluateToolPolicy(snapshot, { server: mcp.server, tool: mcp.tool, args: action.input }, nowMs);
    return withRule(snapshot, result, id, action.input, nowMs);
  }
  return withRule(snapshot, { decision: agentsPolicy.default, source: 'agents', key: 'policy.agents.default' }, id, action.input, nowMs);
}

/** R-SH-14: a prompt only for parts that run project code is allow, confined, where the host and the agent can confine it. */
function confined(result: AgentPolicyResult, verdict: ActionVerdict, confinement: Confinement | undefined): AgentPolicyResult {
  const part = verdict.parts.find((p) => p.confine !== undefined);
  if (confinement === undefined || !confinement.available) return { ...result, notConfined: confinement?.why ?? 'confinement was not offered for this call' };
  const out: AgentPolicyResult = { ...result, decision: 'allow', confined: true };
  if (part?.confine !== undefined) out.key = part.confine;
  delete out.decidingPart;
  return out;
}

/** A prompt becomes allow when a rule for the agent's tool id matches (R-POL-4); deny and allow stay. */
function withRule(snapshot: PolicySnapshot, result: AgentPolicyResult, id: string, input: Record<string, unknown>, nowMs: number): AgentPolicyResult {
  if (result.decision !== 'prompt') return result;
  const ruleId = matchingRuleId(snapshot, id, input, nowMs);
  if (ruleId === undefined) return result;
  return { ...result, decision: 'allow', source: 'rule', ruleId };
}

/** One line saying which part and rule decided, for a denial's text and an approval's preview. */
export function describeDecidingPart(result: AgentPolicyResult): string | undefined {
  const part = result.decidingPart;
  if (part === undefined) return undefined;
  return `${part.kind} ${JSON.stringify(part.text)}: ${part.decision} by ${part.rule ?? result.key ?? 'policy'}${part.reason === undefined ? '' : ` (${part.reason})`}`;
}

/** One line of `assent policy explain` (R-POL-9): a judged part, or the key that decided the whole action. */
export interface ExplainedPart {
  kind: PolicyPart['kind'] | 'tool' | 'rule';
  text: string;
  decision: PolicyValue;
  rule?: string;
  reason?: string;
  /** The auto-approval rule that allowed this part (R-POL-6). */
  ruleId?: string;
}

export interface AgentPolicyExplanation {
  decision: PolicyValue;
  /** R-SH-14: the allow is a confined one. */
  confined?: true;
  parts: ExplainedPart[];
}

/**
 * The explanation of a decision: every part the kind's rules judged (a part a
 * `--command`/`--path`/`--url` rule allowed names that rule), else the one key
 * that decided; a `--tool` rule that turned the whole action into allow last.
 */
export function explainAgentPolicy(result: AgentPolicyResult, toolId: string): AgentPolicyExplanation {
  const parts: ExplainedPart[] =
    result.parts !== undefined
      ? result.parts.map((part) => ({ ...part }))
      : [{ kind: 'tool', text: toolId, decision: result.source === 'rule' ? 'prompt' : result.decision, rule: result.key ?? 'policy' }];
  if (result.source === 'rule' && result.ruleId !== undefined) {
    parts.push({ kind: 'rule', text: toolId, decision: 'allow', rule: `rule ${result.ruleId}`, reason: 'an auto-approval rule turns this prompt into allow' });
  }
  for (const part of parts) {
    if (!('confine' in part) || part.confine === undefined) continue;
    const said = result.confined === true ? 'runs project code: confined' : `runs project code: not confined here (${result.notConfined ?? 'no sandbox'}), so it asks`;
    part.reason = (part.reason ?? '').replace('runs project code: it may run confined', said) || said;
  }
  return result.confined === true ? { decision: result.decision, confined: true, parts } : { decision: result.decision, parts };
}
