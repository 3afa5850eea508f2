// R-MCP-2: one suite, run two ways. The same SDK Client talks to
// server-everything directly and through the built `assent mcp` (policy allow);
// every feature must give the same result both ways.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directTransport, everythingServer, gatewayTransport, makeHome, processesWith, requireBuild, waitUntil, type TempHome } from './mcpFixtures.js';

interface Seen {
  sampling: unknown[];
  elicitation: unknown[];
}

interface Way {
  name: 'direct' | 'gateway';
  client: Client;
  seen: Seen;
}

function makeClient(seen: Seen): Client {
  const client = new Client(
    { name: 'transparency-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    seen.sampling.push(request.params);
    return { model: 'fake-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    seen.elicitation.push(request.params);
    return { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///srv/data', name: 'data' }] }));
  return client;
}

let home: TempHome;
const ways: Way[] = [];

beforeAll(async () => {
  requireBuild();
  home = makeHome((marker) => ({
    servers: { everything: everythingServer(marker) },
    policy: { default: 'allow', destructive: 'allow' },
  }));
  const direct = directTransport(process.execPath, everythingServer(home.marker).args);
  const gateway = gatewayTransport(home.home);
  for (const [name, spawned] of [
    ['direct', direct],
    ['gateway', gateway],
  ] as const) {
    const seen: Seen = { sampling: [], elicitation: [] };
    const client = makeClient(seen);
    await client.connect(spawned.transport);
    ways.push({ name, client, seen });
  }
});

afterAll(async () => {
  for (const way of ways) await way.client.close();
  await waitUntil(() => processesWith(home.marker).length === 0);
  home.cleanup();
});

/** Runs `operation` both ways and returns [direct, gateway]. */
async function bothWays<T>(operation: (way: Way) => Promise<T>): Promise<[T, T]> {
  const [direct, gateway] = ways as [Way, Way];
  return [await operation(direct), await operation(gateway)];
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

describe('R-MCP-2 assent mcp is transparent in front of server-everything', () => {
  it('initialize: same server info, capabilities and instructions', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => ({
      version: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions(),
    }));
    expect(direct.version?.name).toBe('mcp-servers/everything');
    expect(gateway).toEqual(direct);
  });

  it('tools/list: same tools, names unchanged with one upstream', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => (await client.listTools()).tools);
    expect(direct.map((t) => t.name)).toContain('echo');
    expect(direct.map((t) => t.name)).toContain('trigger-sampling-request');
    expect(gateway).toEqual(direct);
  });

  it('tools/call: same result for a plain tool', async () => {
    const [direct, gateway] = await bothWays(({ client }) => client.callTool({ name: 'echo', arguments: { message: 'hello' } }));
    expect(text(direct)).toContain('hello');
    expect(gateway).toEqual(direct);
  });

  it('resources/list, resources/read and resources/templates/list', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => {
      const list = await client.listResources();
      const first = list.resources[0];
      const read = first === undefined ? undefined : await client.readResource({ uri: first.uri });
      const templates = await client.listResourceTemplates();
      return { list, read, templates };
    });
    expect(direct.list.resources.length).toBeGreaterThan(0);
    expect(direct.read?.contents.length).toBeGreaterThan(0);
    expect(direct.templates.resourceTemplates.length).toBeGreaterThan(0);
    expect(gateway).toEqual(direct);
  });

  it('prompts/list, prompts/get and completion/complete', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => ({
      list: await client.listPrompts(),
      simple: await client.getPrompt({ name: 'simple-prompt' }),
      withArgs: await client.getPrompt({ name: 'completable-prompt', arguments: { department: 'Sales', name: 'Eve' } }),
      completion: await client.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'name', value: '' },
        context: { arguments: { department: 'Engineering' } },
      }),
    }));
    expect(direct.completion.completion.values).toEqual(['Alice', 'Bob', 'Charlie']);
    expect(gateway).toEqual(direct);
  });

  it('logging/setLevel and ping', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => ({
      setLevel: await client.setLoggingLevel('debug'),
      ping: await client.ping(),
    }));
    expect(gateway).toEqual(direct);
  });

  it('a long-running tool reports the same progress notifications and result', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => {
      const progress: Progress[] = [];
      const result = await client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      // Normalised: the SDK client dispatches notifications a microtask after a response that arrives in the
      // same read, so the last step's notification may be dropped as "unknown token" — directly as well as
      // through the gateway. Every earlier step must arrive, in order, with identical content.
      return { progress: progress.slice(0, 2), lastSeen: progress.length >= 2, result };
    });
    expect(direct.progress.map((p) => p.progress)).toEqual([1, 2]);
    expect(gateway).toEqual(direct);
  });

  it('cancellation: an aborted call rejects the same way and the connection keeps working', async () => {
    const [direct, gateway] = await bothWays(async ({ client }) => {
      const controller = new AbortController();
      const progress: Progress[] = [];
      const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 50 } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          progress.push(p);
          if (progress.length === 1) controller.abort('operator changed their mind');
        },
      });
      const outcome = await call.then(
        () => 'resolved',
        (error: unknown) => String(error),
      );
      return { outcome, after: await client.callTool({ name: 'echo', arguments: { message: 'still here' } }) };
    });
    expect(direct.outcome).not.toBe('resolved');
    expect(gateway).toEqual(direct);
  });

  it('server-to-client sampling/createMessage reaches the client and its answer the server', async () => {
    const [direct, gateway] = await bothWays(async ({ client, seen }) => ({
      result: await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } }),
      request: seen.sampling.at(-1),
    }));
    expect(text(direct.result)).toContain('a sampled answer');
    expect(gateway).toEqual(direct);
  });

  it('server-to-client elicitation/create reaches the client and its answer the server', async () => {
    const [direct, gateway] = await bothWays(async ({ client, seen }) => ({
      result: await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }),
      request: seen.elicitation.at(-1),
    }));
    expect(text(direct.result)).toContain('Ada Lovelace');
    expect(gateway).toEqual(direct);
  });

  it('server-to-client roots/list is answered by the client', async () => {
    const [direct, gateway] = await bothWays(({ client }) => client.callTool({ name: 'get-roots-list', arguments: {} }));
    expect(text(direct)).toContain('file:///srv/data');
    expect(gateway).toEqual(direct);
  });
});
