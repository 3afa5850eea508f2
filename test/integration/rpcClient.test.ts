// DaemonClient against misbehaving peers on a real Unix socket: what a CLI user
// sees when the daemon is absent, hung, broken or goes away mid-call.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssentError } from '../../src/core/base/errors.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { VERSION } from '../../src/version.js';

let dir: string;
let socketPath: string;
let server: Server | undefined;
const sockets = new Set<Socket>();

/** A peer that answers each request line with whatever `reply` returns (nothing when undefined). */
async function fakeDaemon(reply: (request: { id: number; method: string }, socket: Socket) => string | undefined): Promise<void> {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let buffer = '';
    socket.setEncoding('utf8').on('data', (text: string) => {
      buffer += text;
      let index: number;
      while ((index = buffer.indexOf('\n')) !== -1) {
        const request = JSON.parse(buffer.slice(0, index)) as { id: number; method: string };
        buffer = buffer.slice(index + 1);
        const answer = reply(request, socket);
        if (answer !== undefined) socket.write(answer);
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
}

const hello = (request: { id: number }): string => `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { version: VERSION, pid: 1 } })}\n`;

beforeEach(() => {
  dir = mkdtempSync('/tmp/as-cli-');
  socketPath = join(dir, 'd.sock');
});

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<AssentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AssentError);
  return error as AssentError;
}

describe('DaemonClient', () => {
  it('R-CLI-5 no daemon: `unavailable` naming the socket path and `assent daemon run`', async () => {
    const error = await failure(DaemonClient.connect({ socketPath }));
    expect(error.type).toBe('unavailable');
    expect(error.details).toMatchObject({ socket: socketPath, reason: 'not-running' });
    expect(error.message).toContain(socketPath);
    expect(error.message).toContain('assent daemon run');
  });

  it('a daemon that accepts but never answers the handshake fails after the timeout, not never', async () => {
    await fakeDaemon(() => undefined);
    const error = await failure(DaemonClient.connect({ socketPath, timeoutMs: 200 }));
    expect(error.type).toBe('unavailable');
    expect(error.details).toMatchObject({ reason: 'handshake-timeout' });
    expect(error.message).toContain('assent daemon stop');
  });

  it('a peer that sends garbage closes the connection with a typed error', async () => {
    await fakeDaemon(() => 'this is not json\n');
    const error = await failure(DaemonClient.connect({ socketPath, timeoutMs: 2000 }));
    expect(error.type).toBe('internal');
    expect(error.message).toContain('not JSON');
  });

  it('a daemon that goes away mid-call rejects the waiting call with `unavailable` and fires onClose', async () => {
    await fakeDaemon((request, socket) => {
      if (request.method === 'daemon.hello') return hello(request);
      setTimeout(() => socket.destroy(), 20);
      return undefined;
    });
    const client = await DaemonClient.connect({ socketPath });
    let closed = false;
    client.onClose(() => (closed = true));
    const error = await failure(client.call('approvals.wait', { id: 'abcde' }));
    expect(error.type).toBe('unavailable');
    expect(error.message).toContain('closed the connection');
    expect(closed).toBe(true);
    // Later calls fail at once, naming the method that was not sent.
    const later = await failure(client.call('daemon.status'));
    expect(later.message).toContain('daemon.status was not sent');
  });

  it('an error of an unknown type from the wire becomes `internal`, keeping the message', async () => {
    await fakeDaemon((request) =>
      request.method === 'daemon.hello'
        ? hello(request)
        : `${JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32000, message: 'weird', data: { type: 'not_a_registered_type' } } })}\n`,
    );
    const client = await DaemonClient.connect({ socketPath });
    const error = await failure(client.call('x'));
    expect(error.type).toBe('internal');
    expect(error.message).toBe('weird');
    client.close();
  });

  it('replies are matched by id even when they arrive out of order', async () => {
    const held: { id: number; socket: Socket }[] = [];
    await fakeDaemon((request, socket) => {
      if (request.method === 'daemon.hello') return hello(request);
      held.push({ id: request.id, socket });
      if (held.length === 2) {
        for (const { id, socket: s } of held.reverse()) s.write(`${JSON.stringify({ jsonrpc: '2.0', id, result: { echo: id } })}\n`);
      }
      return undefined;
    });
    const client = await DaemonClient.connect({ socketPath });
    const [a, b] = await Promise.all([client.call<{ echo: number }>('first'), client.call<{ echo: number }>('second')]);
    expect(a.echo).toBeLessThan(b.echo);
    client.close();
  });

  it('an already aborted signal never sends the call', async () => {
    const methods: string[] = [];
    await fakeDaemon((request) => {
      methods.push(request.method);
      return request.method === 'daemon.hello' ? hello(request) : undefined;
    });
    const client = await DaemonClient.connect({ socketPath });
    const controller = new AbortController();
    controller.abort();
    await failure(client.call('daemon.status', {}, { signal: controller.signal }));
    await client.call('daemon.hello', { version: VERSION });
    expect(methods).toEqual(['daemon.hello', 'daemon.hello']);
    client.close();
  });
});
