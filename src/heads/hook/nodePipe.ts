// The hook's two pipes — the daemon's Unix socket, and stdin when the agent
// gives a pipe or socket — read and written through Node's own pipe handle,
// the one net.Socket wraps, without the stream modules `net` loads: those cost
// about a tenth of `node -e 0` on every hook run (SPEC §14).
//
// The handle is Node's internal API: a call it does not expect aborts the
// process (no exit 2, so no block), where a JavaScript error would be answered
// deny. So it is used only on the Node majors whose handle
// test/unit/heads/hook/nodePipe.test.ts has run on (PIPE_HANDLE_NODE_MAJORS), only
// as this file calls it, and a descriptor only when it is a pipe or socket (the
// handle aborts on anything it cannot poll). Anywhere else callers get
// undefined and use `net` and `node:fs`; the hook answers the same either way.

const { fstatSync } = process.getBuiltinModule('node:fs');
const { getSystemErrorName } = process.getBuiltinModule('node:util');

interface PipeHandle {
  onread: (buffer: ArrayBuffer | undefined) => void;
  open(fd: number): number;
  connect(request: ConnectRequest, path: string): number;
  readStart(): number;
  readStop(): number;
  writeUtf8String(request: WriteRequest, text: string): number;
  close(callback?: () => void): void;
}

interface ConnectRequest {
  oncomplete: ((status: number) => void) | null;
}

interface WriteRequest {
  handle: PipeHandle | null;
  async: boolean;
  oncomplete: ((status: number) => void) | null;
}

interface PipeBindings {
  Pipe: new (type: number) => PipeHandle;
  PipeConnectWrap: new () => ConnectRequest;
  WriteWrap: new () => WriteRequest;
  socketType: number;
  /** Shared with the handle: the byte count (or error) of a read, its offset, whether the last write went async. */
  state: Int32Array;
  readBytes: number;
  readOffset: number;
  lastWriteAsync: number;
}

/** The Node majors the pipe handle is used on: add one only after nodePipe.test.ts passes on it. */
export const PIPE_HANDLE_NODE_MAJORS: readonly string[] = ['20'];

/** libuv's end-of-stream status, the same on every platform (uv-errno.h). */
const UV_EOF = -4095;

/** A read callback for a handle that is closing: the handle takes only functions. */
const IGNORE_READ = (): void => undefined;

let loaded: PipeBindings | null | undefined;

/** Node's pipe handle and its requests, or null when this Node does not offer them as expected. */
function pipeBindings(): PipeBindings | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  const binding = (process as { binding?: (name: string) => unknown }).binding;
  if (typeof binding !== 'function' || !PIPE_HANDLE_NODE_MAJORS.includes(process.versions.node.split('.')[0] ?? '')) return null;
  const quiet = process.noDeprecation;
  try {
    // process.binding is deprecated (DEP0111): no warning may reach the agent's stderr, none may throw.
    process.noDeprecation = true;
    const pipe = binding.call(process, 'pipe_wrap') as { Pipe?: unknown; PipeConnectWrap?: unknown; constants?: { SOCKET?: unknown } };
    const stream = binding.call(process, 'stream_wrap') as { WriteWrap?: unknown; streamBaseState?: unknown; kReadBytesOrError?: unknown; kArrayBufferOffset?: unknown; kLastWriteWasAsync?: unknown };
    const { Pipe, PipeConnectWrap } = pipe;
    const { WriteWrap, streamBaseState, kReadBytesOrError, kArrayBufferOffset, kLastWriteWasAsync } = stream;
    const socketType = pipe.constants?.SOCKET;
    if (typeof Pipe !== 'function' || typeof PipeConnectWrap !== 'function' || typeof WriteWrap !== 'function' || typeof socketType !== 'number') return null;
    if (!(streamBaseState instanceof Int32Array) || typeof kReadBytesOrError !== 'number' || typeof kArrayBufferOffset !== 'number' || typeof kLastWriteWasAsync !== 'number') return null;
    const methods = Pipe.prototype as Record<string, unknown>;
    if (!['open', 'connect', 'readStart', 'readStop', 'writeUtf8String', 'close'].every((name) => typeof methods[name] === 'function')) return null;
    loaded = {
      Pipe: Pipe as PipeBindings['Pipe'],
      PipeConnectWrap: PipeConnectWrap as PipeBindings['PipeConnectWrap'],
      WriteWrap: WriteWrap as PipeBindings['WriteWrap'],
      socketType,
      state: streamBaseState,
      readBytes: kReadBytesOrError,
      readOffset: kArrayBufferOffset,
      lastWriteAsync: kLastWriteWasAsync,
    };
  } catch {
    loaded = null;
  } finally {
    process.noDeprecation = quiet;
  }
  return loaded;
}

/** An error as net gives it: `connect ENOENT /run/…/daemon.sock`, with its code, errno and syscall. */
function errnoError(status: number, syscall: string, path?: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`${syscall} ${code}${path === undefined ? '' : ` ${path}`}`), { code, errno: status, syscall });
}

type Listeners = {
  connect: Array<() => void>;
  data: Array<(chunk: Buffer) => void>;
  end: Array<() => void>;
  error: Array<(error: NodeJS.ErrnoException) => void>;
  close: Array<() => void>;
};

/** What the hook uses of a socket: net.Socket's events and methods, nothing else. */
export interface HookSocket {
  on(event: 'connect' | 'close', listener: () => void): this;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): this;
  write(text: string): void;
  destroy(): void;
}

/** What the hook uses of its stdin stream: data, end, error; destroy to stop reading. */
export interface HookInput {
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'end', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  removeAllListeners(event: 'data'): this;
  destroy(): void;
}

/** Write requests libuv still holds, kept reachable until it is done with them. */
const writesInFlight = new Set<WriteRequest>();

/**
 * One pipe handle with net.Socket's events: `connect`, `data` (a copy of each
 * chunk), `end` then `close` at the peer's end, `error` then `close` on a
 * failure; `destroy()` closes it, and then only `close` follows.
 */
class PipeStream implements HookSocket, HookInput {
  private readonly listeners: Listeners = { connect: [], data: [], end: [], error: [], close: [] };
  private readonly queued: string[] = [];
  private connected = false;
  private closed = false;
  /** The socket connected to, named in its errors. */
  private path: string | undefined;

  constructor(
    private readonly bindings: PipeBindings,
    private readonly handle: PipeHandle,
  ) {}

  on(event: keyof Listeners, listener: (...args: never[]) => void): this {
    (this.listeners[event] as Array<(...args: never[]) => void>).push(listener);
    return this;
  }

  removeAllListeners(event: keyof Listeners): this {
    this.listeners[event] = [];
    return this;
  }

  private emit(event: 'connect' | 'end' | 'close'): void;
  private emit(event: 'data', chunk: Buffer): void;
  private emit(event: 'error', error: NodeJS.ErrnoException): void;
  private emit(event: keyof Listeners, arg?: Buffer | NodeJS.ErrnoException): void {
    for (const listener of [...this.listeners[event]]) (listener as (value: typeof arg) => void)(arg);
  }

  /** Starts reading; false (and an `error`) when the handle refuses. */
  start(): boolean {
    const { state, readBytes, readOffset } = this.bindings;
    this.handle.onread = (buffer) => {
      const count = state[readBytes] ?? 0;
      if (count > 0 && buffer !== undefined) {
        if (!this.closed) this.emit('data', Buffer.from(new Uint8Array(buffer, state[readOffset] ?? 0, count)));
      } else if (count < 0) {
        if (count === UV_EOF) {
          if (!this.closed) this.emit('end');
          this.destroy();
        } else this.fail(count, 'read');
      }
    };
    const status = this.handle.readStart();
    if (status !== 0) {
      this.fail(status, 'read');
      return false;
    }
    return true;
  }

  connect(path: string): this {
    this.path = path;
    const request = new this.bindings.PipeConnectWrap();
    request.oncomplete = (status) => {
      if (this.closed) return;
      if (status !== 0) {
        this.fail(status, 'connect');
        return;
      }
      if (!this.start()) return;
      this.connected = true;
      // What was written before goes first, as net sends it.
      for (const text of this.queued.splice(0)) this.write(text);
      this.emit('connect');
    };
    const status = this.handle.connect(request, path);
    if (status !== 0) queueMicrotask(() => this.fail(status, 'connect'));
    return this;
  }

  write(text: string): void {
    if (this.closed) return;
    if (!this.connected) {
      this.queued.push(text);
      return;
    }
    const request = new this.bindings.WriteWrap();
    request.handle = this.handle;
    request.async = false;
    request.oncomplete = (status) => {
      writesInFlight.delete(request);
      if (status !== 0) this.fail(status, 'write');
    };
    const status = this.handle.writeUtf8String(request, text);
    if (status !== 0) queueMicrotask(() => this.fail(status, 'write'));
    else if (this.bindings.state[this.bindings.lastWriteAsync] !== 0) writesInFlight.add(request);
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.onread = IGNORE_READ;
    this.handle.close(() => this.emit('close'));
  }

  private fail(status: number, syscall: string): void {
    if (this.closed) return;
    this.emit('error', errnoError(status, syscall, syscall === 'connect' ? this.path : undefined));
    this.destroy();
  }
}

/** A connection to the Unix socket at `path` on Node's pipe handle; undefined where that handle is not available. */
export function connectPipe(path: string): HookSocket | undefined {
  const bindings = pipeBindings();
  if (bindings === null) return undefined;
  return new PipeStream(bindings, new bindings.Pipe(bindings.socketType)).connect(path);
}

/**
 * Descriptor `fd` (stdin) read on Node's pipe handle, when it is a pipe or a
 * socket — what agents give their hooks. Undefined for anything else (a file,
 * a terminal, /dev/null), which the handle cannot wait on, or where the handle
 * is not available.
 */
export function readPipe(fd: number): HookInput | undefined {
  let pollable: boolean;
  try {
    const info = fstatSync(fd);
    pollable = info.isFIFO() || info.isSocket();
  } catch {
    return undefined;
  }
  const bindings = pollable ? pipeBindings() : null;
  if (bindings === null) return undefined;
  const handle = new bindings.Pipe(bindings.socketType);
  if (handle.open(fd) !== 0) {
    handle.close();
    return undefined;
  }
  const input = new PipeStream(bindings, handle);
  // Reading starts once the caller has added its listeners, so even a refusal to start reaches them.
  queueMicrotask(() => input.start());
  return input;
}
