// Policy for agent actions (SPEC §18, R-POL-6), without the shell, path and URL
// rules of a later version: `policy.tools["<agent>/<tool>"]` wins outright; an
// MCP tool is judged by its MCP id like a gateway call; anything else gets
// `policy.agents.default`. Auto-approval rules may turn prompt into allow.
import { agentToolId, mcpToolOf, type AgentAction } from './agentAction.js';
import type { PolicyValue } from './config.js';
import { evaluateToolPolicy, matchingRuleId, type PolicySnapshot, type ToolPolicyResult } from './toolPolicy.js';

/** Decides one agent action. Pure; `agentsDefault` is `policy.agents.default`. */
export function evaluateAgentPolicy(
  snapshot: PolicySnapshot,
  agentsDefault: PolicyValue,
  action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'mcpServer'>,
  nowMs: number,
): ToolPolicyResult {
  const id = agentToolId(action.agent, action.tool);
  const explicit = snapshot.tools.get(id);
  if (explicit !== undefined) {
    const result: ToolPolicyResult = { decision: explicit, source: 'tool', key: `policy.tools.${id}` };
    return withRule(snapshot, result, id, action.input, nowMs);
  }
  const mcp = action.kind === 'mcp' ? mcpToolOf(action.agent, action.tool, action.mcpServer) : undefined;
  if (mcp !== undefined) {
    // No annotations reach a hook, so the tool counts as destructive (R-POL-3) unless policy.tools names it.
    const result = evaluateToolPolicy(snapshot, { server: mcp.server, tool: mcp.tool, args: action.input }, nowMs);
    return withRule(snapshot, result, id, action.input, nowMs);
  }
  return withRule(snapshot, { decision: agentsDefault, source: 'agents', key: 'policy.agents.default' }, id, action.input, nowMs);
}

/** A prompt becomes allow when a rule for the agent's tool id matches (R-POL-4); deny and allow stay. */
function withRule(snapshot: PolicySnapshot, result: ToolPolicyResult, id: string, input: Record<string, unknown>, nowMs: number): ToolPolicyResult {
  if (result.decision !== 'prompt') return result;
  const ruleId = matchingRuleId(snapshot, id, input, nowMs);
  if (ruleId === undefined) return result;
  const allowed: ToolPolicyResult = { decision: 'allow', source: 'rule', ruleId };
  if (result.key !== undefined) allowed.key = result.key;
  return allowed;
}
