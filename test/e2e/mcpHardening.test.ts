// The gateway's edge against input that means one thing to the approver and
// another to the upstream (hardening 1-4): the built `assent mcp` with a real
// daemon, driven with raw JSON-RPC lines, in front of an upstream that writes
// down every line it receives. What the upstream never got, it never ran.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { assentBin, requireBuild, waitUntil } from './mcpFixtures.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => requireBuild());

/** An MCP server without any SDK: it appends every raw line it reads to a file and answers every request. */
const RECORDER = `
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const log = process.argv[2];
const tools = [
  { name: 'look', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'drop', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } },
];
for await (const line of createInterface({ input: process.stdin })) {
  appendFileSync(log, line + '\\n');
  let message;
  try { message = JSON.parse(line); } catch { continue; }
  if (message.id === undefined || typeof message.method !== 'string') continue;
  let result = {};
  if (message.method === 'initialize') result = { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'recorder', version: '1.0.0' } };
  else if (message.method === 'tools/list') result = { tools };
  else if (message.method === 'tools/call') result = { content: [{ type: 'text', text: 'ran ' + message.params.name }] };
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\\n');
}
`;

interface Stack {
  home: TempHome;
  /** Raw lines the upstream received, parsed. */
  received(): Record<string, unknown>[];
  /** The raw text the upstream received. */
  receivedText(): string;
}

async function startStack(config: Record<string, unknown>): Promise<Stack> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  const script = join(home.home, 'recorder.mjs');
  const log = join(home.home, 'received.ndjson');
  writeFileSync(script, RECORDER);
  writeFileSync(
    home.paths.config,
    JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, servers: { rec: { command: process.execPath, args: [script, log] } }, ...config }),
    { mode: 0o600 },
  );
  await home.startDaemon();
  const receivedText = (): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');
  return {
    home,
    receivedText,
    received: () =>
      receivedText()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

interface RpcReply {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { type?: string; details?: Record<string, unknown> } };
}

/** The built `assent mcp` on raw stdio: lines in, parsed replies by id out. */
class RawGateway {
  private readonly replies = new Map<unknown, RpcReply>();
  /** Replies with `"id": null` (errors about a line whose id could not be read), in order. */
  readonly nullIdReplies: RpcReply[] = [];
  private buffer = '';
  stderr = '';
  private nextId = 1;

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        const message = JSON.parse(line) as RpcReply;
        if (message.id === null) this.nullIdReplies.push(message);
        else if (message.id !== undefined) this.replies.set(message.id, message);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes one line as it is (so an own "__proto__" key or an escaped lone surrogate survives). */
  writeLine(text: string): void {
    this.child.stdin?.write(`${text}\n`);
  }

  /** Sends a request whose params are given as raw JSON text; resolves with the reply. */
  async requestRaw(method: string, paramsJson: string, timeoutMs = 15_000): Promise<RpcReply> {
    const id = this.nextId++;
    this.writeLine(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}`);
    if (!(await waitUntil(() => this.replies.has(id) || !this.alive, timeoutMs)) || !this.replies.has(id)) {
      throw new Error(`no reply to ${JSON.stringify(method)} (gateway ${this.alive ? 'alive' : 'exited'}); stderr: ${this.stderr}`);
    }
    return this.replies.get(id) as RpcReply;
  }

  request(method: string, params: unknown, timeoutMs?: number): Promise<RpcReply> {
    return this.requestRaw(method, JSON.stringify(params), timeoutMs);
  }

  /** A tools/call whose arguments are raw JSON text. */
  call(name: string, argumentsJson: string, timeoutMs?: number): Promise<RpcReply> {
    return this.requestRaw('tools/call', `{"name":${JSON.stringify(name)},"arguments":${argumentsJson}}`, timeoutMs);
  }
}

async function startGateway(stack: Stack, args: string[] = []): Promise<RawGateway> {
  const child = spawn(process.execPath, [assentBin, 'mcp', ...args], {
    env: { ...stack.home.env, ASSENT_NO_AUTOSPAWN: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const gateway = new RawGateway(child);
  cleanups.push(async () => {
    if (!gateway.alive) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  const init = await gateway.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-agent', version: '1.0.0' } });
  expect(init.result?.['serverInfo']).toMatchObject({ name: 'recorder' });
  gateway.writeLine('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return gateway;
}

function text(reply: RpcReply): string {
  const content = (reply.result?.['content'] as { text?: string }[] | undefined) ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

function toolCalls(stack: Stack): Record<string, unknown>[] {
  return stack.received().filter((m) => typeof m['method'] === 'string' && (m['method'] as string).toLowerCase().includes('call'));
}

/** The approval id in a handoff refusal's text. */
function approvalIdIn(reply: RpcReply): string {
  const match = /approval ([abcdefghijkmnopqrstuvwxyz]{5})/.exec(text(reply));
  if (match === null) throw new Error(`no approval id in ${JSON.stringify(reply)}`);
  return match[1] as string;
}

const DEEP = 10_000;
const deepArray = `{"v":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`;
const deepObject = `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`;

function expectInvalidParams(reply: RpcReply, pointer: string): void {
  expect(reply.result, JSON.stringify(reply)).toBeUndefined();
  expect(reply.error?.code).toBe(-32602);
  expect(reply.error?.data?.type).toBe('invalid_params');
  expect(reply.error?.message).toContain(pointer);
  expect(reply.error?.message).toContain('not forwarded');
}

describe('assent mcp refuses arguments the approver and the upstream could read differently', () => {
  it('R-MCP-3 (hardening 1) a "__proto__" key, top level or nested, never reaches the upstream and is refused invalid_params naming its path', async () => {
    const stack = await startStack({ policy: { default: 'allow', destructive: 'allow', tools: {} } });
    const gateway = await startGateway(stack);
    expectInvalidParams(await gateway.call('look', '{"path":"/srv/ok","__proto__":{"x":1}}'), '/__proto__');
    expectInvalidParams(await gateway.call('look', '{"path":"/srv/ok","opts":{"deep":[{"__proto__":{"x":1}}]}}'), '/opts/deep/0/__proto__');
    expect(toolCalls(stack)).toEqual([]);
    // The gateway is fine and the next call runs with exactly the arguments that were decided.
    const ok = await gateway.call('look', '{"path":"/srv/ok"}');
    expect(text(ok)).toBe('ran look');
    expect(toolCalls(stack).map((m) => m['params'])).toEqual([{ name: 'look', arguments: { path: '/srv/ok' } }]);
    expect(stack.receivedText()).not.toContain('__proto__');
  }, 60_000);

  it('R-MCP-3 (hardening 2) a lone surrogate or 10,000-deep arguments in an allowed or a denied call are refused before the decision; the gateway stays up and the next call runs and is audited', async () => {
    const stack = await startStack({ policy: { default: 'allow', destructive: 'allow', tools: { 'rec/drop': 'deny' } } });
    const gateway = await startGateway(stack);
    for (const tool of ['look', 'drop']) {
      expectInvalidParams(await gateway.call(tool, '{"s":"\\ud800"}'), '/s');
      expectInvalidParams(await gateway.call(tool, '{"ok":"\\ud83d\\ude00","k":{"\\udc00":1}}'), '/k');
      expectInvalidParams(await gateway.call(tool, deepArray), 'deeper than 64');
      expectInvalidParams(await gateway.call(tool, deepObject), 'deeper than 64');
    }
    // Give a crashing audit batch (20 ms timer) every chance to happen.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gateway.alive, gateway.stderr).toBe(true);
    expect(toolCalls(stack)).toEqual([]);

    expect(text(await gateway.call('look', '{"path":"/srv/after","emoji":"\\ud83d\\ude00"}'))).toBe('ran look');
    const denied = await gateway.call('drop', '{"path":"/srv/after"}');
    expect(denied.result?.['isError']).toBe(true);
    expect(text(denied)).toContain('policy.tools.rec/drop');
    await expect.poll(() => auditLines(stack.home).map((l) => `${String(l['tool'])}:${String(l['outcome'])}`), { timeout: 10_000 }).toEqual(['look:ok', 'drop:denied']);
    expect(gateway.alive).toBe(true);
    expect(toolCalls(stack).map((m) => (m['params'] as { name: string }).name)).toEqual(['look']);
  }, 60_000);

  it('R-MCP-2 R-MCP-3 (hardening 3) a method that only looks unlike tools/call is refused and never relayed; such a notification is dropped', async () => {
    const stack = await startStack({ policy: { default: 'deny', destructive: 'deny', tools: {} } });
    const gateway = await startGateway(stack);
    const lookalikes = ['Tools/Call', 'TOOLS/CALL', ' tools/call', 'tools/call ', '\ttools/call\n', 'tools/call\u0000', 'tools/\u200bcall', '\ufefftools/call', 'tools/call\u00a0', '\uff54\uff4f\uff4f\uff4c\uff53/\uff43\uff41\uff4c\uff4c', 'tools.call', 'tools_call'];
    for (const method of lookalikes) {
      const reply = await gateway.request(method, { name: 'drop', arguments: { path: '/srv/x' } });
      expect(reply.result, `${JSON.stringify(method)} was answered ${JSON.stringify(reply)}`).toBeUndefined();
      expect(reply.error?.code).toBe(-32601);
      expect(reply.error?.message).toContain('tools/call');
      gateway.writeLine(JSON.stringify({ jsonrpc: '2.0', method, params: { name: 'drop', arguments: { path: '/srv/y' } } }));
    }
    // Other methods still pass unchanged, and the exact method is gated (policy deny here).
    expect((await gateway.request('tools/list', {})).result?.['tools']).toHaveLength(2);
    const gated = await gateway.request('tools/call', { name: 'drop', arguments: { path: '/srv/z' } });
    expect(gated.result?.['isError']).toBe(true);
    expect(toolCalls(stack)).toEqual([]);
    // The gateway lists tools once itself after initialize (to warn about policy keys naming unlisted tools).
    expect(new Set(stack.received().map((m) => m['method']))).toEqual(new Set(['initialize', 'notifications/initialized', 'tools/list']));
  }, 60_000);

  it('R-MCP-2 (hardening 19.9) each JSON-RPC batch is answered with one -32600 error (id null); nothing in it is relayed or decided; the gateway keeps serving', async () => {
    const stack = await startStack({ policy: { default: 'allow', destructive: 'allow', tools: {} } });
    const gateway = await startGateway(stack);
    gateway.writeLine('[{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"drop","arguments":{"path":"/srv/batch"}}},{"jsonrpc":"2.0","id":902,"method":"ping"}]');
    expect(await waitUntil(() => gateway.nullIdReplies.length === 1, 5000), gateway.stderr).toBe(true);
    gateway.writeLine('[]');
    expect(await waitUntil(() => gateway.nullIdReplies.length === 2, 5000), gateway.stderr).toBe(true);
    for (const reply of gateway.nullIdReplies) {
      expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(reply.error?.message).toContain('batch');
    }
    // The ids inside the batch get no answer of their own, and nothing of it reached the upstream or the audit.
    expect(text(await gateway.call('look', '{"path":"/srv/after"}'))).toBe('ran look');
    expect(toolCalls(stack).map((m) => (m['params'] as { name: string }).name)).toEqual(['look']);
    expect(stack.received().some((m) => m['id'] === 902)).toBe(false);
    await expect.poll(() => auditLines(stack.home).map((l) => `${String(l['tool'])}:${String(l['outcome'])}`), { timeout: 10_000 }).toEqual(['look:ok']);
    expect(gateway.nullIdReplies).toHaveLength(2);
  }, 60_000);

  it('R-MCP-8 (hardening 1) in handoff mode a retry that adds "__proto__" is refused and does not consume the approved call\u2019s proof', async () => {
    const stack = await startStack({
      policy: { default: 'allow', destructive: 'allow', tools: { 'rec/drop': 'prompt' } },
      approvals: { handoff: true, proofTtlSeconds: 300 },
    });
    const operator = await DaemonClient.connect({ socketPath: stack.home.paths.socket, autoSpawn: false });
    cleanups.push(() => operator.close());
    const gateway = await startGateway(stack);
    const args = '{"path":"/srv/ok"}';
    const first = await gateway.call('drop', args);
    expect(text(first)).toContain('approval_pending');
    const id = approvalIdIn(first);
    const [pending] = await operator.call<{ args: unknown }[]>('approvals.list', {});
    expect(pending?.args).toEqual({ path: '/srv/ok' });
    await operator.call('approvals.decide', { id, behavior: 'allow', channel: 'cli' });

    expectInvalidParams(await gateway.call('drop', '{"path":"/srv/ok","__proto__":{"x":1}}'), '/__proto__');
    expect(toolCalls(stack)).toEqual([]);
    const proofs = await operator.call<{ approvalId: string; state: string }[]>('proofs.list', {});
    expect(proofs.find((p) => p.approvalId === id)?.state).toBe('issued');

    // The identical retry still finds its proof and runs once, with exactly the approved arguments.
    const retry = await gateway.call('drop', args);
    expect(text(retry)).toBe('ran drop');
    expect(toolCalls(stack).map((m) => m['params'])).toEqual([{ name: 'drop', arguments: { path: '/srv/ok' } }]);
  }, 60_000);

  it('R-OPS-3 (hardening 4) assent__approvals_list and assent__approvals_get show a gateway only its own session\u2019s approvals', async () => {
    const stack = await startStack({ policy: { default: 'allow', destructive: 'allow', tools: { 'rec/drop': 'prompt' } } });
    const operator = await DaemonClient.connect({ socketPath: stack.home.paths.socket, autoSpawn: false });
    cleanups.push(() => operator.close());
    const a = await startGateway(stack, ['--assent-tools']);
    const b = await startGateway(stack, ['--assent-tools']);
    // Each gateway's call waits for a human; neither is answered before the end of the test.
    void a.call('drop', '{"path":"/srv/from-a"}', 60_000).catch(() => undefined);
    void b.call('drop', '{"path":"/srv/from-b"}', 60_000).catch(() => undefined);
    await expect.poll(async () => (await operator.call<unknown[]>('approvals.list', {})).length, { timeout: 10_000 }).toBe(2);
    const all = await operator.call<{ id: string; args: { path: string } }[]>('approvals.list', {});
    const idOf = (path: string): string => all.find((p) => p.args.path === path)?.id ?? '';

    for (const [gateway, own, other] of [
      [a, '/srv/from-a', '/srv/from-b'],
      [b, '/srv/from-b', '/srv/from-a'],
    ] as const) {
      const listed = await gateway.request('tools/call', { name: 'assent__approvals_list', arguments: {} });
      const views = JSON.parse(text(listed)) as { args: { path: string } }[];
      expect(views.map((v) => v.args.path)).toEqual([own]);
      // A selector cannot widen the view: not the other session's id, not its tool, not the other approval's id.
      for (const selector of ['rec/drop', 'rec/', idOf(other)]) {
        const narrowed = await gateway.request('tools/call', { name: 'assent__approvals_list', arguments: { selector } });
        expect((JSON.parse(text(narrowed)) as { args: { path: string } }[]).map((v) => v.args.path)).toEqual(selector === idOf(other) ? [] : [own]);
      }
      const got = await gateway.request('tools/call', { name: 'assent__approvals_get', arguments: { id: idOf(other) } });
      expect(got.result?.['isError']).toBe(true);
      expect(text(got)).toContain('not_found');
      expect(text(got)).not.toContain(other);
      const mine = await gateway.request('tools/call', { name: 'assent__approvals_get', arguments: { id: idOf(own) } });
      expect((JSON.parse(text(mine)) as { args: { path: string } }).args.path).toBe(own);
    }
    for (const approval of all) await operator.call('approvals.decide', { id: approval.id, behavior: 'deny' });
  }, 60_000);
});

/** One raw JSON-RPC line to the daemon socket; resolves with the parsed reply line. */
function rawSocketCall(socketPath: string, line: string): Promise<RpcReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no reply from the daemon'));
    }, 10_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      socket.end();
      resolve(JSON.parse(buffer.slice(0, newline)) as RpcReply);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(`${line}\n`);
  });
}

describe('the daemon refuses the same input on its socket', () => {
  it('R-D-5 R-D-2 (hardening 1, 2) calls.authorize, calls.record and proofs.consume refuse "__proto__" keys, lone surrogates and deep nesting with invalid_params', async () => {
    const stack = await startStack({ policy: { default: 'allow', destructive: 'allow', tools: { 'rec/drop': 'prompt' } }, approvals: { handoff: true } });
    const socket = stack.home.paths.socket;
    const authorize = (args: string, extra = ''): string =>
      `{"jsonrpc":"2.0","id":1,"method":"calls.authorize","params":{"sessionId":"raw","server":"rec","tool":"drop","args":${args}${extra}}}`;
    const cases: [string, string][] = [
      [authorize('{"path":"/srv/ok","__proto__":{"x":1}}'), 'args.__proto__'],
      [authorize('{"path":"/srv/ok","n":{"__proto__":{"x":1}}}'), 'args.n.__proto__'],
      [authorize('{"s":"\\udfff"}'), 'args.s'],
      [authorize(deepObject), 'deeper than 64'],
      [authorize('{"path":"/srv/ok"}', ',"caller":{"__proto__":{"x":1}}'), 'caller.__proto__'],
      [
        `{"jsonrpc":"2.0","id":2,"method":"calls.record","params":{"records":[{"sessionId":"raw","server":"rec","tool":"look","argsSha256":"v1:sha256:${'0'.repeat(64)}","outcome":"ok","caller":{"name":"\\ud800"}}]}}`,
        'records.0.caller.name',
      ],
      [
        `{"jsonrpc":"2.0","id":3,"method":"proofs.consume","params":{"proof":"asp1_${'A'.repeat(43)}","revision":"r","action":{"executable":"/bin/true","cwd":"/","args":[],"env":{"__proto__":"x"}}}}`,
        'action.env.__proto__',
      ],
    ];
    for (const [line, where] of cases) {
      const reply = await rawSocketCall(socket, line);
      expect(reply.error?.data?.type, `${line.slice(0, 200)} → ${JSON.stringify(reply).slice(0, 300)}`).toBe('invalid_params');
      expect(reply.error?.message).toContain(where);
    }
    // Nothing was filed for any of them, and the daemon still decides a clean call.
    const operator = await DaemonClient.connect({ socketPath: socket, autoSpawn: false });
    cleanups.push(() => operator.close());
    expect(await operator.call('approvals.list', {})).toEqual([]);
    const clean = await rawSocketCall(socket, authorize('{"path":"/srv/ok"}'));
    expect(clean.error?.data?.details?.['reason']).toBe('approval_pending');
  }, 60_000);
});
