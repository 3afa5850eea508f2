// R-HOOK-14 for Auggie: its events (conversation_id, workspace_roots, no cwd,
// no tool-use id, mcp_metadata) become agent actions with the right kinds,
// paths, cwd and MCP names; its answers are Claude-style, a deny with the
// reason on stderr too (Auggie shows the person only "Blocked by hook"
// otherwise), a confined allow is an allow with the whole input as updatedInput.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentActionKind, agentToolId, gatewayToolCandidate, isBookkeepingTool, isRewritingAgent, mcpToolOf, parseAgentName } from '../../../../src/core/agent/agentAction.js';
import { actionPaths } from '../../../../src/core/agent/agentTargets.js';
import { beforeAnswer, deniesWithExit2, deniesWithStderr } from '../../../../src/heads/hook/hookAnswer.js';
import { auggieEventFields, parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';
import { runHook } from '../../../../src/heads/hook/hookRun.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stand-in daemon that answers every agents.authorize with `result`. */
async function daemonAnswering(result: Record<string, unknown>): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'as-auggie-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'h');
  mkdirSync(home);
  chmodSync(home, 0o700);
  const server: Server = createServer((socket) => {
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines.filter(Boolean)) {
        const frame = JSON.parse(line) as { id: number; method: string };
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: frame.id, result: frame.method === 'agents.authorize' ? result : {} })}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(join(home, 'daemon.sock'), resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return home;
}

/** An event as Auggie 0.36.0 writes it to a hook's stdin. */
const event = (tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ hook_event_name: 'PreToolUse', conversation_id: 'c1', workspace_roots: ['/w'], tool_name: tool, tool_input: input, tool_output: '[undefined]', tool_error: null, is_mcp_tool: false, ...extra });

const launch = { command: 'npm test', wait: true, max_wait_seconds: 60, cwd: '/w' };

async function answer(result: Record<string, unknown>): Promise<Awaited<ReturnType<typeof runHook>>> {
  const home = await daemonAnswering(result);
  return runHook(['auggie', '--timeout', '60'], {
    readStdin: () => Promise.resolve({ text: event('launch-process', launch), oversized: false }),
    env: { ASSENT_HOME: home },
    cwd: () => '/w',
  });
}

describe('R-HOOK-14 Auggie', () => {
  it('R-HOOK-2 names and kinds: launch-process is the shell; view reads; save-file, str-replace-editor, remove-files and apply_patch write; web-fetch fetches; write-process and codebase-retrieval are other', () => {
    expect(parseAgentName('auggie')).toBe('auggie');
    expect(agentToolId('auggie', 'launch-process')).toBe('auggie/launch-process');
    const tools = ['launch-process', 'view', 'save-file', 'str-replace-editor', 'remove-files', 'apply_patch', 'web-fetch', 'write-process', 'kill-process', 'codebase-retrieval', 'view-session'];
    expect(tools.map((tool) => agentActionKind('auggie', tool))).toEqual(['shell', 'read', 'write', 'write', 'write', 'write', 'fetch', 'other', 'other', 'other', 'other']);
    expect(['view_tasklist', 'add_tasks', 'update_tasks', 'reorganize_tasklist', 'read-process', 'list-processes', 'view-range-untruncated', 'search-untruncated'].every((tool) => isBookkeepingTool('auggie', tool))).toBe(true);
    expect(isBookkeepingTool('auggie', 'write-process')).toBe(false);
    expect(isRewritingAgent('auggie')).toBe(true);
  });

  it('R-HOOK-2 MCP tools are <tool>_<server> with the server its hook reports; without one a name is not an MCP tool; the gateway\'s are <tool>_assent', () => {
    expect(mcpToolOf('auggie', 'echo_everything', 'everything')).toEqual({ server: 'everything', tool: 'echo' });
    expect(mcpToolOf('auggie', 'get_sum_my_server', 'my_server')).toEqual({ server: 'my_server', tool: 'get_sum' });
    expect(agentActionKind('auggie', 'echo_everything', 'everything')).toBe('mcp');
    expect(mcpToolOf('auggie', 'echo_everything')).toBeUndefined();
    // Auggie cuts a name at 64 characters: the tool is then the name as it stands.
    expect(mcpToolOf('auggie', 'a_very_long_tool_name_that_was_cut_off_by_auggie_at_sixty_four_', 'server')).toEqual({ server: 'server', tool: 'a_very_long_tool_name_that_was_cut_off_by_auggie_at_sixty_four_' });
    expect(gatewayToolCandidate('auggie', 'fs__write_file_assent', 'assent')).toBe('fs__write_file');
    expect(gatewayToolCandidate('auggie', 'fs__write_file_assent')).toBeUndefined();
    expect(gatewayToolCandidate('auggie', 'fs__write_file_other', 'other')).toBeUndefined();
  });

  it('R-PATH-1 the paths of its read and write tools, relative to the workspace root; remove-files by its file_paths; apply_patch by the files its patch names', () => {
    expect(actionPaths({ agent: 'auggie', tool: 'view', input: { path: 'src/a.ts', type: 'file' } })).toEqual({ paths: ['src/a.ts'] });
    expect(actionPaths({ agent: 'auggie', tool: 'save-file', input: { path: '/w/b', file_content: 'x' } })).toEqual({ paths: ['/w/b'] });
    expect(actionPaths({ agent: 'auggie', tool: 'str-replace-editor', input: { command: 'str_replace', path: 'c.ts', str_replace_entries: [] } })).toEqual({ paths: ['c.ts'] });
    expect(actionPaths({ agent: 'auggie', tool: 'remove-files', input: { file_paths: ['a', '/etc/passwd'] } })).toEqual({ paths: ['a', '/etc/passwd'] });
    expect(actionPaths({ agent: 'auggie', tool: 'remove-files', input: { file_paths: [1] } })).toMatchObject({ unknown: 'an entry of "file_paths" is not a string' });
    expect(actionPaths({ agent: 'auggie', tool: 'remove-files', input: {} })).toMatchObject({ unknown: expect.stringContaining('names no path') });
    expect(actionPaths({ agent: 'auggie', tool: 'apply_patch', input: { input: '*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n' } })).toEqual({ paths: ['c.txt'] });
  });

  it('R-HOOK-2 its PreToolUse is an action: the conversation is the session, the workspace root the cwd, a launch-process cwd resolved against it; no tool_use_id', () => {
    expect(parseHookEvent('auggie', 'before', event('save-file', { path: 'b.txt', file_content: 'bee' }), '/x')).toEqual({
      ok: true,
      mode: 'before',
      event: 'PreToolUse',
      action: { agent: 'auggie', sessionId: 'c1', cwd: '/w', tool: 'save-file', kind: 'write', input: { path: 'b.txt', file_content: 'bee' } },
    });
    expect(parseHookEvent('auggie', 'before', event('launch-process', { ...launch, cwd: 'sub/dir' }), '/x')).toMatchObject({ ok: true, action: { cwd: '/w/sub/dir', kind: 'shell' } });
    expect(parseHookEvent('auggie', 'before', event('launch-process', { ...launch, cwd: '/tmp' }), '/x')).toMatchObject({ ok: true, action: { cwd: '/tmp' } });
    // No workspace root: the hook's own cwd (Auggie starts it in the workspace root).
    expect(parseHookEvent('auggie', 'before', JSON.stringify({ ...(JSON.parse(event('view', { path: 'a' })) as object), workspace_roots: [] }), '/x')).toMatchObject({ ok: true, action: { cwd: '/x' } });
    // A relative root is refused: the call's paths would mean other files.
    expect(parseHookEvent('auggie', 'before', event('view', { path: 'a' }, { workspace_roots: ['w'] }), '/x')).toMatchObject({ ok: false, problem: expect.stringContaining('cwd is not an absolute path') });
  });

  it('R-HOOK-2 an MCP call with mcp_metadata names its server; without metadata it is not an MCP action (policy.agents.default decides it)', () => {
    const metadata = { mcp_metadata: { mcpExecutedToolName: 'echo', mcpExecutedToolServerName: 'everything' }, is_mcp_tool: true };
    expect(parseHookEvent('auggie', 'before', event('echo_everything', { message: 'hi' }, metadata), '/x')).toMatchObject({ ok: true, action: { tool: 'echo_everything', kind: 'mcp', mcpServer: 'everything' } });
    expect(parseHookEvent('auggie', 'before', event('echo_everything', { message: 'hi' }, { is_mcp_tool: true }), '/x')).toMatchObject({ ok: true, action: { kind: 'other' } });
    // A server named for a call Auggie does not mark as MCP is not believed.
    expect(auggieEventFields(JSON.parse(event('view', { path: 'a' }, { mcp_metadata: { mcpExecutedToolServerName: 'x' } })) as Record<string, unknown>)['mcp_server']).toBeUndefined();
  });

  it('R-HOOK-6 its PostToolUse is an end: tool_error makes it an error, tool_output alone ok', () => {
    const after = (extra: Record<string, unknown>): string => event('launch-process', launch, { hook_event_name: 'PostToolUse', ...extra });
    expect(parseHookEvent('auggie', 'after', after({ tool_output: 'Here are the results…' }), '/x')).toMatchObject({ ok: true, mode: 'after', end: { agent: 'auggie', sessionId: 'c1', tool: 'launch-process', outcome: 'ok' } });
    expect(parseHookEvent('auggie', 'after', after({ tool_output: 'Missing required parameter', tool_error: 'Missing required parameter' }), '/x')).toMatchObject({ ok: true, end: { outcome: 'error' } });
  });

  it('R-HOOK-1 answers: Claude-style hookSpecificOutput, allow included; ask is a deny; a confined allow is an allow with the whole input as updatedInput', () => {
    expect(JSON.parse(beforeAnswer('auggie', 'deny', 'no'))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' } });
    expect(JSON.parse(beforeAnswer('auggie', 'allow', 'ok'))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'ok' } });
    expect(JSON.parse(beforeAnswer('auggie', 'ask', 'wait'))).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.parse(beforeAnswer('auggie', 'allow', 'confined', { ...launch, command: 'assent confine -- npm test' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'confined', updatedInput: { ...launch, command: 'assent confine -- npm test' } },
    });
    expect(deniesWithStderr('auggie')).toBe(true);
    expect(deniesWithExit2('auggie')).toBe(false);
    expect(deniesWithStderr('droid')).toBe(false);
  });

  it('R-HOOK-4 through the hook: the daemon\'s deny is the deny JSON with the reason on stderr, exit 0; its allow a JSON allow; a confined allow rewrites only the command', async () => {
    const denied = await answer({ decision: 'deny', message: 'assent refused auggie/launch-process: policy' });
    expect(denied.exitCode).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'assent refused auggie/launch-process: policy' } });
    expect(denied.stderr).toBe('assent refused auggie/launch-process: policy\n');
    const allowed = await answer({ decision: 'allow', message: 'ok' });
    expect(allowed.exitCode).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    const confined = await answer({ decision: 'allow', message: 'confined', confined: { command: 'assent confine -- npm test' } });
    expect(JSON.parse(confined.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { ...launch, command: 'assent confine -- npm test' } } });
  });
});
