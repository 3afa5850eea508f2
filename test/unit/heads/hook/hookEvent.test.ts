// R-HOOK-1, R-HOOK-2, R-HOOK-6: hook events per agent become agent actions or
// action ends; answers are in exactly the agent's shape.
import { describe, expect, it } from 'vitest';
import { afterAnswer, beforeAnswer, dialogAnswer, oneLine } from '../../../../src/heads/hook/hookAnswer.js';
import { outcomeOf, parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';

const claudeBefore = {
  session_id: 'sess-1',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/work/repo',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'touch x', description: 'make x' },
  tool_use_id: 'toolu_1',
  prompt_id: 'p1',
  effort: { level: 'high' },
};
const codexBefore = { ...claudeBefore, turn_id: 't1', model: 'gpt-5', tool_input: { command: 'touch x' }, prompt_id: undefined, effort: undefined };
const geminiBefore = {
  session_id: 'g-1',
  transcript_path: '/tmp/g.json',
  cwd: '/work/repo',
  hook_event_name: 'BeforeTool',
  timestamp: '2026-01-01T00:00:00Z',
  tool_name: 'run_shell_command',
  tool_input: { command: 'touch x' },
};

describe('hook events (R-HOOK-2)', () => {
  it('R-HOOK-2 a Claude Code PreToolUse becomes {agent, sessionId, cwd, tool, kind, input, toolUseId, permissionMode} with the exact tool_input', () => {
    const parsed = parseHookEvent('claude-code', 'before', JSON.stringify(claudeBefore), '/elsewhere');
    expect(parsed).toEqual({
      ok: true,
      mode: 'before',
      event: 'PreToolUse',
      action: { agent: 'claude-code', sessionId: 'sess-1', cwd: '/work/repo', tool: 'Bash', kind: 'shell', input: claudeBefore.tool_input, toolUseId: 'toolu_1', permissionMode: 'default' },
    });
    // Another agent's permission_mode is not read: only Claude Code's decides whether an ask shows a dialog (R-HOOK-9).
    expect(parseHookEvent('codex', 'before', JSON.stringify(codexBefore), '/x')).not.toHaveProperty('action.permissionMode');
  });

  it('R-HOOK-2 Codex PreToolUse and Gemini BeforeTool map alike; Gemini has no tool-use id', () => {
    expect(parseHookEvent('codex', 'before', JSON.stringify(codexBefore), '/x')).toMatchObject({ ok: true, action: { agent: 'codex', tool: 'Bash', kind: 'shell', toolUseId: 'toolu_1' } });
    const gemini = parseHookEvent('gemini', 'before', JSON.stringify(geminiBefore), '/x');
    expect(gemini).toMatchObject({ ok: true, action: { agent: 'gemini', sessionId: 'g-1', tool: 'run_shell_command', kind: 'shell', input: { command: 'touch x' } } });
    expect(gemini.ok && gemini.mode === 'before' && 'toolUseId' in gemini.action).toBe(false);
  });

  it('R-HOOK-5 the MCP server an agent reports beside its MCP tool is kept (Claude mcp_server, Gemini mcp_context)', () => {
    const claude = parseHookEvent('claude-code', 'before', JSON.stringify({ ...claudeBefore, tool_name: 'mcp__lab__echo', tool_input: { message: 'hi' }, mcp_server: { name: 'lab', source: 'x' } }), '/x');
    expect(claude).toMatchObject({ ok: true, action: { kind: 'mcp', mcpServer: 'lab' } });
    const gemini = parseHookEvent(
      'gemini',
      'before',
      JSON.stringify({ ...geminiBefore, tool_name: 'mcp_my_lab_echo', tool_input: { message: 'hi' }, mcp_context: { server_name: 'my_lab', tool_name: 'echo' } }),
      '/x',
    );
    expect(gemini).toMatchObject({ ok: true, action: { kind: 'mcp', mcpServer: 'my_lab' } });
  });

  it('R-HOOK-4 invalid JSON, a non-object, an unknown event, a missing or non-object tool_input, a missing session or tool are refused with a reason', () => {
    const cases: [string, RegExp][] = [
      ['{not json', /not valid JSON/],
      ['', /empty/],
      ['[1,2]', /not a JSON object/],
      [JSON.stringify({ ...claudeBefore, hook_event_name: 'UserPromptSubmit' }), /"UserPromptSubmit" is not one this hook handles .*expects PreToolUse/],
      [JSON.stringify({ ...claudeBefore, hook_event_name: undefined }), /no hook_event_name/],
      [JSON.stringify({ ...claudeBefore, tool_input: undefined }), /no tool_input/],
      [JSON.stringify({ ...claudeBefore, tool_input: 'touch x' }), /tool_input is not a JSON object/],
      [JSON.stringify({ ...claudeBefore, tool_input: null }), /tool_input is not a JSON object/],
      [JSON.stringify({ ...claudeBefore, session_id: undefined }), /no session_id/],
      [JSON.stringify({ ...claudeBefore, session_id: 'x'.repeat(201) }), /no session_id/],
      [JSON.stringify({ ...claudeBefore, tool_name: 42 }), /no tool_name/],
      [JSON.stringify({ ...claudeBefore, tool_use_id: 7 }), /tool_use_id is not a string/],
    ];
    for (const [text, problem] of cases) {
      const parsed = parseHookEvent('claude-code', 'before', text, '/x');
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.problem, text).toMatch(problem);
    }
    // Each agent's own event names only: a Gemini hook refuses PreToolUse, a before hook refuses an after-event.
    expect(parseHookEvent('gemini', 'before', JSON.stringify(claudeBefore), '/x')).toMatchObject({ ok: false, problem: expect.stringContaining('expects BeforeTool') });
    expect(parseHookEvent('codex', 'before', JSON.stringify({ ...codexBefore, hook_event_name: 'PostToolUse' }), '/x').ok).toBe(false);
    expect(parseHookEvent('claude-code', 'after', JSON.stringify(claudeBefore), '/x')).toMatchObject({ ok: false, problem: expect.stringContaining('--after expects PostToolUse') });
  });

  it('R-HOOK-2 a missing cwd falls back to the directory the agent started the hook in', () => {
    expect(parseHookEvent('gemini', 'before', JSON.stringify({ ...geminiBefore, cwd: undefined }), '/started/here')).toMatchObject({ ok: true, action: { cwd: '/started/here' } });
  });

  it('R-HOOK-6 after-events give the outcome the agent states and Claude Code duration_ms; without a statement the outcome is ok', () => {
    const after = { ...claudeBefore, hook_event_name: 'PostToolUse', tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false }, duration_ms: 12.4 };
    expect(parseHookEvent('claude-code', 'after', JSON.stringify(after), '/x')).toEqual({
      ok: true,
      mode: 'after',
      event: 'PostToolUse',
      end: { agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: claudeBefore.tool_input, toolUseId: 'toolu_1', outcome: 'ok', durationMs: 12 },
    });
    expect(parseHookEvent('claude-code', 'after', JSON.stringify({ ...after, hook_event_name: 'PostToolUseFailure' }), '/x')).toMatchObject({ end: { outcome: 'error' } });
    expect(parseHookEvent('gemini', 'after', JSON.stringify({ ...geminiBefore, hook_event_name: 'AfterTool', tool_response: { llmContent: 'x', error: 'exit 1' } }), '/x')).toMatchObject({
      end: { outcome: 'error' },
    });
    expect(parseHookEvent('codex', 'after', JSON.stringify({ ...codexBefore, hook_event_name: 'PostToolUse', tool_response: '' }), '/x')).toMatchObject({ end: { outcome: 'ok' } });
    expect(outcomeOf('PostToolUse', { isError: true })).toBe('error');
    expect(outcomeOf('PostToolUse', { interrupted: true })).toBe('error');
    expect(outcomeOf('AfterTool', { llmContent: 'x', error: null })).toBe('ok');
    expect(outcomeOf('AfterTool', 'text')).toBe('ok');
  });
});

describe('hook answers (R-HOOK-1)', () => {
  it('R-HOOK-1 Claude Code and Codex get hookSpecificOutput with permissionDecision; Gemini gets decision/reason; nothing else', () => {
    expect(JSON.parse(beforeAnswer('claude-code', 'allow', 'ok'))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'ok' },
    });
    // Codex shows a JSON allow as a failed hook; exit 0 with nothing printed shows as completed (issue 20).
    expect(beforeAnswer('codex', 'allow', 'ok')).toBe('');
    expect(JSON.parse(beforeAnswer('codex', 'deny', 'no'))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' },
    });
    expect(JSON.parse(beforeAnswer('gemini', 'deny', 'no'))).toEqual({ decision: 'deny', reason: 'no' });
    expect(JSON.parse(beforeAnswer('gemini', 'allow', 'ok'))).toEqual({ decision: 'allow', reason: 'ok' });
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      for (const decision of ['allow', 'deny'] as const) {
        const text = beforeAnswer(agent, decision, 'r');
        if (agent === 'codex' && decision === 'allow') continue;
        expect(text).not.toContain('updatedInput');
        expect(text).not.toContain('"ask"');
        expect(text).not.toContain('\n');
      }
    }
    expect(afterAnswer()).toBe('{}');
  });

  it('R-HOOK-4 a reason is one line: line breaks and controls become spaces, length is bounded', () => {
    expect(oneLine('a\nb\r\n\tc\u2028d')).toBe('a b c d');
    expect(oneLine('x'.repeat(10_000)).length).toBe(4000);
  });
});

describe('R-HOOK-9 the agent\'s own dialog', () => {
  const dialog = { ...claudeBefore, hook_event_name: 'PermissionRequest', tool_use_id: undefined, permission_suggestions: [] };

  it('R-HOOK-9 Claude Code\'s PermissionRequest, sent to the before-tool command, is a dialog event with the exact input; no other agent and no --after hook takes it', () => {
    expect(parseHookEvent('claude-code', 'before', JSON.stringify(dialog), '/x')).toEqual({
      ok: true,
      mode: 'dialog',
      event: 'PermissionRequest',
      dialog: { agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'touch x', description: 'make x' } },
    });
    for (const [agent, mode] of [['codex', 'before'], ['qwen', 'before'], ['claude-code', 'after']] as const) {
      expect(parseHookEvent(agent, mode, JSON.stringify(dialog), '/x')).toMatchObject({ ok: false, problem: expect.stringContaining('PermissionRequest') });
    }
  });

  it('R-HOOK-9 ask is answered to Claude Code only (any other agent gets a deny: Codex runs an ask); the dialog answer is hookSpecificOutput.decision.behavior, one line', () => {
    expect(JSON.parse(beforeAnswer('claude-code', 'ask', 'waits'))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'waits' } });
    expect(JSON.parse(beforeAnswer('codex', 'ask', 'waits'))).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.parse(beforeAnswer('qwen', 'ask', 'waits'))).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.parse(beforeAnswer('gemini', 'ask', 'waits'))).toEqual({ decision: 'deny', reason: 'waits' });
    expect(JSON.parse(dialogAnswer('allow', 'ignored'))).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expect(JSON.parse(dialogAnswer('deny', 'no\nway'))).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'no way' } } });
  });
});
