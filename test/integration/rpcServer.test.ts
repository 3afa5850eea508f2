// The JSON-RPC head over a real Unix socket, in-process with test operations:
// typed errors, params validation, notifications, connection lifecycle,
// cancellation and backpressure (R-D-2, R-D-3).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AssentError } from '../../src/core/base/errors.js';
import { JsonText } from '../../src/core/base/jsonText.js';
import type { DaemonContext } from '../../src/heads/daemon/daemonMain.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { startRpcServer } from '../../src/heads/daemon/rpcServer.js';
import type { RpcServer } from '../../src/heads/daemon/rpcServer.js';
import { resolveStatePaths } from '../../src/state/statePaths.js';
import { daemonOperations } from '../../src/operations/daemonOperations.js';
import { defineOperation } from '../../src/operations/operation.js';
import type { ConnectionHandle, Operation } from '../../src/operations/operation.js';
import { createLogger, silentLogger } from '../../src/service/logger.js';
import type { Logger } from '../../src/service/logger.js';

const ALL_HEADS = { cli: true, rpc: true, http: true, mcp: true } as const;

interface Probe {
  closedConnections: string[];
  abortedCalls: string[];
  logged: { message: string; fields?: Record<string, unknown> }[];
}

function testOperations(probe: Probe): Operation[] {
  return [
    defineOperation({
      name: 'test.echo',
      summary: 'echo',
      params: z.strictObject({ text: z.string(), nested: z.object({ n: z.number() }).optional() }),
      result: z.object({ text: z.string(), principal: z.string(), head: z.string(), connection: z.string() }),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async (params, context) => ({ text: params.text, principal: context.principal, head: context.head, connection: context.connection?.id ?? '' }),
    }),
    defineOperation({
      name: 'test.crash',
      summary: 'throws an untyped error carrying internals',
      params: z.object({}),
      result: z.null(),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async () => {
        throw new TypeError('secret internal detail /etc/shadow');
      },
    }),
    defineOperation({
      name: 'test.typed',
      summary: 'throws a typed error',
      params: z.object({}),
      result: z.null(),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async () => {
        throw new AssentError('not_found', 'Approval abcde does not exist; list pending ones with `assent pending`.', { details: { id: 'abcde' } });
      },
    }),
    defineOperation({
      name: 'test.wait',
      summary: 'waits until cancelled or disconnected',
      params: z.object({ tag: z.string() }),
      result: z.null(),
      class: 'read',
      exposure: ALL_HEADS,
      handler: (params, context) =>
        new Promise((_resolve, reject) => {
          context.connection?.onClose(() => probe.closedConnections.push(params.tag));
          context.signal?.addEventListener('abort', () => {
            probe.abortedCalls.push(params.tag);
            reject(context.signal?.reason);
          });
        }),
    }),
    defineOperation({
      name: 'test.listenOnce',
      summary: 'registers a close listener and removes it again',
      params: z.object({ tag: z.string() }),
      result: z.null(),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async (params, context) => {
        const remove = context.connection?.onClose(() => probe.closedConnections.push(params.tag));
        remove?.();
        return null;
      },
    }),
    defineOperation({
      name: 'test.push',
      summary: 'sends notifications on the caller connection',
      params: z.object({ count: z.number().int() }),
      result: z.object({ sent: z.number() }),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async (params, context) => {
        for (let n = 0; n < params.count; n += 1) context.connection?.notify('event', { n });
        return { sent: params.count };
      },
    }),
    defineOperation({
      name: 'test.big',
      summary: 'a 2 MiB reply',
      params: z.object({}),
      result: z.string(),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async () => 'x'.repeat(2 * 1024 * 1024),
    }),
    defineOperation({
      name: 'test.list',
      summary: 'a ready-made JSON list of 2,000 entries (about 400 KiB), its pieces made as they are written',
      params: z.object({}),
      result: z.array(z.object({ n: z.number(), pad: z.string() })),
      class: 'read',
      exposure: ALL_HEADS,
      handler: async () => {
        const entries = Array.from({ length: 2000 }, (_, n) => JSON.stringify({ n, pad: 'p'.repeat(180) }));
        return new JsonText(function* () {
          yield '[';
          for (let start = 0; start < entries.length; start += 100) yield `${start === 0 ? '' : ','}${entries.slice(start, start + 100).join(',')}`;
          yield ']';
        }, entries.reduce((sum, entry) => sum + entry.length + 1, 1)) as never;
      },
    }),
    defineOperation({
      name: 'test.notOnRpc',
      summary: 'hidden from the socket',
      params: z.object({}),
      result: z.null(),
      class: 'read',
      exposure: { cli: true, rpc: { rationale: 'test' }, http: true, mcp: true },
      handler: async () => null,
    }),
  ];
}

function recordingLogger(probe: Probe): Logger {
  return createLogger({
    write: (line: string) => {
      const entry = JSON.parse(line) as { msg: string } & Record<string, unknown>;
      probe.logged.push({ message: entry.msg, fields: entry });
    },
  });
}

/** A raw line-oriented peer, for frames a well-behaved client would never send. */
class RawPeer {
  private buffer = '';
  private readonly waiting: ((line: string) => void)[] = [];
  private readonly lines: string[] = [];
  closed = false;
  readonly socket: Socket;

  constructor(path: string) {
    this.socket = createConnection({ path });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (text: string) => {
      this.buffer += text;
      let index: number;
      while ((index = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, index);
        this.buffer = this.buffer.slice(index + 1);
        const waiter = this.waiting.shift();
        if (waiter) waiter(line);
        else this.lines.push(line);
      }
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closed = true));
  }

  send(text: string): void {
    this.socket.write(text);
  }

  next(): Promise<Record<string, unknown>> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(JSON.parse(line) as Record<string, unknown>);
    return new Promise((resolve) => this.waiting.push((l) => resolve(JSON.parse(l) as Record<string, unknown>)));
  }

  async request(message: unknown): Promise<Record<string, unknown>> {
    this.send(`${JSON.stringify(message)}\n`);
    return this.next();
  }

  waitClosed(): Promise<void> {
    return this.closed ? Promise.resolve() : new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  close(): void {
    this.socket.destroy();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let dir: string;
let socketPath: string;
let server: RpcServer | undefined;
let probe: Probe;
const peers: RawPeer[] = [];
const clients: DaemonClient[] = [];

async function start(options: { maxConnections?: number } = {}): Promise<RpcServer> {
  const paths = resolveStatePaths({ ASSENT_HOME: dir });
  const ctx = { paths, logger: silentLogger, startedAt: Date.now(), principal: 'owner:test', status: {}, connections: () => server?.connections() ?? 0, onShutdown: () => undefined, requestShutdown: () => undefined } satisfies DaemonContext;
  server = await startRpcServer({
    socketPath,
    operations: () => [...daemonOperations(ctx), ...testOperations(probe)],
    contextFor: (connection: ConnectionHandle) => ({ principal: `owner:test:${connection.id}`, head: 'rpc' }),
    logger: recordingLogger(probe),
    ...options,
  });
  return server;
}

function peer(): RawPeer {
  const p = new RawPeer(socketPath);
  peers.push(p);
  return p;
}

async function client(): Promise<DaemonClient> {
  const c = await DaemonClient.connect({ socketPath });
  clients.push(c);
  return c;
}

beforeEach(() => {
  dir = mkdtempSync('/tmp/as-rpc-');
  socketPath = join(dir, 's.sock');
  probe = { closedConnections: [], abortedCalls: [], logged: [] };
});

afterEach(async () => {
  for (const p of peers.splice(0)) p.close();
  for (const c of clients.splice(0)) c.close();
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('rpc server', () => {
  it('R-D-2 creates the socket 0600 even under a permissive umask', async () => {
    const previous = process.umask(0);
    try {
      await start();
    } finally {
      process.umask(previous);
    }
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
  });

  it('answers a call with the principal and connection set by the head, never by params', async () => {
    await start();
    const c = await client();
    const result = await c.call<{ text: string; principal: string; head: string; connection: string }>('test.echo', { text: 'hi' });
    expect(result.text).toBe('hi');
    expect(result.head).toBe('rpc');
    expect(result.principal).toBe(`owner:test:${result.connection}`);
  });

  it('R-D-3 invalid params give invalid_params on code -32000 with the issue paths', async () => {
    await start();
    const p = peer();
    const reply = await p.request({ jsonrpc: '2.0', id: 7, method: 'test.echo', params: { text: 5, nested: { n: 'x' }, extra: true } });
    expect(reply['id']).toBe(7);
    const error = reply['error'] as { code: number; message: string; data: { type: string; details: { issues: { path: string }[] } } };
    expect(error.code).toBe(-32000);
    expect(error.data.type).toBe('invalid_params');
    const paths = error.data.details.issues.map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['text', 'nested.n']));
    expect(error.message).toContain('test.echo');
  });

  it('R-D-3 unknown methods and methods not exposed on rpc give method_not_found', async () => {
    await start();
    const p = peer();
    for (const method of ['no.such', 'test.notOnRpc', '__proto__', 'constructor']) {
      const reply = await p.request({ jsonrpc: '2.0', id: method, method, params: {} });
      expect(reply).toMatchObject({ id: method, error: { code: -32000, data: { type: 'method_not_found', details: { method } } } });
    }
  });

  it('R-D-3 an untyped handler failure is `internal` with a generic message; the details go to the log only', async () => {
    await start();
    const p = peer();
    const reply = await p.request({ jsonrpc: '2.0', id: 1, method: 'test.crash', params: {} });
    const error = reply['error'] as { message: string; data: { type: string } };
    expect(error.data.type).toBe('internal');
    expect(JSON.stringify(reply)).not.toContain('secret');
    expect(JSON.stringify(probe.logged)).toContain('secret internal detail');
  });

  it('R-D-3 a typed handler error keeps its type, message and details; the client rethrows it as AssentError', async () => {
    await start();
    const c = await client();
    const error = await c.call('test.typed').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AssentError);
    expect(error).toMatchObject({ type: 'not_found', details: { id: 'abcde' } });
    expect((error as Error).message).toContain('assent pending');
  });

  it('R-D-2 refuses batches, bad ids, non-object params and non-2.0 frames with typed errors and keeps the connection', async () => {
    await start();
    const p = peer();
    const cases: [unknown, string, unknown][] = [
      [[{ jsonrpc: '2.0', id: 1, method: 'test.echo', params: { text: 'a' } }], 'invalid_request', null],
      [{ jsonrpc: '2.0', id: { nested: true }, method: 'test.echo' }, 'invalid_request', null],
      [{ jsonrpc: '2.0', id: 'x'.repeat(257), method: 'test.echo' }, 'invalid_request', null],
      [{ jsonrpc: '2.0', id: 1.5, method: 'test.echo' }, 'invalid_request', null],
      [{ jsonrpc: '2.0', id: 1e300, method: 'test.echo' }, 'invalid_request', null],
      [{ jsonrpc: '1.0', id: 2, method: 'test.echo' }, 'invalid_request', 2],
      [{ jsonrpc: '2.0', id: 3, method: 42 }, 'invalid_request', 3],
      [{ jsonrpc: '2.0', id: 4, method: 'test.echo', params: ['a'] }, 'invalid_params', 4],
      [{ jsonrpc: '2.0', id: 5, method: 'test.echo', params: 'a' }, 'invalid_params', 5],
      ['just a string', 'invalid_request', null],
      [null, 'invalid_request', null],
    ];
    for (const [frame, type, id] of cases) {
      const reply = await p.request(frame);
      expect({ frame, reply }).toMatchObject({ reply: { jsonrpc: '2.0', id, error: { code: -32000, data: { type } } } });
    }
    p.send('{not json\n');
    expect(await p.next()).toMatchObject({ id: null, error: { data: { type: 'parse_error' } } });
    // A string id of exactly 256 characters is fine.
    const ok = await p.request({ jsonrpc: '2.0', id: 'y'.repeat(256), method: 'test.echo', params: { text: 'still here' } });
    expect(ok).toMatchObject({ id: 'y'.repeat(256), result: { text: 'still here' } });
  });

  it('R-D-2 a notification (no id) gets no reply, not even an error', async () => {
    await start();
    const p = peer();
    p.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'no.such' })}\n`);
    p.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'test.crash', params: {} })}\n`);
    const reply = await p.request({ jsonrpc: '2.0', id: 'after', method: 'test.echo', params: { text: 'x' } });
    expect(reply['id']).toBe('after');
  });

  it('R-D-2 a 2 MiB line gets frame_too_large and a closed connection; others keep being served', async () => {
    await start();
    const good = await client();
    const p = peer();
    p.send('{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"text":"');
    p.send('a'.repeat(2 * 1024 * 1024));
    const reply = await p.next();
    expect(reply).toMatchObject({ id: null, error: { code: -32000, data: { type: 'frame_too_large', details: { limitBytes: 1_048_576 } } } });
    await p.waitClosed();
    expect(await good.call('test.echo', { text: 'ok' })).toMatchObject({ text: 'ok' });
  });

  it('pushes notifications on the caller connection only', async () => {
    await start();
    const a = await client();
    const b = await client();
    const seenA: unknown[] = [];
    const seenB: unknown[] = [];
    a.onNotification('event', (params) => seenA.push(params));
    b.onNotification('event', (params) => seenB.push(params));
    await a.call('test.push', { count: 3 });
    await b.call('test.echo', { text: 'flush' });
    expect(seenA).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(seenB).toEqual([]);
  });

  it('tells a running operation when its connection closes (onClose and the call signal)', async () => {
    await start();
    const c = await client();
    const pending = c.call('test.wait', { tag: 'w1' }).catch((e: unknown) => e);
    await sleep(50);
    c.close();
    expect(await pending).toMatchObject({ type: 'unavailable' });
    const deadline = Date.now() + 2000;
    while (probe.closedConnections.length === 0 && Date.now() < deadline) await sleep(10);
    expect(probe.closedConnections).toEqual(['w1']);
    expect(probe.abortedCalls).toEqual(['w1']);
    expect(server?.connections()).toBe(0);
  });

  it('a close listener that was removed is not called when the connection closes', async () => {
    await start();
    const c = await client();
    await c.call('test.listenOnce', { tag: 'removed' });
    const pending = c.call('test.wait', { tag: 'kept' }).catch((e: unknown) => e);
    await sleep(50);
    c.close();
    await pending;
    const deadline = Date.now() + 2000;
    while (probe.closedConnections.length === 0 && Date.now() < deadline) await sleep(10);
    await sleep(50);
    expect(probe.closedConnections).toEqual(['kept']);
  });

  it('a client abort cancels the call on the daemon and leaves the connection usable', async () => {
    await start();
    const c = await client();
    const controller = new AbortController();
    const pending = c.call('test.wait', { tag: 'w2' }, { signal: controller.signal }).catch((e: unknown) => e);
    await sleep(30);
    controller.abort();
    expect(await pending).toBeInstanceOf(AssentError);
    const deadline = Date.now() + 2000;
    while (probe.abortedCalls.length === 0 && Date.now() < deadline) await sleep(10);
    expect(probe.abortedCalls).toEqual(['w2']);
    expect(await c.call('test.echo', { text: 'after abort' })).toMatchObject({ text: 'after abort' });
  });

  it('R-D-2 a client that never reads its replies is dropped once its backlog passes 8 MiB; others are unaffected', async () => {
    await start();
    const good = await client();
    const slow = peer();
    slow.socket.pause();
    for (let id = 1; id <= 12; id += 1) slow.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'test.big', params: {} })}\n`);
    const deadline = Date.now() + 10_000;
    while (!probe.logged.some((entry) => entry.message === 'dropping a client that does not read its replies') && Date.now() < deadline) await sleep(20);
    expect(probe.logged.map((entry) => entry.message)).toContain('dropping a client that does not read its replies');
    expect(await good.call('test.echo', { text: 'unaffected' })).toMatchObject({ text: 'unaffected' });
    // Once it reads again it finds the connection closed.
    slow.socket.resume();
    await slow.waitClosed();
    expect(server?.connections()).toBe(1);
  });

  it('SPEC §14 a large ready-made reply streams out whole as the socket drains, and replies sent meanwhile follow it, never inside it', async () => {
    await start();
    const slow = peer();
    slow.socket.pause();
    slow.send(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'test.list', params: {} })}\n`);
    slow.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'test.echo', params: { text: 'between' } })}\n`);
    slow.send(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'test.list', params: {} })}\n`);
    slow.send(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'test.echo', params: { text: 'after' } })}\n`);
    await sleep(200);
    slow.socket.resume();
    const replies = [await slow.next(), await slow.next(), await slow.next(), await slow.next()];
    expect(replies.map((reply) => reply['id'])).toEqual([1, 2, 3, 4]);
    for (const list of [replies[0], replies[2]]) {
      const result = list?.['result'] as { n: number }[];
      expect(result).toHaveLength(2000);
      expect(result.map((entry) => entry.n)).toEqual(Array.from({ length: 2000 }, (_, n) => n));
    }
    expect(replies[1]?.['result']).toMatchObject({ text: 'between' });
    expect(replies[3]?.['result']).toMatchObject({ text: 'after' });
  });

  it('R-D-2 replies queued behind a streaming one count against the backlog: a client that never reads is dropped', async () => {
    await start();
    const good = await client();
    const slow = peer();
    slow.socket.pause();
    for (let id = 1; id <= 40; id += 1) slow.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'test.list', params: {} })}\n`);
    const deadline = Date.now() + 10_000;
    while (!probe.logged.some((entry) => entry.message === 'dropping a client that does not read its replies') && Date.now() < deadline) await sleep(20);
    expect(probe.logged.map((entry) => entry.message)).toContain('dropping a client that does not read its replies');
    expect(await good.call('test.echo', { text: 'unaffected' })).toMatchObject({ text: 'unaffected' });
  });

  it('refuses connections beyond maxConnections with a typed error', async () => {
    await start({ maxConnections: 2 });
    await client();
    await client();
    const third = await DaemonClient.connect({ socketPath, timeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(third).toMatchObject({ type: 'unavailable' });
    expect((third as Error).message).toContain('limit of 2 connections');
  });

  it('close() ends every connection and the client learns of it', async () => {
    const s = await start();
    const c = await client();
    const closed = new Promise<void>((resolve) => c.onClose(resolve));
    await s.close();
    await closed;
    expect(c.closed).toBe(true);
    await expect(c.call('test.echo', { text: 'x' })).rejects.toMatchObject({ type: 'unavailable' });
  });
});
