// One fixture proposal seen through every head (R-OPS-2, R-OPS-3, R-WEB-5): a
// real gateway session files a prompt call; `assent pending --json`, the HTTP
// API and the MCP head (`assent mcp --assent-tools`) return identical
// approvals. The live gateway's tool list carries no human-decision operation.
import { runCliInTerminal } from '../helpers/pty.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationToolName } from '../../src/heads/mcp/operationTools.js';
import { ApprovalViewSchema } from '../../src/operations/approvalOperations.js';
import { declaredManifest } from '../../src/operations/manifest.js';
import type { TempHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function mcpClient(home: TempHome, args: string[]): Promise<Client> {
  return (await connectGateway(cleanups, home, args)).client;
}

function resultText(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('one proposal through every head', () => {
  it('R-OPS-2 preview, parameters and result shape are identical through CLI --json, the HTTP API and the MCP head; R-OPS-3 no decision tool on MCP', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } });
    const client = await mcpClient(home, ['--assent-tools']);

    // The live gateway's tool list: upstream tools plus non-decision assent operations only.
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('write_file');
    expect(names).toContain('assent__approvals_list');
    const manifest = declaredManifest();
    for (const entry of manifest.filter((operation) => operation.class === 'human-decision')) {
      expect(names).not.toContain(operationToolName(entry.name));
      expect(names).not.toContain(entry.name);
    }
    for (const entry of manifest.filter((operation) => operation.exposure.mcp !== true)) expect(names).not.toContain(operationToolName(entry.name));

    const args = { path: join(dir, 'parity.txt'), content: 'same \u202e everywhere\nline two' };
    const call = client.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 60_000 }).catch(() => undefined);
    let cli: unknown[] = [];
    for (let i = 0; i < 400 && cli.length === 0; i += 1) {
      const pending = await home.runCli(['pending', '--json']);
      cli = (JSON.parse(pending.stdout) as { data: unknown[] }).data;
      if (cli.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(cli).toHaveLength(1);

    const web = (JSON.parse((await runCliInTerminal(home, ['web', '--json'])).stdout) as { data: { url: string } }).data;
    const tokenFile = join(home.home, '..', 'parity.token');
    expect((await runCliInTerminal(home, ['token', 'create', '--name', 'parity', '--ttl', '10m', '--out', tokenFile])).code).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const response = await fetch(`${web.url}api/v1/approvals.list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const http = (await response.json()) as unknown[];

    const viaMcp = await client.callTool({ name: 'assent__approvals_list', arguments: {} });
    expect(viaMcp.isError).toBeFalsy();
    const mcp = JSON.parse(resultText(viaMcp)) as unknown[];

    expect(http).toEqual(cli);
    expect(mcp).toEqual(cli);
    const parsed = z.array(ApprovalViewSchema).parse(cli);
    expect(parsed[0]).toMatchObject({ server: 'fs', tool: 'write_file', args, state: 'pending' });
    // The strict schema keeps no field the others lack.
    expect(Object.keys(parsed[0] ?? {}).sort()).toEqual(Object.keys((cli[0] ?? {}) as object).sort());

    // A decision through the MCP head is not even addressable; the approval stays pending.
    const id = (cli[0] as { id: string }).id;
    const decide = await client.callTool({ name: 'assent__approvals_decide', arguments: { id, behavior: 'allow' } });
    expect(decide.isError).toBe(true);
    expect(resultText(decide)).toContain('not_found');
    const after = JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string; state: string }[] };
    expect(after.data.map((approval) => approval.id)).toEqual([id]);

    expect((await home.runCli(['deny', id, '--reason', 'parity test done'])).code).toBe(0);
    await call;
  });

  it('R-MCP-2 without --assent-tools the gateway adds no tool of its own', async () => {
    const { home } = await startFsStack(cleanups, {});
    const client = await mcpClient(home, []);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('write_file');
    expect(names.filter((name) => name.startsWith('assent__'))).toEqual([]);
  });
});
