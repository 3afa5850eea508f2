// runDaemon in-process: the DaemonContext contract other services build on —
// shutdown hooks run while clients are still connected, status sections merge
// into daemon.status, daemon.shutdown stops it, files are cleaned up.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDaemon } from '../../src/heads/daemon/daemonMain.js';
import type { DaemonContext } from '../../src/heads/daemon/daemonMain.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { resolveStatePaths } from '../../src/state/statePaths.js';
import type { StatePaths } from '../../src/state/statePaths.js';
import { daemonOperations } from '../../src/operations/daemonOperations.js';
import { VERSION } from '../../src/version.js';

let root: string;
let paths: StatePaths;
const clients: DaemonClient[] = [];
const stops: AbortController[] = [];

beforeEach(() => {
  root = mkdtempSync('/tmp/as-life-');
  paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of stops.splice(0)) s.abort();
  await new Promise((resolve) => setTimeout(resolve, 50));
  rmSync(root, { recursive: true, force: true });
});

interface Started {
  done: Promise<void>;
  ctx: DaemonContext;
  stop: AbortController;
}

async function start(setup: (ctx: DaemonContext) => void = () => undefined): Promise<Started> {
  const stop = new AbortController();
  stops.push(stop);
  let ctx: DaemonContext | undefined;
  let started: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const done = runDaemon({
    paths,
    handleSignals: false,
    signal: stop.signal,
    operations: (c) => {
      ctx = c;
      setup(c);
      return daemonOperations(c);
    },
    onStarted: () => started(),
  });
  await Promise.race([ready, done]);
  return { done, ctx: ctx as DaemonContext, stop };
}

async function connect(): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: paths.socket });
  clients.push(client);
  return client;
}

describe('runDaemon lifecycle', () => {
  it('writes daemon.pid (0600) with its pid, serves, and on stop removes socket and pid file', async () => {
    const { done, stop } = await start();
    expect(readFileSync(paths.pid, 'utf8').trim()).toBe(String(process.pid));
    expect(statSync(paths.pid).mode & 0o777).toBe(0o600);
    expect(statSync(paths.home).mode & 0o777).toBe(0o700);
    const client = await connect();
    expect(client.daemon).toEqual({ version: VERSION, pid: process.pid });
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    stop.abort();
    await done;
    expect(existsSync(paths.socket)).toBe(false);
    expect(existsSync(paths.pid)).toBe(false);
    await closed;
    expect(client.closed).toBe(true);
  });

  it('R-D-6 runs every shutdown hook in order while clients are still connected, even when one fails', async () => {
    const order: string[] = [];
    const holder: { client?: DaemonClient } = {};
    const { done, stop } = await start((ctx) => {
      ctx.onShutdown(async () => {
        order.push(`first:${holder.client?.closed === false ? 'connected' : 'gone'}`);
        throw new TypeError('hook failure');
      });
      ctx.onShutdown(() => {
        order.push(`second:${existsSync(paths.socket) ? 'socket' : 'nosocket'}`);
      });
    });
    holder.client = await connect();
    stop.abort();
    await done;
    expect(order).toEqual(['first:connected', 'second:socket']);
    expect(existsSync(paths.socket)).toBe(false);
  });

  it('daemon.status merges every status section and counts connections; a failing section does not break it', async () => {
    const { done, stop } = await start((ctx) => {
      ctx.status['approvals'] = () => ({ pending: 3 });
      ctx.status['broken'] = () => {
        throw new TypeError('nope');
      };
    });
    const a = await connect();
    await connect();
    const status = await a.call<Record<string, unknown>>('daemon.status', {});
    expect(status).toMatchObject({ pid: process.pid, version: VERSION, socket: paths.socket, home: paths.home, connections: 2, approvals: { pending: 3 } });
    expect(status['broken']).toEqual({ error: 'unavailable; see daemon.log' });
    expect(typeof status['uptimeMs']).toBe('number');
    stop.abort();
    await done;
  });

  it('daemon.shutdown answers first, then stops the daemon', async () => {
    const { done } = await start();
    const client = await connect();
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    expect(await client.call('daemon.shutdown', {})).toEqual({ stopping: true, pid: process.pid });
    await closed;
    await done;
    expect(existsSync(paths.pid)).toBe(false);
  });

  it('R-D-1 refuses to start while a live daemon answers on the socket, leaving it serving', async () => {
    const first = await start();
    const error = await runDaemon({ paths, handleSignals: false, operations: daemonOperations }).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'conflict', details: { pid: process.pid, socket: paths.socket } });
    expect((error as Error).message).toContain('assent daemon stop');
    const client = await connect();
    expect(await client.call('daemon.status', {})).toMatchObject({ pid: process.pid });
    expect(existsSync(paths.pid)).toBe(true);
    first.stop.abort();
    await first.done;
  });
});
