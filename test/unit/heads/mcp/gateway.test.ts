// startGateway over in-memory transports: an SDK Client on one side, SDK
// McpServers as upstreams on the other, a scripted gate in between.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallGate, GateCall, GateDecision } from '../../../../src/heads/mcp/gate.js';
import { startGateway, type Gateway } from '../../../../src/heads/mcp/gateway.js';
import type { UpstreamSpec } from '../../../../src/heads/mcp/upstream.js';
import { silentLogger } from '../../../../src/service/logger.js';

interface Upstream {
  server: McpServer;
  calls: string[];
  serverSide?: Transport;
}

function makeUpstream(name: string): Upstream {
  const calls: string[] = [];
  const server = new McpServer({ name, version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool(
    'echo',
    { description: 'echo', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    ({ text }) => {
      calls.push(`echo:${text}`);
      return { content: [{ type: 'text', text: `${name}:${text}` }] };
    },
  );
  server.registerTool('write', { description: 'writes', inputSchema: { text: z.string() } }, ({ text }) => {
    calls.push(`write:${text}`);
    return { content: [{ type: 'text', text: `${name} wrote ${text}` }] };
  });
  server.registerTool('hang', { description: 'never answers' }, () => new Promise<CallToolResult>(() => undefined));
  server.registerTool(
    'wait',
    { description: 'answers when cancelled' },
    (extra) =>
      new Promise<CallToolResult>((resolve) => {
        calls.push('wait:started');
        extra.signal.addEventListener('abort', () => {
          calls.push('wait:aborted');
          resolve({ content: [] });
        });
      }),
  );
  server.registerTool('ask', { description: 'samples the client' }, async (extra) => {
    const answer = await extra.sendRequest(
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } },
      z.object({ content: z.object({ type: z.string(), text: z.string() }) }).loose(),
    );
    return { content: [{ type: 'text', text: `sampled:${answer.content.text}` }] };
  });
  server.registerResource('readme', `mem://${name}/readme`, { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, text: `readme of ${name}` }],
  }));
  server.registerPrompt(`greet-${name}`, { description: 'greets' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello from ${name}` } }],
  }));
  return { server, calls };
}

/** A gate whose answers the test scripts; records every call it saw. */
class ScriptedGate implements CallGate {
  readonly seen: GateCall[] = [];
  readonly finished: Array<{ callId: string; ok: boolean }> = [];
  /** Allowed calls the gateway withdrew because the client cancelled them before they were forwarded. */
  readonly withdrawn: string[] = [];
  /** Every list of names the gateway said it offers its client (R-HOOK-13). */
  readonly offered: string[][] = [];
  decide: (call: GateCall) => Promise<GateDecision> | GateDecision = () => ({ allowed: true, callId: 'c1' });

  authorize(call: GateCall): Promise<GateDecision> {
    this.seen.push(call);
    return Promise.resolve(this.decide(call));
  }

  finish(callId: string, outcome: { ok: boolean; durationMs: number }): void {
    this.finished.push({ callId, ok: outcome.ok });
  }

  withdraw(callId: string): void {
    this.withdrawn.push(callId);
  }

  toolsOffered(tools: readonly string[]): void {
    this.offered.push([...tools].sort());
  }
}

interface Harness {
  client: Client;
  gateway: Gateway;
  gate: ScriptedGate;
  upstreams: Record<string, Upstream>;
  progress: unknown[];
  fireKeepAlive: () => void;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

interface HarnessOptions {
  keepAliveMs?: number;
  /** When set, the client declares elicitation and answers with this handler. */
  onElicit?: (params: unknown, signal: AbortSignal) => Promise<ElicitResult> | ElicitResult;
}

async function harness(aliases: string[], options: HarnessOptions = {}): Promise<Harness> {
  const upstreams: Record<string, Upstream> = Object.fromEntries(aliases.map((a) => [a, makeUpstream(a)]));
  const gate = new ScriptedGate();
  const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  const timers: Array<() => void> = [];
  const gateway = await startGateway({
    clientTransport: gatewaySide,
    upstreams: aliases.map((alias): UpstreamSpec => ({ alias, command: 'unused' })),
    gate,
    logger: silentLogger,
    keepAliveMs: options.keepAliveMs ?? 10_000,
    setInterval: (fn) => {
      timers.push(fn);
      return fn;
    },
    clearInterval: (handle) => {
      const index = timers.indexOf(handle as () => void);
      if (index !== -1) timers.splice(index, 1);
    },
    createUpstreamTransport: (spec) => {
      const [gatewayEnd, serverEnd] = InMemoryTransport.createLinkedPair();
      const upstream = upstreams[spec.alias] as Upstream;
      upstream.serverSide = serverEnd;
      void upstream.server.connect(serverEnd);
      return gatewayEnd;
    },
  });
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: { sampling: {}, ...(options.onElicit ? { elicitation: { form: {} } } : {}) } },
  );
  const onElicit = options.onElicit;
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, (request, extra) => onElicit(request.params, extra.signal));
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    model: 'fake',
    role: 'assistant',
    content: { type: 'text', text: 'pong' },
  }));
  await client.connect(clientSide);
  open.push(async () => {
    await client.close();
    await gateway.close();
  });
  return { client, gateway, gate, upstreams, progress: [], fireKeepAlive: () => timers.forEach((fn) => fn()) };
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

describe('startGateway, one upstream', () => {
  it('R-MCP-2 keeps tool names and relays an allowed call with its result', async () => {
    const h = await harness(['fs']);
    const tools = await h.client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['ask', 'echo', 'hang', 'wait', 'write']);
    const result = await h.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(text(result)).toBe('fs:hi');
    expect(h.gate.seen[0]).toMatchObject({ server: 'fs', tool: 'echo', args: { text: 'hi' }, annotations: { readOnlyHint: true } });
    expect(h.gate.seen[0]?.caller).toMatchObject({ clientName: 'test-client' });
    expect(h.gate.finished).toEqual([{ callId: 'c1', ok: true }]);
  });

  it('R-MCP-3 arguments that are not an object are refused, never decided as {} and forwarded as they came', async () => {
    const h = await harness(['fs']);
    for (const odd of [['x'], null, 'text']) {
      await expect(h.client.request({ method: 'tools/call', params: { name: 'echo', arguments: odd as never } }, CallToolResultSchema)).rejects.toThrow(/arguments must be an object/);
    }
    expect(h.gate.seen).toEqual([]);
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });

  it('R-MCP-3 a tools/call sent as a notification (no id) never reaches an upstream', async () => {
    const h = await harness(['fs']);
    await h.client.callTool({ name: 'echo', arguments: { text: 'before' } });
    // Record every message the upstream receives from now on.
    const serverSide = h.upstreams['fs']?.serverSide as Transport;
    const received: { method?: string; id?: unknown }[] = [];
    const deliver = serverSide.onmessage;
    serverSide.onmessage = (message, extra) => {
      received.push(message as { method?: string; id?: unknown });
      deliver?.(message, extra);
    };
    await h.client.notification({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'sneaky' } } } as never);
    const result = await h.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    expect(text(result)).toBe('fs:after');
    expect(received.filter((m) => m.method === 'tools/call').map((m) => m.id === undefined)).toEqual([false]);
  });

  it('R-POL-3 fetches tools/list for annotations when the client calls a tool it never listed', async () => {
    const h = await harness(['fs']);
    await h.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    expect(h.gate.seen[0]?.annotations).toEqual({ readOnlyHint: true });
  });

  it('R-MCP-3 a denied call is an isError result naming the reason and the upstream never sees it', async () => {
    const h = await harness(['fs']);
    h.gate.decide = () => ({ allowed: false, reason: 'policy', message: 'policy says no (policy.tools.fs/write)' });
    const result = await h.client.callTool({ name: 'write', arguments: { text: 'secret' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('policy');
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });

  it('R-MCP-3 prefixes the reason when a gate message does not name it', async () => {
    const h = await harness(['fs']);
    h.gate.decide = () => ({ allowed: false, reason: 'consent_denied', message: 'The operator said no.' });
    const result = await h.client.callTool({ name: 'write', arguments: { text: 'a' } });
    expect(text(result)).toBe('consent_denied: The operator said no.');
    expect(Object.keys(result).sort()).toEqual(['content', 'isError']);
  });

  it('R-MCP-5 a gate that throws fails closed with no_consent_channel', async () => {
    const h = await harness(['fs']);
    h.gate.decide = () => Promise.reject(new Error('socket gone'));
    const result = await h.client.callTool({ name: 'write', arguments: { text: 'a' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('no_consent_channel');
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });

  it('R-MCP-4 sends progress keep-alives while the gate waits and then the real result', async () => {
    const h = await harness(['fs']);
    let release!: (d: GateDecision) => void;
    h.gate.decide = () => new Promise((resolve) => (release = resolve));
    const progress: Array<{ progress: number; message?: string }> = [];
    const call = h.client.callTool({ name: 'write', arguments: { text: 'later' } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    await waitFor(() => h.gate.seen.length === 1);
    h.fireKeepAlive();
    h.fireKeepAlive();
    h.fireKeepAlive();
    await waitFor(() => progress.length === 3);
    expect(progress.map((p) => p.progress)).toEqual([1 / 2, 2 / 3, 3 / 4]);
    expect(progress[0]?.message).toContain('fs/write');
    expect(h.upstreams['fs']?.calls).toEqual([]);
    release({ allowed: true });
    expect(text(await call)).toBe('fs wrote later');
    h.fireKeepAlive();
    expect(progress).toHaveLength(3);
  });

  it('R-MCP-4 keeps sending progress on the real timer until the gate answers', async () => {
    const upstream = makeUpstream('fs');
    const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
    let release!: (d: GateDecision) => void;
    const gateway = await startGateway({
      clientTransport: gatewaySide,
      upstreams: [{ alias: 'fs', command: 'unused' }],
      gate: { authorize: () => new Promise((resolve) => (release = resolve)) },
      logger: silentLogger,
      keepAliveMs: 5,
      createUpstreamTransport: () => {
        const [gatewayEnd, serverEnd] = InMemoryTransport.createLinkedPair();
        void upstream.server.connect(serverEnd);
        return gatewayEnd;
      },
    });
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(clientSide);
    open.push(async () => {
      await client.close();
      await gateway.close();
    });
    const progress: number[] = [];
    const call = client.callTool({ name: 'write', arguments: { text: 'x' } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    await waitFor(() => progress.length >= 3);
    release({ allowed: true });
    expect(text(await call)).toBe('fs wrote x');
    expect(progress.every((p, i) => i === 0 || p > (progress[i - 1] as number))).toBe(true);
  });

  it('R-MCP-4 refuses a keep-alive period above 15 s', async () => {
    await expect(harness(['fs'], { keepAliveMs: 15_001 })).rejects.toMatchObject({ type: 'invalid_params' });
  });

  it('cancellation while the gate waits aborts the gate and sends nothing upstream', async () => {
    const h = await harness(['fs']);
    h.gate.decide = (call) =>
      new Promise((resolve) => call.signal.addEventListener('abort', () => resolve({ allowed: true })));
    const controller = new AbortController();
    const call = h.client.callTool({ name: 'write', arguments: { text: 'never' } }, undefined, { signal: controller.signal });
    await waitFor(() => h.gate.seen.length === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => h.gate.seen[0]?.signal.aborted === true);
    await h.client.ping();
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });

  it('(hardening 19.8a) an allow that arrives after the client cancelled is withdrawn from the gate, never forwarded and never left open', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    let release!: (d: GateDecision) => void;
    h.gate.decide = () => new Promise((resolve) => (release = resolve));
    const controller = new AbortController();
    const call = h.client.callTool({ name: 'write', arguments: { text: 'late' } }, undefined, { signal: controller.signal });
    await waitFor(() => h.gate.seen.length === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    await h.client.ping();
    release({ allowed: true, callId: 'late-1' });
    await waitFor(() => h.gate.withdrawn.length === 1);
    expect(h.gate.withdrawn).toEqual(['late-1']);
    expect(h.gate.finished).toEqual([]);
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });

  it('R-MCP-2 relays the cancellation of a forwarded call to the upstream under the upstream id', async () => {
    const h = await harness(['fs']);
    const controller = new AbortController();
    const call = h.client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal });
    await waitFor(() => h.upstreams['fs']?.calls.includes('wait:started') === true);
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => h.upstreams['fs']?.calls.includes('wait:aborted') === true);
    expect(h.gate.finished).toEqual([{ callId: 'c1', ok: false }]);
  });

  it('R-MCP-2 relays server-to-client requests (sampling) with ids mapped both ways', async () => {
    const h = await harness(['fs']);
    const result = await h.client.callTool({ name: 'ask', arguments: {} });
    expect(text(result)).toBe('sampled:pong');
  });

  it('an upstream that dies mid-call gives the client an error, not a hang, and later calls a clear error', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    const hanging = h.client.callTool({ name: 'hang', arguments: {} });
    await waitFor(() => h.gate.seen.length === 1);
    await new Promise((r) => setTimeout(r, 5));
    await h.upstreams['fs']?.serverSide?.close();
    await expect(hanging).rejects.toThrow(/MCP server "fs" stopped/);
    await expect(h.client.listResources()).rejects.toThrow(/MCP server "fs" stopped.*config\.json servers\.fs/);
    expect(h.gate.finished).toEqual([{ callId: 'c1', ok: false }]);
  });
});

describe('startGateway, an upstream that cannot be reached', () => {
  it('a send that fails later (e.g. an HTTP POST refused) answers the client with an error, not a hang', async () => {
    const refusing: Transport = {
      start: () => Promise.resolve(),
      close: () => Promise.resolve(),
      send: () => Promise.reject(new Error('fetch failed: connect ECONNREFUSED 127.0.0.1:1')),
    };
    const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
    const gateway = await startGateway({
      clientTransport: gatewaySide,
      upstreams: [{ alias: 'remote', url: 'http://127.0.0.1:1/mcp' }],
      gate: new ScriptedGate(),
      logger: silentLogger,
      createUpstreamTransport: () => refusing,
    });
    const client = new Client({ name: 'c', version: '1' });
    open.push(async () => {
      await client.close();
      await gateway.close();
    });
    await expect(client.connect(clientSide)).rejects.toThrow(/Could not deliver initialize to MCP server "remote".*ECONNREFUSED.*servers\.remote/);
  });
});

describe('startGateway, elicitation seam (R-MCP-6)', () => {
  it('offers the gate an elicit function only when the client declared elicitation', async () => {
    const without = await harness(['fs']);
    await without.client.callTool({ name: 'echo', arguments: { text: 'a' } });
    expect(without.gate.seen[0]?.elicit).toBeUndefined();
  });

  it('an elicitation the client accepts reaches the gate, which may then allow the call', async () => {
    const asked: unknown[] = [];
    const h = await harness(['fs'], {
      onElicit: (params) => {
        asked.push(params);
        return { action: 'accept', content: { approve: true } };
      },
    });
    h.gate.decide = async (call) => {
      const answer = await call.elicit?.({ message: `Allow ${call.server}/${call.tool}?`, requestedSchema: { type: 'object', properties: {} } }, call.signal);
      return answer?.['action'] === 'accept' ? { allowed: true } : { allowed: false, reason: 'consent_denied', message: 'declined' };
    };
    expect(text(await h.client.callTool({ name: 'write', arguments: { text: 'ok' } }))).toBe('fs wrote ok');
    expect(asked).toEqual([{ message: 'Allow fs/write?', requestedSchema: { type: 'object', properties: {} } }]);
  });

  it('when another channel decides first, the pending elicitation is cancelled on the client', async () => {
    let clientSignal: AbortSignal | undefined;
    const h = await harness(['fs'], {
      onElicit: (_params, signal) => {
        clientSignal = signal;
        return new Promise<ElicitResult>(() => undefined);
      },
    });
    h.gate.decide = async (call) => {
      const elsewhere = new AbortController();
      const pending = call.elicit?.({ message: 'Allow?', requestedSchema: { type: 'object', properties: {} } }, elsewhere.signal);
      await waitFor(() => clientSignal !== undefined);
      elsewhere.abort();
      await expect(pending).rejects.toMatchObject({ type: 'timeout' });
      return { allowed: false, reason: 'consent_denied', message: 'denied on the CLI' };
    };
    const result = await h.client.callTool({ name: 'write', arguments: { text: 'no' } });
    expect(text(result)).toContain('consent_denied');
    await waitFor(() => clientSignal?.aborted === true);
    expect(h.upstreams['fs']?.calls).toEqual([]);
  });
});

describe('startGateway, several upstreams', () => {
  it('R-MCP-2 names tools <alias>__<tool> and routes calls with the alias as policy server', async () => {
    const h = await harness(['alpha', 'beta']);
    const names = (await h.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toContain('alpha__echo');
    expect(names).toContain('beta__write');
    expect(names).not.toContain('echo');
    h.gate.decide = (call) =>
      call.server === 'beta' && call.tool === 'write'
        ? { allowed: false, reason: 'policy', message: 'policy.tools.beta/write = deny' }
        : { allowed: true };
    expect(text(await h.client.callTool({ name: 'alpha__write', arguments: { text: 'a' } }))).toBe('alpha wrote a');
    const denied = await h.client.callTool({ name: 'beta__write', arguments: { text: 'b' } });
    expect(denied.isError).toBe(true);
    expect(h.upstreams['alpha']?.calls).toEqual(['write:a']);
    expect(h.upstreams['beta']?.calls).toEqual([]);
    expect(h.gate.seen.map((c) => `${c.server}/${c.tool}`)).toEqual(['alpha/write', 'beta/write']);
  });

  it('R-HOOK-13 tells the gate every tool name the client is offered, as the client names them, once each upstream list is complete', async () => {
    const h = await harness(['alpha', 'beta']);
    const names = (await h.client.listTools()).tools.map((t) => t.name).sort();
    await waitFor(() => h.gate.offered.some((list) => list.length === names.length));
    expect(h.gate.offered.at(-1)).toEqual(names);
    const single = await harness(['fs']);
    const singleNames = (await single.client.listTools()).tools.map((t) => t.name).sort();
    await waitFor(() => single.gate.offered.length > 0);
    expect(single.gate.offered.at(-1)).toEqual(singleNames);
  });

  it('routes resources and prompts to the upstream that listed them', async () => {
    const h = await harness(['alpha', 'beta']);
    const resources = (await h.client.listResources()).resources.map((r) => r.uri).sort();
    expect(resources).toEqual(['mem://alpha/readme', 'mem://beta/readme']);
    const read = await h.client.readResource({ uri: 'mem://beta/readme' });
    expect(read.contents[0]).toMatchObject({ text: 'readme of beta' });
    const prompt = await h.client.getPrompt({ name: 'greet-alpha' });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'hello from alpha' });
    await h.client.setLoggingLevel('debug');
    await h.client.ping();
  });

  it('R-MCP-3 (hardening 19.5) a tool the upstream does not list is refused with -32602 before the gate: no policy, no approval, nothing forwarded', async () => {
    const h = await harness(['fs']);
    // Not listed yet: the gateway lists the tools itself before it decides anything.
    await expect(h.client.callTool({ name: 'fs__write_file', arguments: { text: 'x' } })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('does not list it') });
    // Listed already: refused in the same turn.
    await h.client.listTools();
    const refused = h.client.request({ method: 'tools/call', params: { name: 'nope', arguments: {} } }, CallToolResultSchema);
    await expect(refused).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool "nope".*It lists: ask, echo, hang, wait, write/) });
    expect(h.gate.seen).toEqual([]);
    expect(h.upstreams['fs']?.calls).toEqual([]);
    expect(text(await h.client.callTool({ name: 'echo', arguments: { text: 'still' } }))).toBe('fs:still');
    expect(h.gate.seen.map((call) => call.tool)).toEqual(['echo']);
  });

  it('R-MCP-3 (hardening 19.5) several upstreams: an alias with a tool it does not list is refused -32602 naming the prefixed names, before the gate', async () => {
    const h = await harness(['alpha', 'beta']);
    await expect(h.client.callTool({ name: 'alpha__nope', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('alpha__echo') });
    expect(h.gate.seen).toEqual([]);
  });

  it('refuses an unknown tool name with a message naming the expected form', async () => {
    const h = await harness(['alpha', 'beta']);
    await expect(h.client.callTool({ name: 'echo', arguments: {} })).rejects.toThrow(/<alias>__<tool>.*alpha, beta/);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('condition not met');
}

describe('startGateway, arguments and methods the gate could not see as the upstream does', () => {
  /** Records every message the upstream receives from now on, as the JSON text that would cross a real transport. */
  function recordUpstream(h: Harness, alias = 'fs'): string[] {
    const serverSide = h.upstreams[alias]?.serverSide as Transport;
    const received: string[] = [];
    const deliver = serverSide.onmessage;
    serverSide.onmessage = (message, extra) => {
      received.push(JSON.stringify(message));
      deliver?.(message, extra);
    };
    return received;
  }

  /** A tools/call whose params come from raw JSON text, so an own "__proto__" key or a lone surrogate survives. */
  function rawCall(h: Harness, paramsJson: string): Promise<unknown> {
    return h.client.request({ method: 'tools/call', params: JSON.parse(paramsJson) as never }, CallToolResultSchema);
  }

  it('R-MCP-3 (hardening 1) an own "__proto__" key anywhere in the arguments is refused with its path; neither the gate nor the upstream sees the call', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    const received = recordUpstream(h);
    const cases: [string, string][] = [
      ['{"name":"write","arguments":{"path":"/srv/ok","__proto__":{"x":1}}}', 'at /__proto__'],
      ['{"name":"write","arguments":{"path":"/srv/ok","nested":{"__proto__":{"x":1}}}}', 'at /nested/__proto__'],
      ['{"name":"write","arguments":{"list":[1,{"__proto__":null}]}}', 'at /list/1/__proto__'],
    ];
    for (const [params, where] of cases) {
      const refusal = rawCall(h, params);
      await expect(refusal).rejects.toThrow(where);
      await expect(refusal).rejects.toThrow(/"__proto__".*not forwarded/);
      await expect(refusal).rejects.toMatchObject({ code: -32602, data: { type: 'invalid_params' } });
    }
    expect(h.gate.seen).toEqual([]);
    expect(received).toEqual([]);
    expect(text(await h.client.callTool({ name: 'write', arguments: { text: 'clean' } }))).toBe('fs wrote clean');
  });

  it('R-MCP-3 (hardening 2) a lone surrogate (value or key), 10,000-deep nesting or a tool name with a lone surrogate is refused before the gate; the next call runs', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    const received = recordUpstream(h);
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const cases: [string, RegExp][] = [
      ['{"name":"write","arguments":{"text":"\\ud800"}}', /at \/text: .*lone UTF-16 surrogate/],
      ['{"name":"write","arguments":{"text":"ok","m":{"\\udc00x":1}}}', /at \/m\/\\udc00x: .*lone UTF-16 surrogate/],
      ['{"name":"write","arguments":{"text":["\\ud83d\\ude00","\\ude00"]}}', /at \/text\/1: /],
      [`{"name":"write","arguments":${deep}}`, /nest deeper than 64 levels/],
      [`{"name":"write","arguments":{"v":${'['.repeat(64)}${']'.repeat(64)}}}`, /nest deeper than 64 levels/],
      ['{"name":"wri\\ud800te","arguments":{}}', /tool name.*lone UTF-16 surrogate/],
    ];
    for (const [params, message] of cases) {
      const refusal = rawCall(h, params);
      await expect(refusal).rejects.toThrow(message);
      await expect(refusal).rejects.toMatchObject({ code: -32602, data: { type: 'invalid_params' } });
    }
    expect(h.gate.seen).toEqual([]);
    expect(received).toEqual([]);
    // 63 levels below the arguments object is the deepest accepted, and a well-formed pair is fine.
    const deepest = `{"v":${'['.repeat(63)}${']'.repeat(63)},"emoji":"\\ud83d\\ude00","text":"x"}`;
    expect(text((await rawCall(h, `{"name":"write","arguments":${deepest}}`)) as CallToolResult)).toBe('fs wrote x');
    expect(h.gate.seen).toHaveLength(1);
  });

  it('R-MCP-3 (hardening 1) the upstream receives exactly the arguments the gate decided', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    const received = recordUpstream(h);
    await rawCall(h, '{"name":"write","arguments":{"text":"t","n":1e2,"dup":1,"dup":2}}');
    const forwarded = JSON.parse(received.find((m) => m.includes('tools/call')) ?? '{}') as { params?: { arguments?: unknown } };
    expect(forwarded.params?.arguments).toEqual(h.gate.seen[0]?.args);
    expect(forwarded.params?.arguments).toEqual({ text: 't', n: 100, dup: 2 });
  });

  it('R-MCP-3 (hardening 3) a method that folds to tools/call is refused (method not found) and never relayed, as a request or a notification', async () => {
    const h = await harness(['fs']);
    await h.client.listTools();
    const received = recordUpstream(h);
    const lookalikes = ['Tools/Call', 'TOOLS/CALL', ' tools/call', 'tools/call\n', 'tools/call\u0000', 'tools/\u200dcall', '\ufefftools/call', '\u2003tools/call', 'ｔｏｏｌｓ／ｃａｌｌ', 'tool\u017f/call', 'tools.call', 'tools_call', 'tools//call'];
    for (const method of lookalikes) {
      const refusal = h.client.request({ method, params: { name: 'write', arguments: { text: 'sneaky' } } }, CallToolResultSchema);
      await expect(refusal, JSON.stringify(method)).rejects.toMatchObject({ code: -32601 });
      await expect(refusal).rejects.toThrow(/exactly "tools\/call"/);
      await h.client.notification({ method, params: { name: 'write', arguments: { text: 'sneaky' } } } as never);
    }
    await h.client.ping();
    expect(h.gate.seen).toEqual([]);
    expect(h.upstreams['fs']?.calls).toEqual([]);
    expect(received.filter((m) => !m.includes('"ping"'))).toEqual([]);
    // Methods that merely share a prefix are not lookalikes and still pass through.
    await expect(h.client.request({ method: 'tools/callback', params: {} }, CallToolResultSchema)).rejects.toMatchObject({ code: -32601 });
    expect(received.some((m) => m.includes('"tools/callback"'))).toBe(true);
  });
});
