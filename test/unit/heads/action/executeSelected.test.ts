// The execute_selected server over an in-memory transport pair: one tool with
// no arguments, calls answered one at a time, isError exactly when the report
// would not exit 0, and a hint the agent can act on for a refusal.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { launchReport, refusalReport } from '../../../../src/exec/report.js';
import type { ExecReport } from '../../../../src/exec/report.js';
import { createExecuteSelectedServer, reportToolResult } from '../../../../src/heads/action/executeSelected.js';
import type { ExecuteSelected } from '../../../../src/heads/action/executeSelected.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connected(execute: ExecuteSelected): Promise<Client> {
  const server = createExecuteSelectedServer(execute, 'test');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'unit', version: '1.0.0' });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

const exited0 = launchReport('child-exited', {
  state: 'exited',
  exitCode: 0,
  termination: 'not-requested',
  stdoutBytes: 0,
  stderrBytes: 0,
  outputComplete: true,
});

describe('execute_selected', () => {
  it('SPEC §6 is the only tool and takes no arguments', async () => {
    const client = await connected(async () => exited0);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['execute_selected']);
    expect(tools[0]?.inputSchema.properties ?? {}).toEqual({});
  });

  it('overlapping calls run one after another', async () => {
    let running = 0;
    let most = 0;
    const client = await connected(async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 20));
      running -= 1;
      return exited0;
    });
    await Promise.all([1, 2, 3].map(() => client.callTool({ name: 'execute_selected', arguments: {} })));
    expect(most).toBe(1);
  });

  it('R-EXEC-6 isError is false only for an allowed child that exited 0; refusals name their reason', () => {
    expect(reportToolResult(exited0).isError).toBe(false);
    const failed: ExecReport = { ...exited0, execution: { ...exited0.execution, exitCode: 3 } };
    expect(reportToolResult(failed).isError).toBe(true);
    const ask = reportToolResult(refusalReport('policy-ask')) as CallToolResult;
    expect(ask.isError).toBe(true);
    expect(JSON.parse((ask.content[0] as { text: string }).text)).toEqual(refusalReport('policy-ask'));
    expect((ask.content[1] as { text: string }).text).toMatch(/^policy-ask: .*never launches/);
  });
});
