// R-HOOK-5 and R-HOOK-13 end to end (hardening 19.3): the hook passes an agent's
// call to the gateway's own tools without asking again, and knows them by what the
// running `assent mcp` lists, never by the name. Codex sends no MCP server field,
// so a name like `mcp__assent__fs__write_file` must not be taken for the gateway's.
import { afterEach, describe, expect, it } from 'vitest';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';
import { answerOf, runHook } from '../helpers/hook.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A Codex PreToolUse event for an MCP tool, as Codex sends it: no server field beside the name. */
function codexMcpEvent(tool: string): Record<string, unknown> {
  return {
    session_id: 'codex-session',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/work/project',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: { path: '/work/project/x', content: 'x' },
    tool_use_id: `call_${Math.random().toString(36).slice(2)}`,
  };
}

/** What the hook answered: Codex's allow may be an empty stdout (R-HOOK-13), anything else is the agent's JSON. */
async function decide(tool: string, env: NodeJS.ProcessEnv): Promise<{ decision: string; reason: string; code: number | null }> {
  const result = await runHook(['codex'], codexMcpEvent(tool), env);
  if (result.stdout.trim() === '') return { decision: result.code === 0 ? 'allow' : 'none', reason: result.stderr, code: result.code };
  return { ...answerOf(result.stdout), code: result.code };
}

describe('the gateway is recognised by identity, not by name (R-HOOK-13)', () => {
  it('R-HOOK-13 codex: mcp__assent__write_file passes while a live gateway lists write_file; mcp__assent__fs__write_file is judged like any MCP tool; after the gateway exits, neither passes', async () => {
    // Every hook-judged name here is denied by policy: only a call recognised as the gateway's passes.
    const { home } = await startFsStack(cleanups, {
      policy: { default: 'allow', tools: { 'codex/mcp__assent__write_file': 'deny', 'codex/mcp__assent__fs__write_file': 'deny' } },
    });
    const { client } = await connectGateway(cleanups, home);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('write_file');

    // The gateway reports its list to the daemon just after listing it; the first hook call may race that report.
    await expect.poll(async () => (await decide('mcp__assent__write_file', home.env)).decision, { timeout: 10_000 }).toBe('allow');
    expect(await decide('mcp__assent__write_file', home.env)).toMatchObject({ decision: 'allow', code: 0 });

    const lookalike = await decide('mcp__assent__fs__write_file', home.env);
    expect(lookalike).toMatchObject({ decision: 'deny', code: 0 });
    expect(lookalike.reason).toContain('codex/mcp__assent__fs__write_file');

    await client.close();
    await expect.poll(async () => (await decide('mcp__assent__write_file', home.env)).decision, { timeout: 10_000 }).toBe('deny');
  });
});
