// The client side of the daemon socket: connects (auto-spawning the daemon when
// asked, R-D-1), checks versions first (R-D-3), correlates replies with calls and
// turns wire errors back into AssentError with the daemon's type.
import { lstatSync, type Stats } from 'node:fs';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { AssentError, isErrorType } from '../../core/base/errors.js';
import { VERSION } from '../../version.js';
import type { AutoSpawnOptions } from './autoSpawn.js';
import { CANCEL_METHOD, LineDecoder, encodeFrame } from './framing.js';

/** Replies may be larger than requests (a long approvals list); still bounded. */
const MAX_REPLY_FRAME_BYTES = 64 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

export interface DaemonClientOptions {
  socketPath: string;
  /** Start a daemon when none answers; `false` (default) fails with `unavailable`. */
  autoSpawn?: AutoSpawnOptions | false;
  /** Limit for connecting and the version handshake, not for calls. */
  timeoutMs?: number;
  /** Version announced in `daemon.hello`; tests set another to provoke a mismatch. */
  version?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface HelloResult {
  version: string;
  pid: number;
}

interface PendingCall {
  method: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

function notRunning(socketPath: string, cause?: unknown): AssentError {
  return new AssentError(
    'unavailable',
    `No assent daemon answers on ${socketPath}. Start one with \`assent daemon run\` (or let a CLI command auto-start it).`,
    { details: { socket: socketPath, reason: 'not-running' }, cause },
  );
}

function connectError(socketPath: string, error: NodeJS.ErrnoException): AssentError {
  if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') return notRunning(socketPath, error);
  if (error.code === 'EACCES' || error.code === 'EPERM') {
    return new AssentError('unavailable', `Permission denied on the daemon socket ${socketPath}; it belongs to another user. Use your own ASSENT_HOME.`, {
      details: { socket: socketPath, reason: 'permission' },
      cause: error,
    });
  }
  return new AssentError('unavailable', `Cannot connect to the daemon socket ${socketPath}: ${error.message}.`, {
    details: { socket: socketPath, reason: error.code ?? 'connect-failed' },
    cause: error,
  });
}

/**
 * The daemon's socket must be ours: owned by this user. Otherwise
 * another local user could answer in the daemon's place (e.g. with
 * ASSENT_SOCKET in a shared directory) and hand out servers and policy (R-STATE-1).
 */
function checkSocketOwner(socketPath: string): void {
  let stat: Stats;
  try {
    stat = lstatSync(socketPath);
  } catch {
    return; // Missing: connecting fails with the usual "not running" error.
  }
  // A leftover of our own (even a plain file) is stale and auto-spawn clears it; another user's is refused.
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new AssentError(
      'state_insecure',
      `${socketPath} is not a socket owned by you (owner uid ${stat.uid}); refusing to talk to it. Remove it, or point ASSENT_SOCKET at a path inside your own 0700 directory.`,
      { details: { socket: socketPath, reason: 'socket-not-owned' } },
    );
  }
}

function openSocket(socketPath: string, timeoutMs: number): Promise<Socket> {
  try {
    checkSocketOwner(socketPath);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: socketPath });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new AssentError('unavailable', `The daemon socket ${socketPath} did not accept a connection within ${timeoutMs} ms. Check \`assent daemon status\` or daemon.log.`, {
        details: { socket: socketPath, reason: 'connect-timeout' },
      }));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(connectError(socketPath, error));
    });
  });
}

/** Converts a JSON-RPC error object from the daemon into a typed error. */
function fromWire(error: unknown, method: string): AssentError {
  if (typeof error === 'object' && error !== null) {
    const { message, data } = error as { message?: unknown; data?: { type?: unknown; details?: unknown } };
    const type = isErrorType(data?.type) ? data.type : 'internal';
    const details = typeof data?.details === 'object' && data.details !== null ? (data.details as Record<string, unknown>) : undefined;
    const text = typeof message === 'string' ? message : `The daemon refused ${method}.`;
    return new AssentError(type, text, details === undefined ? {} : { details });
  }
  return new AssentError('internal', `The daemon answered ${method} with a malformed error.`);
}

export class DaemonClient {
  private readonly pending = new Map<number, PendingCall>();
  private readonly notificationListeners = new Map<string, Set<(params: unknown) => void>>();
  private readonly closeListeners: (() => void)[] = [];
  private nextId = 1;
  private isClosed = false;
  /** Set by the version handshake. */
  daemon: HelloResult | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly socketPath: string,
  ) {
    const decoder = new LineDecoder({
      maxBytes: MAX_REPLY_FRAME_BYTES,
      onLine: (line) => this.onLine(line),
      onOversize: () => this.shutdown(new AssentError('internal', 'The daemon sent a reply larger than 64 MiB; the connection was closed.')),
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.shutdown());
  }

  /**
   * Connects and performs the version handshake; with `autoSpawn` a missing daemon
   * is started (under the spawn lock) and the connection retried once.
   */
  static async connect(options: DaemonClientOptions): Promise<DaemonClient> {
    try {
      return await DaemonClient.open(options);
    } catch (error) {
      const autoSpawn = options.autoSpawn;
      if (!autoSpawn || !(error instanceof AssentError) || error.details?.['reason'] !== 'not-running') throw error;
      // Loaded only when no daemon answers: a client of a running daemon never pays for child_process.
      const { ensureDaemonRunning } = await import('./autoSpawn.js');
      await ensureDaemonRunning(autoSpawn, () => DaemonClient.probe(options.socketPath));
      return DaemonClient.open(options);
    }
  }

  /** True when a daemon accepts a connection and answers the handshake (whatever its version). */
  static async probe(socketPath: string, timeoutMs = 1000): Promise<boolean> {
    try {
      const client = await DaemonClient.open({ socketPath, timeoutMs });
      client.close();
      return true;
    } catch (error) {
      return error instanceof AssentError && error.type === 'version_mismatch';
    }
  }

  private static async open(options: DaemonClientOptions): Promise<DaemonClient> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const socket = await openSocket(options.socketPath, timeoutMs);
    const client = new DaemonClient(socket, options.socketPath);
    const timer = setTimeout(
      () =>
        client.shutdown(
          new AssentError('unavailable', `The daemon on ${options.socketPath} did not answer the version handshake within ${timeoutMs} ms. See daemon.log, or restart it with \`assent daemon stop\`.`, {
            details: { socket: options.socketPath, reason: 'handshake-timeout' },
          }),
        ),
      timeoutMs,
    );
    try {
      client.daemon = await client.call<HelloResult>('daemon.hello', { version: options.version ?? VERSION });
      return client;
    } catch (error) {
      client.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  call<T>(method: string, params: unknown = {}, options: CallOptions = {}): Promise<T> {
    if (this.isClosed) {
      return Promise.reject(new AssentError('unavailable', `The connection to the daemon on ${this.socketPath} is closed; ${method} was not sent.`, {
        details: { socket: this.socketPath, reason: 'closed' },
      }));
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortReason(signal, method));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.pending.delete(id)) return;
        this.send({ jsonrpc: '2.0', method: CANCEL_METHOD, params: { id } });
        reject(abortReason(signal as AbortSignal, method));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        method,
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value as T);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Subscribes to a server notification (e.g. `event`); returns the unsubscribe function. */
  onNotification(method: string, listener: (params: unknown) => void): () => void {
    let set = this.notificationListeners.get(method);
    if (!set) {
      set = new Set();
      this.notificationListeners.set(method, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  onClose(listener: () => void): void {
    if (this.isClosed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.shutdown();
  }

  private send(message: unknown): void {
    if (!this.isClosed) this.socket.write(encodeFrame(message));
  }

  private shutdown(reason?: AssentError): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.socket.destroy();
    const error =
      reason ??
      new AssentError('unavailable', `The daemon on ${this.socketPath} closed the connection before answering. See daemon.log; retry the command.`, {
        details: { socket: this.socketPath, reason: 'closed' },
      });
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.shutdown(new AssentError('internal', 'The daemon sent a frame that is not JSON; the connection was closed.'));
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const id = message['id'];
    if (typeof id === 'number') {
      const call = this.pending.get(id);
      if (!call) return;
      this.pending.delete(id);
      if ('error' in message) call.reject(fromWire(message['error'], call.method));
      else call.resolve(message['result']);
      return;
    }
    if (id === null && 'error' in message) {
      // An error the daemon could not tie to a request (e.g. it refused the connection).
      this.shutdown(fromWire(message['error'], 'the connection'));
      return;
    }
    if (typeof message['method'] === 'string') {
      for (const listener of this.notificationListeners.get(message['method']) ?? []) {
        try {
          listener(message['params']);
        } catch {
          // A listener's failure is its own; the connection keeps serving.
        }
      }
    }
  }
}

function abortReason(signal: AbortSignal, method: string): AssentError {
  const reason: unknown = signal.reason;
  if (reason instanceof AssentError) return reason;
  return new AssentError('timeout', `The call ${method} was cancelled before the daemon answered.`);
}
