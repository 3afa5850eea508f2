// `assent action mcp POLICY REQUEST` from the built binary, driven by the
// official SDK client: ask and deny never launch the child, allow runs it once
// per call, and the tool result carries only the redacted report.
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeActionDir, sentinelAction, writePolicy, writeRequest, EXECUTION_KEYS, REPORT_KEYS } from './actionFixtures.js';
import type { ActionDir } from './actionFixtures.js';
import { assentBin, requireBuild, waitUntil } from './mcpFixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => requireBuild());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(d: ActionDir): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [assentBin, 'action', 'mcp', d.policy, d.request],
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: 'action-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid as number;
  cleanups.push(async () => {
    await client.close();
    await waitUntil(() => !alive(pid), 5000);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  return { client, pid };
}

function dir(): ActionDir {
  const d = makeActionDir();
  cleanups.push(() => d.cleanup());
  return d;
}

function reportOf(result: unknown): Record<string, unknown> {
  const first = (result as CallToolResult).content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text) as Record<string, unknown>;
}

function allText(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('assent action mcp (SPEC §6)', () => {
  it('offers exactly one tool, execute_selected, with no arguments', async () => {
    const d = dir();
    writeRequest(d, sentinelAction(d));
    writePolicy(d, 'ask');
    const { client } = await start(d);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['execute_selected']);
    expect(Object.keys(tools[0]?.inputSchema.properties ?? {})).toEqual([]);
  });

  it('R-EXEC-5 an ask decision never launches the child and names policy-ask', async () => {
    const d = dir();
    writeRequest(d, sentinelAction(d));
    writePolicy(d, 'ask');
    const { client } = await start(d);
    const result = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(result.isError).toBe(true);
    expect(reportOf(result)).toMatchObject({ decision: 'deny', reason: 'policy-ask', execution: { state: 'not-started' } });
    expect(allText(result)).toContain('policy-ask');
    // A second call is no different: ask never launches here.
    await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-EXEC-5 a deny decision never launches the child', async () => {
    const d = dir();
    writeRequest(d, sentinelAction(d));
    writePolicy(d, 'deny');
    const { client } = await start(d);
    const result = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(result.isError).toBe(true);
    expect(reportOf(result)).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-EXEC-4 allow runs the action once per call and returns only the redacted report', async () => {
    const d = dir();
    const action = sentinelAction(d, [], { SECRET_VALUE: 'hunter2-secret' });
    writeRequest(d, action);
    writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
    const { client } = await start(d);
    const result = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(result.isError).toBe(false);
    expect(d.sentinelLines()).toBe(1);
    const report = reportOf(result);
    expect(Object.keys(report).sort()).toEqual(REPORT_KEYS);
    expect(Object.keys(report['execution'] as object).sort()).toEqual(EXECUTION_KEYS);
    expect(report).toMatchObject({ decision: 'allow', reason: 'child-exited', execution: { state: 'exited', exitCode: 0 } });
    const text = allText(result);
    expect(text).not.toContain(d.dir);
    expect(text).not.toContain('hunter2-secret');
    expect(text).not.toContain('v1:sha256');
    await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(d.sentinelLines()).toBe(2);
  });

  it('exits 0 by itself when the client closes its stdin', async () => {
    const d = dir();
    writeRequest(d, sentinelAction(d));
    writePolicy(d, 'ask');
    const child = spawn(process.execPath, [assentBin, 'action', 'mcp', d.policy, d.request], { stdio: ['pipe', 'pipe', 'pipe'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    child.stdin.end();
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
