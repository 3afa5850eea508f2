// Socket resources a local process can exhaust (hardening 2): connections that
// never complete the version handshake are closed after the handshake window,
// have their own small cap (oldest evicted first), and never count against the
// connection cap, so idle peers cannot lock `assent pending` or a new gateway out.
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DaemonContext } from '../../src/heads/daemon/daemonMain.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { startRpcServer } from '../../src/heads/daemon/rpcServer.js';
import type { RpcServer, RpcServerOptions } from '../../src/heads/daemon/rpcServer.js';
import { resolveStatePaths } from '../../src/state/statePaths.js';
import { daemonOperations } from '../../src/operations/daemonOperations.js';
import { silentLogger } from '../../src/service/logger.js';
import { VERSION } from '../../src/version.js';
import { makeTempHome } from '../helpers/daemon.js';
import type { TempHome } from '../helpers/daemon.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection that may never send anything; collects what the daemon says and when it closes. */
interface IdlePeer {
  socket: Socket;
  lines: string[];
  closed: boolean;
  closedAt: number;
}

function idlePeer(path: string): Promise<IdlePeer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path });
    const peer: IdlePeer = { socket, lines: [], closed: false, closedAt: 0 };
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffer += text;
      let index: number;
      while ((index = buffer.indexOf('\n')) !== -1) {
        peer.lines.push(buffer.slice(0, index));
        buffer = buffer.slice(index + 1);
      }
    });
    socket.on('close', () => {
      peer.closed = true;
      peer.closedAt = Date.now();
    });
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      socket.on('error', () => undefined);
      resolve(peer);
    });
    socket.once('error', reject);
  });
}

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

describe('R-D-2 handshake window and connection caps, in-process (hardening 2)', () => {
  let dir: string;
  let socketPath: string;
  let server: RpcServer | undefined;
  const peers: IdlePeer[] = [];
  const clients: DaemonClient[] = [];

  async function start(options: Partial<RpcServerOptions> = {}): Promise<RpcServer> {
    const paths = resolveStatePaths({ ASSENT_HOME: dir });
    const ctx = {
      paths,
      logger: silentLogger,
      startedAt: Date.now(),
      principal: 'owner:test',
      status: {},
      connections: () => server?.connections() ?? 0,
      onShutdown: () => undefined,
      requestShutdown: () => undefined,
    } satisfies DaemonContext;
    server = await startRpcServer({
      socketPath,
      operations: () => daemonOperations(ctx),
      contextFor: () => ({ principal: 'owner:test', head: 'rpc' }),
      logger: silentLogger,
      ...options,
    });
    return server;
  }

  async function client(): Promise<DaemonClient> {
    const c = await DaemonClient.connect({ socketPath, timeoutMs: 2000 });
    clients.push(c);
    return c;
  }

  beforeEach(() => {
    dir = mkdtempSync('/tmp/as-hs-');
    socketPath = join(dir, 's.sock');
  });

  afterEach(async () => {
    for (const p of peers.splice(0)) p.socket.destroy();
    for (const c of clients.splice(0)) c.close();
    await server?.close();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('R-D-2 (hardening 2) a connection that never sends daemon.hello is closed after the handshake window, with a typed error naming it', async () => {
    await start({ handshakeTimeoutMs: 300 });
    const idle = await idlePeer(socketPath);
    peers.push(idle);
    const openedAt = Date.now();
    expect(await waitUntil(() => idle.closed, 3000)).toBe(true);
    expect(idle.closedAt - openedAt).toBeGreaterThanOrEqual(250);
    const reply = JSON.parse(idle.lines[0] ?? '{}') as { id: unknown; error?: { code: number; message: string; data: { type: string; details: Record<string, unknown> } } };
    expect(reply).toMatchObject({ id: null, error: { code: -32000, data: { type: 'timeout', details: { handshakeTimeoutMs: 300 } } } });
    expect(reply.error?.message).toContain('daemon.hello');
  });

  it('R-D-2 (hardening 2) a connection that sends other frames but no hello is still closed after the window', async () => {
    await start({ handshakeTimeoutMs: 300 });
    const chatty = await idlePeer(socketPath);
    peers.push(chatty);
    const timer = setInterval(() => chatty.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'daemon.status', params: {} })}\n`), 50);
    try {
      expect(await waitUntil(() => chatty.closed, 3000)).toBe(true);
    } finally {
      clearInterval(timer);
    }
  });

  it('R-D-2 (hardening 2) a handshaken connection stays open past the window', async () => {
    await start({ handshakeTimeoutMs: 200 });
    const c = await client();
    await sleep(500);
    expect(c.closed).toBe(false);
    expect(await c.call('daemon.status', {})).toMatchObject({ version: VERSION });
  });

  it('R-D-2 (hardening 2) more idle connections than the caps: new clients are still served, idle ones are evicted oldest first', async () => {
    await start({ maxConnections: 3, maxPendingHandshakes: 4, handshakeTimeoutMs: 60_000 });
    for (let n = 0; n < 10; n += 1) peers.push(await idlePeer(socketPath));
    // Only the newest four idle peers are kept; the older ones were closed to make room.
    expect(await waitUntil(() => peers.slice(0, 6).every((p) => p.closed), 3000)).toBe(true);
    expect(peers.slice(6).some((p) => p.closed)).toBe(false);
    const evicted = JSON.parse(peers[0]?.lines[0] ?? '{}') as { error?: { data: { type: string }; message: string } };
    expect(evicted.error?.data.type).toBe('unavailable');
    expect(evicted.error?.message).toContain('daemon.hello');
    // Three real clients fit under maxConnections although ten idle peers came first
    // (the first of them, arriving while four idle peers waited, evicted one more).
    const served = [await client(), await client(), await client()];
    for (const c of served) expect(await c.call('daemon.status', {})).toMatchObject({ version: VERSION });
    expect(await waitUntil(() => peers.filter((p) => !p.closed).length === 3, 3000)).toBe(true);
    expect(server?.connections()).toBe(3 + 3);
  });

  it('R-D-2 (hardening 2) the connection cap counts handshaken connections: one past it is refused at hello with the limit named', async () => {
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
});

describe('R-D-2 idle peers against the real daemon (hardening 2)', () => {
  let t: TempHome | undefined;
  const peers: IdlePeer[] = [];

  afterEach(async () => {
    for (const p of peers.splice(0)) p.socket.destroy();
    await t?.cleanup();
    t = undefined;
  });

  it('R-D-2 (hardening 2) 300 raw connections that never send anything: `assent pending` and a new RPC client still work, and the idle ones are closed after the 5 s window', async () => {
    t = makeTempHome();
    await t.startDaemon();
    const openedAt = Date.now();
    for (let n = 0; n < 300; n += 1) peers.push(await idlePeer(t.paths.socket));
    const pending = await t.runCli(['pending', '--json']);
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout)).toMatchObject({ ok: true, data: [] });
    const fresh = await DaemonClient.connect({ socketPath: t.paths.socket, timeoutMs: 3000 });
    try {
      expect(await fresh.call('daemon.status', {})).toMatchObject({ version: VERSION });
      expect(await waitUntil(() => peers.every((p) => p.closed), 10_000)).toBe(true);
      // Most were evicted at once for newer connections; the newest ones lived until the window closed them.
      const survivors = peers.filter((p) => p.closedAt - openedAt >= 4000);
      expect(survivors.length).toBeGreaterThan(0);
      // The handshaken client is untouched.
      expect(fresh.closed).toBe(false);
      expect(await fresh.call('daemon.status', {})).toMatchObject({ version: VERSION });
    } finally {
      fresh.close();
    }
  }, 30_000);
});
