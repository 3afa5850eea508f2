// The relay's fast path (SPEC §10 design note) with line-framed links on both
// sides, as `assent mcp` runs over stdio: the test writes raw lines as the
// client and as the upstream, and reads exactly what the gateway wrote.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallGate, GateCall } from '../../../../src/heads/mcp/gate.js';
import { startGateway, type Gateway } from '../../../../src/heads/mcp/gateway.js';
import { LineLink } from '../../../../src/heads/mcp/lineLink.js';
import { silentLogger } from '../../../../src/service/logger.js';

/** One side of a line-framed conversation: lines written to the gateway, lines read from it. */
class RawPeer {
  readonly lines: string[] = [];
  private buffer = '';

  constructor(
    readonly toGateway: PassThrough,
    fromGateway: PassThrough,
  ) {
    fromGateway.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, newline));
        this.buffer = this.buffer.slice(newline + 1);
      }
    });
  }

  write(line: string): void {
    this.toGateway.write(`${line}\n`);
  }

  parsed(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Waits until a line satisfies `match`; returns it. */
  async next(match: (message: Record<string, unknown>, line: string) => boolean): Promise<string> {
    for (let i = 0; i < 500; i++) {
      const found = this.lines.find((line) => match(JSON.parse(line) as Record<string, unknown>, line));
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error(`no matching line; saw ${JSON.stringify(this.lines)}`);
  }
}

interface Stack {
  client: RawPeer;
  upstream: RawPeer;
  gateway: Gateway;
  seen: GateCall[];
}

const open: Gateway[] = [];
afterEach(async () => {
  for (const gateway of open.splice(0)) await gateway.close();
});

const TOOLS = '{"jsonrpc":"2.0","id":"ID","result":{"tools":[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}';

async function stack(gate?: CallGate): Promise<Stack> {
  const [clientIn, clientOut, upstreamIn, upstreamOut] = [new PassThrough(), new PassThrough(), new PassThrough(), new PassThrough()];
  const seen: GateCall[] = [];
  const gateway = await startGateway({
    clientTransport: new LineLink(clientIn, clientOut, { peer: 'the MCP client', closeOnEnd: true }),
    upstreams: [{ alias: 'rec', command: 'unused' }],
    gate: gate ?? {
      authorize: (call) => {
        seen.push(call);
        return Promise.resolve({ allowed: true });
      },
    },
    logger: silentLogger,
    createUpstreamTransport: () => new LineLink(upstreamOut, upstreamIn, { peer: 'MCP server "rec"' }),
  });
  open.push(gateway);
  const client = new RawPeer(clientIn, clientOut);
  const upstream = new RawPeer(upstreamOut, upstreamIn);
  // The upstream answers tools/list (for annotations) under whatever id the gateway used.
  upstreamIn.on('data', () => {
    for (const message of upstream.parsed()) {
      if (message['method'] === 'tools/list' && !answered.has(message['id'])) {
        answered.add(message['id']);
        upstream.write(TOOLS.replace('"ID"', JSON.stringify(message['id'])));
      }
    }
  });
  const answered = new Set<unknown>();
  return { client, upstream, gateway, seen };
}

describe('the relay over line links (fast path)', () => {
  it('R-MCP-2 an upstream answer reaches the client as the same bytes: spacing, key order, numbers and unknown fields kept', async () => {
    const s = await stack();
    s.client.write('{"jsonrpc":"2.0","id":41,"method":"resources/list","params":{}}');
    await s.upstream.next((m) => m['method'] === 'resources/list');
    const answer = '{ "result" : { "resources" : [ ], "x-vendor" : { "big" : 12345678901234567890, "f" : 1.50 } } , "jsonrpc" : "2.0" , "id" : 41 }';
    s.upstream.write(answer);
    expect(await s.client.next((m) => m['id'] === 41)).toBe(answer);
    const notification = '{"method" : "notifications/message", "params" : {"level":"info", "data":{"n":1.0}}, "jsonrpc" : "2.0"}';
    s.upstream.write(notification);
    expect(await s.client.next((m) => m['method'] === 'notifications/message')).toBe(notification);
  });

  it('R-MCP-2 client request ids reach the upstream unchanged, and answers come back under them', async () => {
    const s = await stack();
    s.client.write('{"jsonrpc":"2.0","id":"client-7","method":"prompts/list"}');
    s.client.write('{"jsonrpc":"2.0","id":8,"method":"resources/list"}');
    await s.upstream.next((m) => m['id'] === 8);
    expect(s.upstream.parsed().map((m) => m['id'])).toEqual(['client-7', 8]);
    s.upstream.write('{"jsonrpc":"2.0","id":8,"result":{"resources":[]}}');
    s.upstream.write('{"jsonrpc":"2.0","id":"client-7","result":{"prompts":[]}}');
    await s.client.next((m) => m['id'] === 'client-7');
    expect(s.client.parsed().map((m) => m['id'])).toEqual([8, 'client-7']);
  });

  it('R-MCP-2 only a client id that collides is mapped: one in the gateway namespace, or one already in flight upstream', async () => {
    const s = await stack();
    // The client picks the id the gateway's own first request would get; then a call makes the gateway list tools.
    s.client.write('{"jsonrpc":"2.0","id":"assent-gw:1","method":"prompts/list"}');
    s.client.write('{"jsonrpc":"2.0","id":5,"method":"resources/list"}');
    s.client.write('{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}');
    s.client.write('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"look","arguments":{}}}');
    await s.upstream.next((m) => m['method'] === 'tools/call');
    const byMethod = Object.fromEntries(s.upstream.parsed().map((m) => [m['method'], m['id']]));
    expect(byMethod['resources/list']).toBe(5);
    expect(byMethod['tools/call']).toBe(6);
    expect(byMethod['resources/templates/list']).not.toBe(5);
    expect(new Set(Object.values(byMethod)).size).toBe(5);
    s.upstream.write(`{"jsonrpc":"2.0","id":${JSON.stringify(byMethod['prompts/list'])},"result":{"prompts":[]}}`);
    s.upstream.write(`{"jsonrpc":"2.0","id":${JSON.stringify(byMethod['resources/templates/list'])},"result":{"resourceTemplates":[]}}`);
    await s.client.next((m) => m['id'] === 5);
    expect(s.client.parsed()).toEqual([
      { jsonrpc: '2.0', id: 'assent-gw:1', result: { prompts: [] } },
      { jsonrpc: '2.0', id: 5, result: { resourceTemplates: [] } },
    ]);
  });

  it('R-MCP-2 an upstream request keeps its id towards the client, and the client answer goes back as it came', async () => {
    const s = await stack();
    const request = '{"jsonrpc":"2.0", "id":0, "method":"sampling/createMessage", "params":{ "messages":[], "maxTokens":5 }}';
    s.upstream.write(request);
    expect(await s.client.next((m) => m['method'] === 'sampling/createMessage')).toBe(request);
    const answer = '{"jsonrpc":"2.0", "id":0, "result":{"model":"m","role":"assistant","content":{"type":"text","text":"pong"}}}';
    s.client.write(answer);
    expect(await s.upstream.next((m) => m['id'] === 0 && m['result'] !== undefined)).toBe(answer);
  });

  it('R-MCP-3 (hardening 1) a tools/call goes upstream written from exactly the arguments the gate decided, never as the client bytes', async () => {
    const s = await stack();
    // Duplicate keys, an integer beyond 2^53 and odd spacing: readers could differ on the client's text, not on the gateway's.
    s.client.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"look","arguments":{ "dup":1, "dup":2, "n":9007199254740993, "s":"x" }}}');
    const forwarded = await s.upstream.next((m) => m['method'] === 'tools/call');
    expect(s.seen[0]?.args).toEqual({ dup: 2, n: 9007199254740992, s: 'x' });
    expect(forwarded).toBe(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'look', arguments: s.seen[0]?.args } }));
  });

  it('R-MCP-3 (hardening 3) a message with a method goes upstream as the gateway read it: a duplicate "method" key cannot smuggle tools/call past the gate', async () => {
    const s = await stack();
    s.client.write('{"jsonrpc":"2.0","id":9,"method":"tools/call","method":"ping"}');
    s.client.write('{"jsonrpc":"2.0","method":"tools/call","method":"notifications/initialized"}');
    await s.upstream.next((m) => m['method'] === 'notifications/initialized');
    expect(s.upstream.lines).toEqual(['{"jsonrpc":"2.0","id":9,"method":"ping"}', '{"jsonrpc":"2.0","method":"notifications/initialized"}']);
    expect(s.seen).toEqual([]);
  });

  it('R-MCP-3 a call the gate allows at once is forwarded in the same turn it arrived, and the answer goes back as the upstream wrote it', async () => {
    const s = await stack();
    s.client.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    await s.upstream.next((m) => m['method'] === 'tools/list');
    await s.client.next((m) => m['id'] === 1);
    for (let id = 10; id < 14; id++) s.client.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"look","arguments":{"i":${id}}}}`);
    await s.upstream.next((m) => m['id'] === 13);
    expect(s.seen.map((c) => c.args)).toEqual([{ i: 10 }, { i: 11 }, { i: 12 }, { i: 13 }]);
    expect(s.seen[0]?.annotations).toEqual({ readOnlyHint: true });
    const answers = [10, 11, 12, 13].map((id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"ran ${id}"}]}}`);
    s.upstream.write(answers.join('\n'));
    await s.client.next((m) => m['id'] === 13);
    expect(s.client.lines.slice(-4)).toEqual(answers);
  });

  it('SPEC §14 (issue 10 item 3) a tools/call answer passed on unparsed still tells the gate ok or error, and a gate that records results gets the parsed result', async () => {
    const finished: { callId: string; ok: boolean; result?: Record<string, unknown> }[] = [];
    const s = await stack({
      authorize: (call) => Promise.resolve({ allowed: true, callId: `c${String(call.args['i'])}` }),
      finish: (callId, outcome) => finished.push({ callId, ok: outcome.ok, ...(outcome.result === undefined ? {} : { result: outcome.result }) }),
      recordsResult: (callId) => callId === 'c3',
    });
    s.client.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    await s.client.next((m) => m['id'] === 1);
    for (const id of [2, 3, 4, 5]) s.client.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"look","arguments":{"i":${id}}}}`);
    await s.upstream.next((m) => m['id'] === 5);
    const answers = [
      '{ "id" : 2, "result" : { "isError" : true, "content" : [] }, "jsonrpc" : "2.0" }',
      '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a \\"quoted\\" \\u00e9"}],"isError":false}}',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"boom"}}',
      '{"jsonrpc":"2.0","id":5,"result":{"is\\u0045rror":true}}',
    ];
    s.upstream.write(answers.join('\n'));
    await s.client.next((m) => m['id'] === 5);
    expect(s.client.lines.slice(-4)).toEqual(answers);
    await expect.poll(() => finished.length).toBe(4);
    expect(finished).toEqual([
      { callId: 'c2', ok: false },
      { callId: 'c3', ok: true, result: { content: [{ type: 'text', text: 'a "quoted" é' }], isError: false } },
      { callId: 'c4', ok: false },
      // An escaped key the scan declines: the parse path reads it (and, as always there, hands the result on).
      { callId: 'c5', ok: false, result: { isError: true } },
    ]);
  });
});
