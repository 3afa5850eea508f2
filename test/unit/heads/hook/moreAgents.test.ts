// R-HOOK-14, R-HOOK-11: the events of OpenCode/Kilo (assent's plugin), Copilot
// CLI and Qwen Code become agent actions with the right kinds and MCP names; the
// answers are in each agent's own form; `--timeout` gives the hook one hard
// deadline, the agent's timeout minus the margin.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentActionKind, agentToolId, isBookkeepingTool, mcpToolOf, parseAgentName } from '../../../../src/core/agent/agentAction.js';
import { beforeAnswer } from '../../../../src/heads/hook/hookAnswer.js';
import { parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';
import { parseHookArgs, runHook } from '../../../../src/heads/hook/hookRun.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('R-HOOK-14 the four newer agents', () => {
  it('R-HOOK-14 names, tool ids and kinds: bash/write/edit/read/webfetch, bash/create/edit/view/web_fetch, run_shell_command/write_file/edit/read_file/web_fetch', () => {
    for (const name of ['opencode', 'kilo', 'copilot', 'qwen'] as const) expect(parseAgentName(name)).toBe(name);
    expect(agentToolId('opencode', 'bash')).toBe('opencode/bash');
    expect(agentToolId('qwen', 'run_shell_command')).toBe('qwen/run_shell_command');
    for (const agent of ['opencode', 'kilo'] as const) {
      expect([agentActionKind(agent, 'bash'), agentActionKind(agent, 'write'), agentActionKind(agent, 'edit'), agentActionKind(agent, 'read'), agentActionKind(agent, 'webfetch')]).toEqual([
        'shell',
        'write',
        'write',
        'read',
        'fetch',
      ]);
    }
    expect(['bash', 'create', 'edit', 'view', 'web_fetch'].map((tool) => agentActionKind('copilot', tool))).toEqual(['shell', 'write', 'write', 'read', 'fetch']);
    expect(['run_shell_command', 'write_file', 'edit', 'read_file', 'web_fetch'].map((tool) => agentActionKind('qwen', tool))).toEqual(['shell', 'write', 'write', 'read', 'fetch']);
    // A tool that types into a running shell is not bookkeeping; an unknown tool is `other`, decided by policy.agents.default.
    expect(agentActionKind('copilot', 'write_bash')).toBe('other');
    expect(isBookkeepingTool('copilot', 'write_bash')).toBe(false);
    expect(agentActionKind('kilo', 'background_process')).toBe('other');
  });

  it('R-POL-8 each agent\'s bookkeeping tools are named (to-do lists, subagents whose calls pass the hook again)', () => {
    expect(isBookkeepingTool('opencode', 'todowrite')).toBe(true);
    expect(isBookkeepingTool('opencode', 'task')).toBe(true);
    expect(isBookkeepingTool('kilo', 'todowrite')).toBe(true);
    expect(isBookkeepingTool('copilot', 'report_intent')).toBe(true);
    expect(isBookkeepingTool('qwen', 'todo_write')).toBe(true);
    expect(isBookkeepingTool('qwen', 'save_memory')).toBe(false);
  });

  it('R-HOOK-14 MCP names: <server>_<tool> only with the server the plugin reported, <server>-<tool>, mcp__<server>__<tool>', () => {
    expect(mcpToolOf('opencode', 'lab_echo', 'lab')).toEqual({ server: 'lab', tool: 'echo' });
    expect(mcpToolOf('opencode', 'my_lab_echo', 'my_lab')).toEqual({ server: 'my_lab', tool: 'echo' });
    // Without a reported server a name with an underscore is a built-in tool, not an MCP tool.
    expect(mcpToolOf('kilo', 'kilo_local_recall')).toBeUndefined();
    expect(agentActionKind('kilo', 'kilo_local_recall')).toBe('other');
    expect(agentActionKind('opencode', 'lab_echo', 'lab')).toBe('mcp');
    expect(mcpToolOf('copilot', 'lab-echo')).toEqual({ server: 'lab', tool: 'echo' });
    expect(mcpToolOf('copilot', 'web_fetch')).toBeUndefined();
    expect(mcpToolOf('qwen', 'mcp__lab__echo')).toEqual({ server: 'lab', tool: 'echo' });
  });

  it('R-HOOK-1 answers: the plugin reads {decision, reason}; Copilot its flat permissionDecision; Qwen hookSpecificOutput', () => {
    expect(JSON.parse(beforeAnswer('opencode', 'deny', 'no'))).toEqual({ decision: 'deny', reason: 'no' });
    expect(JSON.parse(beforeAnswer('kilo', 'allow', 'ok'))).toEqual({ decision: 'allow', reason: 'ok' });
    expect(JSON.parse(beforeAnswer('copilot', 'deny', 'no'))).toEqual({ permissionDecision: 'deny', permissionDecisionReason: 'no' });
    expect(JSON.parse(beforeAnswer('qwen', 'deny', 'no'))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' } });
  });

  it('R-HOOK-2 R-HOOK-6 Copilot\'s own event fields (sessionId, toolName, toolArgs, toolResult) become an action and an end; a failed result is an error', () => {
    const before = parseHookEvent('copilot', 'before', JSON.stringify({ sessionId: 's1', timestamp: 1, cwd: '/w', toolName: 'bash', toolArgs: { command: 'ls', description: 'd' } }), '/x');
    expect(before).toMatchObject({ ok: true, mode: 'before', action: { agent: 'copilot', sessionId: 's1', cwd: '/w', tool: 'bash', kind: 'shell', input: { command: 'ls', description: 'd' } } });
    const asText = parseHookEvent('copilot', 'before', JSON.stringify({ sessionId: 's1', cwd: '/w', toolName: 'view', toolArgs: '{"path":"/w/a"}' }), '/x');
    expect(asText).toMatchObject({ ok: true, action: { kind: 'read', input: { path: '/w/a' } } });
    const after = parseHookEvent('copilot', 'after', JSON.stringify({ sessionId: 's1', cwd: '/w', toolName: 'bash', toolArgs: { command: 'ls' }, toolResult: { resultType: 'failure' } }), '/x');
    expect(after).toMatchObject({ ok: true, mode: 'after', end: { agent: 'copilot', outcome: 'error' } });
    expect(parseHookEvent('copilot', 'before', JSON.stringify({ sessionId: 's1', toolName: 'bash', toolArgs: 'not json' }), '/x')).toMatchObject({ ok: false, problem: expect.stringMatching(/tool_input is not a JSON object/) });
  });

  it('R-HOOK-2 Qwen\'s PreToolUse and the plugin\'s tool.execute.before (with the MCP server it reported) become actions; another event name is refused', () => {
    const qwen = { session_id: 'q', cwd: '/w', hook_event_name: 'PreToolUse', tool_name: 'write_file', tool_input: { file_path: '/w/a', content: 'x' }, tool_use_id: 'toolu_1', tool_call_id: 'call_1' };
    expect(parseHookEvent('qwen', 'before', JSON.stringify(qwen), '/x')).toMatchObject({ ok: true, action: { agent: 'qwen', kind: 'write', toolUseId: 'toolu_1' } });
    const plugin = { hook_event_name: 'tool.execute.before', session_id: 'ses_1', cwd: '/w', tool_name: 'lab_echo', tool_input: { message: 'hi' }, tool_use_id: 'call_1', mcp_server: { name: 'lab' } };
    expect(parseHookEvent('opencode', 'before', JSON.stringify(plugin), '/x')).toMatchObject({ ok: true, action: { agent: 'opencode', kind: 'mcp', mcpServer: 'lab', toolUseId: 'call_1' } });
    expect(parseHookEvent('kilo', 'before', JSON.stringify({ ...plugin, hook_event_name: 'PreToolUse' }), '/x')).toMatchObject({ ok: false, problem: expect.stringMatching(/expects tool\.execute\.before/) });
  });
});

describe('R-HOOK-11 the hard deadline for the newer agents', () => {
  it('R-HOOK-11 the newer agents take --timeout like the first three', () => {
    expect(parseHookArgs(['qwen', '--timeout', '136'])).toEqual({ agent: 'qwen', mode: 'before', timeoutSeconds: 136 });
    expect(parseHookArgs(['opencode', '--after', '--timeout', '17'])).toEqual({ agent: 'opencode', mode: 'after', timeoutSeconds: 17 });
  });

  it('R-HOOK-11 a daemon that never comes up: the hook answers deny in the agent\'s form at the timeout minus the margin, counted from the process start', async () => {
    const root = mkdtempSync(join(tmpdir(), 'as-deadline-'));
    roots.push(root);
    const home = join(root, 'h');
    mkdirSync(home);
    chmodSync(home, 0o700);
    const started = Date.now();
    const outcome = await runHook(['copilot', '--timeout', '5'], {
      readStdin: () => Promise.resolve({ text: JSON.stringify({ sessionId: 's', cwd: '/w', toolName: 'bash', toolArgs: { command: 'ls' } }), oversized: false }),
      env: { ASSENT_HOME: home },
      cwd: () => '/w',
      // The process started 1 s before runHook ran: the 2 s deadline (5 s − 3 s) is 1 s away.
      startedAt: started - 1000,
      startDaemon: () => new Promise<void>(() => undefined),
    });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(2500);
    expect(outcome.exitCode).toBe(2);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(/no decision within the hook's deadline of 2 s \(the agent's hook timeout of 5 s/) });
  });
});
