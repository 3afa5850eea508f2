// The hook's pipes on Node's own pipe handle (nodePipe.ts) behave as net.Socket
// does for everything the hook uses: connect, data, the peer's end, errors with
// net's codes, destroy, writes queued before the connection and large ones.
// These tests are the contract PIPE_HANDLE_NODE_MAJORS names: a Node major is
// added there only once they pass on it (on other majors the hook uses net, and
// only that fallback is checked here).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, constants as fsConstants, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectPipe, PIPE_HANDLE_NODE_MAJORS, readPipe, type HookInput, type HookSocket } from '../../../../src/heads/hook/nodePipe.js';

/** Whether this Node's major uses the pipe handle. */
const enabled = PIPE_HANDLE_NODE_MAJORS.includes(process.versions.node.split('.')[0] ?? '');

let dir: string;
const servers: Server[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'as-pipe-'));
});
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A Unix socket server in the test's directory; `onConnection` gets each accepted socket. */
async function listen(onConnection: (socket: Socket) => void): Promise<string> {
  const path = join(dir, 's.sock');
  const server = createServer(onConnection);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return path;
}

interface Trace {
  events: string[];
  data: Buffer;
  closed: Promise<void>;
  error?: NodeJS.ErrnoException;
}

/** Everything a socket emits, in order, until `close`. */
function trace(socket: HookSocket): Trace {
  const chunks: Buffer[] = [];
  const result: Trace = { events: [], data: Buffer.alloc(0), closed: Promise.resolve() };
  result.closed = new Promise((resolve) => {
    socket.on('connect', () => result.events.push('connect'));
    socket.on('data', (chunk) => {
      if (result.events.at(-1) !== 'data') result.events.push('data');
      chunks.push(chunk);
    });
    socket.on('error', (error) => {
      result.events.push(`error ${error.code}`);
      result.error = error;
    });
    socket.on('close', () => {
      result.events.push('close');
      result.data = Buffer.concat(chunks);
      resolve();
    });
  });
  return result;
}

/** Both implementations of the same socket: Node's pipe handle and net. */
function bothSockets(path: string): Array<[string, () => HookSocket]> {
  return [
    ['pipe handle', () => connectPipe(path) as HookSocket],
    ['net', () => createConnection({ path })],
  ];
}

it('the pipe handle is offered exactly on the Node majors PIPE_HANDLE_NODE_MAJORS names', () => {
  const socket = connectPipe(join(dir, 'missing.sock'));
  expect(socket !== undefined).toBe(enabled);
  socket?.destroy();
});

describe.skipIf(!enabled)('the daemon socket on the pipe handle (R-HOOK-8, SPEC §14)', () => {
  it('connects, sends what was written before and after the connection, reads the answer, and closes at the peer end, as net does', async () => {
    const path = await listen((socket) => {
      let got = '';
      socket.on('data', (chunk) => {
        got += String(chunk);
        if (got.endsWith('two\n')) socket.end(`echo:${got}`);
      });
    });
    for (const [name, open] of bothSockets(path)) {
      const socket = open();
      socket.write('one\n');
      const seen = trace(socket);
      socket.on('connect', () => socket.write('two\n'));
      await seen.closed;
      expect([name, seen.events]).toEqual([name, ['connect', 'data', 'close']]);
      expect(String(seen.data)).toBe('echo:one\ntwo\n');
    }
  });

  it('writes a frame larger than the socket buffer whole (an asynchronous write)', async () => {
    const big = `${'x'.repeat(3 * 1024 * 1024)}\n`;
    const path = await listen((socket) => {
      let bytes = 0;
      socket.on('data', (chunk) => {
        bytes += chunk.length;
        if (bytes === big.length) socket.end(String(bytes));
      });
    });
    const socket = connectPipe(path) as HookSocket;
    const seen = trace(socket);
    socket.on('connect', () => socket.write(big));
    await seen.closed;
    expect(String(seen.data)).toBe(String(big.length));
  });

  it('fails with ENOENT where nothing is, and ECONNREFUSED where nobody listens, with the path named, as net does', async () => {
    const stale = join(dir, 'stale.sock');
    // A socket file with no listener: what a daemon killed -9 leaves.
    execFileSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.exit(0))`]);
    for (const [path, code] of [[join(dir, 'missing.sock'), 'ENOENT'], [stale, 'ECONNREFUSED']] as const) {
      for (const [name, open] of bothSockets(path)) {
        const seen = trace(open());
        await seen.closed;
        expect([name, seen.events]).toEqual([name, [`error ${code}`, 'close']]);
        expect(seen.error?.syscall).toBe('connect');
        expect(seen.error?.message).toContain(path);
      }
    }
  });

  it('destroyed before or after connecting, says only close, and nothing reaches the peer', async () => {
    const received: string[] = [];
    const path = await listen((socket) => socket.on('data', (chunk) => received.push(String(chunk))));
    const early = connectPipe(path) as HookSocket;
    const earlyTrace = trace(early);
    early.write('never\n');
    early.destroy();
    await earlyTrace.closed;
    expect(earlyTrace.events).toEqual(['close']);
    const late = connectPipe(path) as HookSocket;
    const lateTrace = trace(late);
    late.on('connect', () => {
      late.destroy();
      late.write('after\n');
    });
    await lateTrace.closed;
    expect(lateTrace.events).toEqual(['connect', 'close']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual([]);
  });
});

/** Reads a HookInput to its end: the bytes, and the events in order. */
function drain(input: HookInput): Promise<{ events: string[]; data: Buffer }> {
  return new Promise((resolve) => {
    const events: string[] = [];
    const chunks: Buffer[] = [];
    input.on('data', (chunk) => {
      if (events.at(-1) !== 'data') events.push('data');
      chunks.push(chunk);
    });
    input.on('error', (error) => events.push(`error ${(error as NodeJS.ErrnoException).code}`));
    input.on('end', () => {
      events.push('end');
      resolve({ events, data: Buffer.concat(chunks) });
    });
  });
}

describe.skipIf(!enabled)('stdin on the pipe handle (R-HOOK-1)', () => {
  it('reads a pipe to its end', async () => {
    const fifo = join(dir, 'in.fifo');
    execFileSync('mkfifo', [fifo]);
    // Non-blocking, so opening the read end waits for no writer; the handle polls it.
    const reader = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const writer = openSync(fifo, fsConstants.O_WRONLY);
    const text = `{"event":"${'é'.repeat(20_000)}"}`;
    writeSync(writer, text);
    closeSync(writer);
    const input = readPipe(reader);
    expect(input).toBeDefined();
    const { events, data } = await drain(input as HookInput);
    expect(events).toEqual(['data', 'end']);
    expect(data.toString('utf8')).toBe(text);
  });

  it('refuses a pipe end it cannot read with an error (ENOTCONN), not an abort', async () => {
    const fifo = join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const writer = openSync(fifo, fsConstants.O_WRONLY);
    try {
      const input = readPipe(writer) as HookInput;
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => input.on('error', resolve));
      expect(error.code).toBe('ENOTCONN');
    } finally {
      closeSync(reader);
    }
  });

  it('declines what it cannot poll — a file, /dev/null, a closed descriptor — so the caller reads it another way', () => {
    const file = join(dir, 'event.json');
    writeFileSync(file, '{}');
    for (const path of [file, '/dev/null']) {
      const fd = openSync(path, 'r');
      try {
        expect([path, readPipe(fd)]).toEqual([path, undefined]);
      } finally {
        closeSync(fd);
      }
    }
    const closed = openSync(file, 'r');
    closeSync(closed);
    expect(readPipe(closed)).toBeUndefined();
  });
});
