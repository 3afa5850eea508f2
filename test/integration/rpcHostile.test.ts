// R-D-2: 10,000 malformed or hostile frames against the real daemon binary. Every
// frame that expects an answer gets a typed error (code -32000, data.type from the
// registry) or, for an oversize line, a closed connection; notifications get no
// reply, as JSON-RPC says. A well-behaved client is served throughout and the
// daemon process stays the same.
import { statSync } from 'node:fs';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TYPES } from '../../src/core/base/errors.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { VERSION } from '../../src/version.js';
import { daemonsForHome, makeTempHome } from '../helpers/daemon.js';
import type { TempHome } from '../helpers/daemon.js';

interface Frame {
  bytes: Buffer;
  /** Requests expect exactly one reply; notifications and blank lines expect none. */
  expectsReply: boolean;
  category: string;
}

/** Deterministic PRNG so a failure reproduces. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const line = (text: string): Buffer => Buffer.from(`${text}\n`);
const json = (value: unknown): Buffer => line(JSON.stringify(value));

function smallHostileFrame(random: () => number, n: number): Frame {
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const id = n;
  switch (n % 16) {
    case 0: {
      // Invalid JSON: truncated, garbage, random bytes without a newline inside.
      const good = JSON.stringify({ jsonrpc: '2.0', id, method: 'daemon.status', params: {} });
      const cut = good.slice(0, 1 + Math.floor(random() * (good.length - 2)));
      return { bytes: line(pick([cut, '{', '}', '{"a":', 'nul', 'tru', "{'single':1}", '{"a":1,}', 'NaN', '[1,2'])), expectsReply: true, category: 'invalid-json' };
    }
    case 1: {
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(random() * 64) }, () => Math.floor(random() * 256)).filter((b) => b !== 0x0a && b !== 0x20 && b !== 0x09 && b !== 0x0d));
      // Random bytes are almost never valid JSON; ones that are (a digit) still get an invalid_request.
      return { bytes: Buffer.concat([bytes.length === 0 ? Buffer.from('x') : bytes, Buffer.from('\n')]), expectsReply: true, category: 'random-bytes' };
    }
    case 2:
      return { bytes: json({ jsonrpc: pick([1, '1.0', null, true, '2', ['2.0']]), id, method: 'daemon.status', params: {} }), expectsReply: true, category: 'wrong-jsonrpc' };
    case 3:
      return { bytes: json({ jsonrpc: '2.0', id, method: pick([1, null, true, {}, [], '', 'x'.repeat(300)]), params: {} }), expectsReply: true, category: 'wrong-method-type' };
    case 4:
      return { bytes: json({ jsonrpc: '2.0', id: pick(['x'.repeat(257 + Math.floor(random() * 10_000)), { a: 1 }, [1], true, 1.5, 1e308, -1e300, 2 ** 60]), method: 'daemon.status', params: {} }), expectsReply: true, category: 'bad-id' };
    case 5:
      return { bytes: json({ jsonrpc: '2.0', id, method: `x.${Math.floor(random() * 1e9).toString(36)}`, params: {} }), expectsReply: true, category: 'unknown-method' };
    case 6:
      return { bytes: json({ jsonrpc: '2.0', id, method: pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'daemon', 'daemon.', '.status', 'DAEMON.STATUS', '$/cancelRequest2']), params: {} }), expectsReply: true, category: 'tricky-method' };
    case 7: {
      const batch = pick([[], [{ jsonrpc: '2.0', id, method: 'daemon.status' }], [1, 2, 3], [{ jsonrpc: '2.0', id, method: 'daemon.shutdown' }]]);
      return { bytes: json(batch), expectsReply: true, category: 'batch' };
    }
    case 8:
      return { bytes: json({ jsonrpc: '2.0', id, method: 'daemon.status', params: pick([[], [1], 'a', 1, true]) }), expectsReply: true, category: 'non-object-params' };
    case 9:
      return { bytes: json({ jsonrpc: '2.0', id, method: 'daemon.status', params: { unexpected: random() } }), expectsReply: true, category: 'unknown-param' };
    case 10:
      return { bytes: json({ jsonrpc: '2.0', id, method: 'daemon.hello', params: pick([{}, { version: 5 }, { version: '' }, { version: 'x'.repeat(100) }, { version: '0.0.0-other' }]) }), expectsReply: true, category: 'bad-hello' };
    case 11:
      return { bytes: line(`{"jsonrpc":"2.0","id":${id},"method":"daemon.status","params":{"__proto__":{"polluted":true}}}`), expectsReply: true, category: 'proto-pollution' };
    case 12:
      return { bytes: json(pick([null, 1, 'string', true, 0])), expectsReply: true, category: 'scalar' };
    case 13:
      // Notifications of nonsense and of real methods with bad params: no reply expected (never shutdown).
      return { bytes: json({ jsonrpc: '2.0', method: pick(['x.nothing', 'daemon.status', '$/cancelRequest']), params: pick([{ id: 'nope' }, { bad: 1 }, []]) }), expectsReply: false, category: 'notification' };
    case 14:
      return { bytes: Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0x0a]), expectsReply: true, category: 'invalid-utf8' };
    default: {
      // Moderately deep nesting inside params and as the whole frame.
      const depth = 100 + Math.floor(random() * 5000);
      return random() < 0.5
        ? { bytes: line(`{"jsonrpc":"2.0","id":${id},"method":"daemon.status","params":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`), expectsReply: true, category: 'deep-params' }
        : { bytes: line(`${'['.repeat(depth)}${']'.repeat(depth)}`), expectsReply: true, category: 'deep-frame' };
    }
  }
}

interface Reply {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: { type?: unknown; details?: unknown } };
}

/** A raw connection that sends frames and collects reply lines. */
function rawConnection(path: string): Promise<{ socket: Socket; replies: Reply[]; closed: Promise<void>; onReply(listener: () => void): void }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path });
    const replies: Reply[] = [];
    let buffer = '';
    let listener: () => void = () => undefined;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffer += text;
      let index: number;
      while ((index = buffer.indexOf('\n')) !== -1) {
        replies.push(JSON.parse(buffer.slice(0, index)) as Reply);
        buffer = buffer.slice(index + 1);
      }
      listener();
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, replies, closed, onReply: (l) => (listener = l) }));
    socket.once('error', reject);
  });
}

function isTypedError(reply: Reply): boolean {
  const type = reply.error?.data?.type;
  return reply.error?.code === -32000 && typeof type === 'string' && Object.prototype.hasOwnProperty.call(ERROR_TYPES, type) && typeof reply.error.message === 'string';
}

let t: TempHome;
let daemonPid: number | undefined;

beforeAll(async () => {
  t = makeTempHome();
  daemonPid = (await t.startDaemon()).pid;
});

afterAll(async () => {
  await t.cleanup();
});

describe('R-D-2 hostile frames', () => {
  it('R-D-2 10,000 malformed or hostile frames each get a typed error or a closed connection; a well-behaved client is served throughout', async () => {
    const random = prng(20261130);
    const good = await DaemonClient.connect({ socketPath: t.paths.socket });
    let goodAnswers = 0;
    let goodFailures = 0;
    let stop = false;
    const goodLoop = (async () => {
      while (!stop) {
        try {
          const status = await good.call<{ pid: number }>('daemon.status', {});
          if (status.pid === daemonPid) goodAnswers += 1;
          else goodFailures += 1;
        } catch {
          goodFailures += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    const TOTAL = 10_000;
    const OVERSIZE = 20;
    const ABRUPT = 30;
    const categories = new Map<string, number>();
    let framesSent = 0;
    let typedReplies = 0;

    // Oversize lines (2 MiB) and abrupt disconnects mid-frame, each on its own connection.
    for (let i = 0; i < OVERSIZE; i += 1) {
      const connection = await rawConnection(t.paths.socket);
      connection.socket.write(Buffer.alloc(2 * 1024 * 1024, i % 2 === 0 ? 0x61 : 0x5b)); // 'a' or '['
      connection.socket.write('\n');
      await connection.closed;
      expect(connection.replies).toHaveLength(1);
      expect(connection.replies[0]?.error?.data?.type).toBe('frame_too_large');
      framesSent += 1;
      typedReplies += 1;
    }
    categories.set('oversize-2MiB', OVERSIZE);
    for (let i = 0; i < ABRUPT; i += 1) {
      const connection = await rawConnection(t.paths.socket);
      connection.socket.write(`{"jsonrpc":"2.0","id":${i},"method":"daemon.st`);
      connection.socket.destroy();
      framesSent += 1;
    }
    categories.set('abrupt-close', ABRUPT);

    // The rest in pipelined chunks on one connection, each chunk closed by a sentinel request.
    const connection = await rawConnection(t.paths.socket);
    let n = 0;
    let chunk = 0;
    while (framesSent < TOTAL) {
      const frames: Frame[] = [];
      while (frames.length < 200 && framesSent + frames.length < TOTAL) frames.push(smallHostileFrame(random, n++));
      const before = connection.replies.length;
      const sentinel = `sentinel-${chunk++}`;
      const answered = new Promise<void>((resolve) =>
        connection.onReply(() => {
          if (connection.replies.some((reply) => reply.id === sentinel)) resolve();
        }),
      );
      connection.socket.write(Buffer.concat([...frames.map((frame) => frame.bytes), json({ jsonrpc: '2.0', id: sentinel, method: 'daemon.hello', params: { version: VERSION } })]));
      await answered;
      const replies = connection.replies.slice(before);
      const sentinelReply = replies.pop();
      expect(sentinelReply).toMatchObject({ id: sentinel, result: { version: VERSION } });
      const expected = frames.filter((frame) => frame.expectsReply).length;
      const untyped = replies.filter((reply) => !isTypedError(reply));
      expect(untyped).toEqual([]);
      expect(replies).toHaveLength(expected);
      typedReplies += replies.length;
      framesSent += frames.length;
      for (const frame of frames) categories.set(frame.category, (categories.get(frame.category) ?? 0) + 1);
    }
    connection.socket.destroy();

    stop = true;
    await goodLoop;
    good.close();

    expect(framesSent).toBe(TOTAL);
    expect(typedReplies).toBeGreaterThan(9000);
    expect(goodFailures).toBe(0);
    expect(goodAnswers).toBeGreaterThan(0);
    // The same daemon process still runs and serves.
    expect(daemonsForHome(t.home)).toEqual([daemonPid]);
    const after = await DaemonClient.connect({ socketPath: t.paths.socket });
    expect(after.daemon?.pid).toBe(daemonPid);
    after.close();
    // Hostile input does not flood the log.
    expect(statSync(t.paths.log).size).toBeLessThan(64 * 1024);
    // Every category was exercised.
    expect([...categories.keys()].sort()).toEqual(
      [
        'abrupt-close', 'bad-hello', 'bad-id', 'batch', 'deep-frame', 'deep-params', 'invalid-json', 'invalid-utf8', 'non-object-params',
        'notification', 'oversize-2MiB', 'proto-pollution', 'random-bytes', 'scalar', 'tricky-method', 'unknown-method', 'unknown-param', 'wrong-jsonrpc', 'wrong-method-type',
      ].sort(),
    );
  }, 120_000);
});
