// R-HOOK-14 for Factory Droid: its events become agent actions with the right
// kinds, paths and MCP names; its answers are Claude-style, an allow is empty
// (Droid's "allow" would skip its own autonomy check), a deny adds exit 2 (which
// wins over another hook's allow in Droid), a confined allow is updatedInput
// without a permissionDecision.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentActionKind, agentToolId, gatewayToolCandidate, isBookkeepingTool, isRewritingAgent, mcpToolOf, parseAgentName } from '../../../../src/core/agent/agentAction.js';
import { actionPaths } from '../../../../src/core/agent/agentTargets.js';
import { beforeAnswer, deniesWithExit2 } from '../../../../src/heads/hook/hookAnswer.js';
import { parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';
import { runHook } from '../../../../src/heads/hook/hookRun.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stand-in daemon that answers every agents.authorize with `result`. */
async function daemonAnswering(result: Record<string, unknown>): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'as-droid-'));
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

const event = (tool: string, input: Record<string, unknown>): string =>
  JSON.stringify({ session_id: 's1', transcript_path: '/h/.factory/sessions/s1.jsonl', cwd: '/w', permission_mode: 'auto-high', hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input });

async function answer(result: Record<string, unknown>): Promise<Awaited<ReturnType<typeof runHook>>> {
  const home = await daemonAnswering(result);
  return runHook(['droid', '--timeout', '60'], {
    readStdin: () => Promise.resolve({ text: event('Execute', { command: 'npm test', summary: 's', riskLevel: 'low', riskLevelReason: 'r' }), oversized: false }),
    env: { ASSENT_HOME: home },
    cwd: () => '/w',
  });
}

describe('R-HOOK-14 Factory Droid', () => {
  it('R-HOOK-2 names and kinds: Execute is the shell; Read/LS/Glob/Grep read; Create/Edit/MultiEdit/ApplyPatch write; FetchUrl fetches; Script is other', () => {
    expect(parseAgentName('droid')).toBe('droid');
    expect(agentToolId('droid', 'Execute')).toBe('droid/Execute');
    expect(['Execute', 'Read', 'LS', 'Glob', 'Grep', 'Create', 'Edit', 'MultiEdit', 'ApplyPatch', 'FetchUrl', 'Script', 'WebSearch'].map((tool) => agentActionKind('droid', tool))).toEqual([
      'shell', 'read', 'read', 'read', 'read', 'write', 'write', 'write', 'write', 'fetch', 'other', 'other',
    ]);
    expect(['TodoWrite', 'Task', 'TaskOutput', 'TaskStop', 'ToolSearch'].every((tool) => isBookkeepingTool('droid', tool))).toBe(true);
    expect(isBookkeepingTool('droid', 'Script')).toBe(false);
    expect(isRewritingAgent('droid')).toBe(true);
  });

  it('R-HOOK-2 MCP tools are <server>___<tool>; a connected app\'s <app>__<capability> and the built-in names are not', () => {
    expect(mcpToolOf('droid', 'everything___echo')).toEqual({ server: 'everything', tool: 'echo' });
    expect(agentActionKind('droid', 'everything___echo')).toBe('mcp');
    expect(mcpToolOf('droid', 'slack__search')).toBeUndefined();
    expect(mcpToolOf('droid', 'Execute')).toBeUndefined();
    expect(gatewayToolCandidate('droid', 'assent___fs__write_file')).toBe('fs__write_file');
  });

  it('R-PATH-1 the paths of its read and write tools, a Glob\'s patterns included; ApplyPatch by the files its patch names', () => {
    expect(actionPaths({ agent: 'droid', tool: 'Read', input: { file_path: '/w/a' } })).toEqual({ paths: ['/w/a'] });
    expect(actionPaths({ agent: 'droid', tool: 'LS', input: { directory_path: '/w' } })).toEqual({ paths: ['/w'] });
    expect(actionPaths({ agent: 'droid', tool: 'LS', input: {} })).toEqual({ paths: ['.'] });
    expect(actionPaths({ agent: 'droid', tool: 'Glob', input: { patterns: ['*.ts', '~/.ssh/*', '!node_modules/**'], folder: '/w' } })).toEqual({ paths: ['/w', '~/.ssh'] });
    expect(actionPaths({ agent: 'droid', tool: 'Glob', input: { patterns: '../../etc/*' } })).toEqual({ paths: ['.', './../../etc'] });
    expect(actionPaths({ agent: 'droid', tool: 'Grep', input: { pattern: 'x', path: '/w', glob_pattern: '/etc/*.conf' } })).toEqual({ paths: ['/w', '/etc'], recursive: true });
    expect(actionPaths({ agent: 'droid', tool: 'Create', input: { file_path: '/w/b', content: 'x' } })).toEqual({ paths: ['/w/b'] });
    expect(actionPaths({ agent: 'droid', tool: 'ApplyPatch', input: { input: '*** Begin Patch\n*** Update File: /w/c.ts\n@@\n-a\n+b\n*** End Patch' } })).toEqual({ paths: ['/w/c.ts'] });
    expect(actionPaths({ agent: 'droid', tool: 'Glob', input: { patterns: [1] } })).toMatchObject({ unknown: 'an entry of "patterns" is not a string' });
  });

  it('R-HOOK-2 R-HOOK-6 its PreToolUse (no tool_use_id) is an action; its PostToolUse, whose tool_response is a string, an end', () => {
    expect(parseHookEvent('droid', 'before', event('Create', { file_path: '/w/a', content: 'x' }), '/x')).toEqual({
      ok: true,
      mode: 'before',
      event: 'PreToolUse',
      action: { agent: 'droid', sessionId: 's1', cwd: '/w', tool: 'Create', kind: 'write', input: { file_path: '/w/a', content: 'x' } },
    });
    const after = JSON.stringify({ ...(JSON.parse(event('Execute', { command: 'ls' })) as object), hook_event_name: 'PostToolUse', tool_response: 'Command completed successfully\n\n[Process exited with code 0]' });
    expect(parseHookEvent('droid', 'after', after, '/x')).toMatchObject({ ok: true, mode: 'after', end: { agent: 'droid', tool: 'Execute', outcome: 'ok' } });
  });

  it('R-HOOK-1 answers: a deny is Claude-style hookSpecificOutput; an allow is empty; ask is a deny; a confined allow is updatedInput without a permissionDecision', () => {
    expect(JSON.parse(beforeAnswer('droid', 'deny', 'no'))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' } });
    expect(beforeAnswer('droid', 'allow', 'ok')).toBe('');
    expect(JSON.parse(beforeAnswer('droid', 'ask', 'wait'))).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.parse(beforeAnswer('droid', 'allow', 'confined', { command: 'assent confine -- npm test', summary: 's' }))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'assent confine -- npm test', summary: 's' } } });
    expect(deniesWithExit2('droid')).toBe(true);
    expect(deniesWithExit2('claude-code')).toBe(false);
  });

  it('R-HOOK-4 through the hook: the daemon\'s deny is the deny JSON, the reason on stderr and exit 2; its allow is exit 0 with nothing; a confined allow rewrites the command', async () => {
    const denied = await answer({ decision: 'deny', message: 'assent refused droid/Execute: policy' });
    expect(denied.exitCode).toBe(2);
    expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'assent refused droid/Execute: policy' } });
    expect(denied.stderr).toBe('assent refused droid/Execute: policy\n');
    const allowed = await answer({ decision: 'allow', message: 'ok' });
    expect(allowed).toEqual({ stdout: '', exitCode: 0 });
    const confined = await answer({ decision: 'allow', message: 'confined', confined: { command: 'assent confine -- npm test' } });
    expect(confined.exitCode).toBe(0);
    expect(JSON.parse(confined.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'assent confine -- npm test', summary: 's', riskLevel: 'low', riskLevelReason: 'r' } } });
  });
});
