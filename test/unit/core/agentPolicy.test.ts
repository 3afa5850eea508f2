// R-POL-6 (without shell, path and URL rules): which key decides an agent action.
import { describe, expect, it } from 'vitest';
import { evaluateAgentPolicy } from '../../../src/core/policy/agentPolicy.js';
import { compilePolicy, type Rule } from '../../../src/core/policy/toolPolicy.js';
import { FAIL_CLOSED_CONFIG } from '../../../src/journal/confirmedConfig.js';

const NOW = 1_000_000;

function snapshot(tools: Record<string, 'allow' | 'deny' | 'prompt'>, rules: Rule[] = [], other: { default?: 'allow' | 'deny' | 'prompt'; destructive?: 'allow' | 'deny' | 'prompt' } = {}) {
  return compilePolicy({ default: other.default ?? 'allow', destructive: other.destructive ?? 'prompt', tools }, rules);
}

const bash = { agent: 'claude-code' as const, tool: 'Bash', kind: 'shell' as const, input: { command: 'ls' } };

describe('agent-action policy (R-POL-6)', () => {
  it('R-POL-6 policy.tools["<agent>/<tool>"] wins outright; else policy.agents.default (prompt by default)', () => {
    expect(evaluateAgentPolicy(snapshot({ 'claude/Bash': 'deny' }), 'allow', bash, NOW)).toMatchObject({ decision: 'deny', key: 'policy.tools.claude/Bash' });
    expect(evaluateAgentPolicy(snapshot({ 'claude/Bash': 'allow' }), 'deny', bash, NOW)).toMatchObject({ decision: 'allow', key: 'policy.tools.claude/Bash' });
    expect(evaluateAgentPolicy(snapshot({}), 'prompt', bash, NOW)).toMatchObject({ decision: 'prompt', source: 'agents', key: 'policy.agents.default' });
    // Another agent's entry does not decide this one.
    expect(evaluateAgentPolicy(snapshot({ 'codex/Bash': 'allow' }), 'deny', bash, NOW)).toMatchObject({ decision: 'deny', key: 'policy.agents.default' });
    // policy.default is the gateway's, not the agents'.
    expect(evaluateAgentPolicy(snapshot({}, [], { default: 'allow' }), 'prompt', bash, NOW).decision).toBe('prompt');
  });

  it('R-POL-6 an mcp action is judged by its MCP id: policy.tools, else policy.destructive (no annotations reach a hook)', () => {
    const echo = { agent: 'codex' as const, tool: 'mcp__lab__echo', kind: 'mcp' as const, input: { message: 'hi' } };
    expect(evaluateAgentPolicy(snapshot({ 'lab/echo': 'allow' }), 'deny', echo, NOW)).toMatchObject({ decision: 'allow', key: 'policy.tools.lab/echo' });
    expect(evaluateAgentPolicy(snapshot({}, [], { destructive: 'deny' }), 'allow', echo, NOW)).toMatchObject({ decision: 'deny', key: 'policy.destructive' });
    // The agent's own id still wins over the MCP id.
    expect(evaluateAgentPolicy(snapshot({ 'lab/echo': 'allow', 'codex/mcp__lab__echo': 'deny' }), 'allow', echo, NOW)).toMatchObject({ decision: 'deny' });
  });

  it('R-POL-4 a rule for the agent tool id turns prompt into allow, never deny', () => {
    const rule: Rule = { id: 'r1', version: 1, tool: 'claude/Bash', args: [{ pointer: '/command', op: 'equals', value: 'ls' }], createdAt: 1 };
    expect(evaluateAgentPolicy(snapshot({}, [rule]), 'prompt', bash, NOW)).toMatchObject({ decision: 'allow', source: 'rule', ruleId: 'r1' });
    expect(evaluateAgentPolicy(snapshot({}, [rule]), 'prompt', { ...bash, input: { command: 'ls ' } }, NOW).decision).toBe('prompt');
    expect(evaluateAgentPolicy(snapshot({ 'claude/Bash': 'deny' }, [rule]), 'prompt', bash, NOW).decision).toBe('deny');
  });

  it('R-HOOK-4 the fail-closed stand-in configuration (an invalid confirmed config) denies agent actions too, rules or not', () => {
    const rule: Rule = { id: 'r1', version: 1, tool: 'claude/Bash', args: [], createdAt: 1 };
    const failClosed = compilePolicy(FAIL_CLOSED_CONFIG.policy, [rule]);
    expect(evaluateAgentPolicy(failClosed, FAIL_CLOSED_CONFIG.policy.agents.default, bash, NOW)).toMatchObject({ decision: 'deny', key: 'policy.agents.default' });
    expect(evaluateAgentPolicy(failClosed, FAIL_CLOSED_CONFIG.policy.agents.default, { agent: 'codex', tool: 'mcp__lab__echo', kind: 'mcp', input: {} }, NOW).decision).toBe('deny');
  });
});
