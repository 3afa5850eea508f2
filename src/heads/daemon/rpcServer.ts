// The daemon's JSON-RPC 2.0 head over a Unix socket (R-D-2, R-D-3): it listens
// on a 0600 socket and admits connections. A connection is handshake-pending
// until its `daemon.hello` succeeds, has 5 s for it, and pending ones have their
// own small cap (oldest evicted), so idle peers never fill the connection cap.
// Framing, validation, dispatch and typed errors are per connection
// (rpcConnection.ts); each running request is one record (rpcRequest.ts). Near
// the limit of open files a new connection is told so and closed, and the
// daemon says it once in its log (descriptorGuard.ts). It owns no policy: every
// method is an Operation declared in src/operations.
import { chmodSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { AssentError } from '../../core/base/errors.js';
import { DESCRIPTOR_LIMIT_FIX, isDescriptorExhaustion } from '../../core/base/resourceFaults.js';
import type { CallContext, ConnectionHandle, Operation } from '../../operations/operation.js';
import type { Logger } from '../../service/logger.js';
import { DescriptorGuard, descriptorRefusal, type DescriptorUse } from './descriptorGuard.js';
import { MAX_FRAME_BYTES, encodeFrame } from './framing.js';
import { createPeerLookup, type PeerLookup } from './peerCredentials.js';
import { Connection, rpcErrorBody, type ConnectionHost } from './rpcConnection.js';

/** A client whose unsent replies exceed this is too slow to keep; it is dropped so it cannot hold memory. */
export const MAX_WRITE_BACKLOG_BYTES = 8 * 1024 * 1024;
/** Handshaken connections served at once. */
export const MAX_CONNECTIONS = 256;
/** How long a new connection may take to complete `daemon.hello` before it is closed. */
export const HANDSHAKE_TIMEOUT_MS = 5000;
/** Connections that may wait for their handshake at once; a newer one evicts the oldest, so idle peers never lock clients out. */
export const MAX_PENDING_HANDSHAKES = 32;
/** How long a refused connection may take to read its refusal before it is closed anyway. */
const REFUSAL_LINGER_MS = 500;
/**
 * How often descriptors are counted without a connection: at the limit itself libuv drops a new
 * connection before the daemon sees it, so only a count notices the shortage (and its end).
 */
const DESCRIPTOR_CHECK_MS = 1000;
/** A shortage ends once this long passed without one, so a count that dips for a moment does not say it again and again. */
const DESCRIPTOR_QUIET_MS = 2000;

export interface RpcServerOptions {
  socketPath: string;
  /** The registry; a function is read on every call so operations can be added after start. */
  operations: Operation[] | (() => Operation[]);
  /** Principal, head and channel of calls arriving on one connection. */
  contextFor(connection: ConnectionHandle): Omit<CallContext, 'connection'>;
  logger: Logger;
  /** Cap of handshaken connections (default MAX_CONNECTIONS); handshake-pending ones have their own cap. */
  maxConnections?: number;
  maxFrameBytes?: number;
  maxWriteBacklogBytes?: number;
  /** Handshake window in ms (default HANDSHAKE_TIMEOUT_MS). */
  handshakeTimeoutMs?: number;
  /** Cap of handshake-pending connections (default MAX_PENDING_HANDSHAKES). */
  maxPendingHandshakes?: number;
  /** Finds the process behind a connection when a decision needs it (default: the Linux ss + /proc lookup). */
  peerLookup?: PeerLookup;
  /** Keeps connections out of the daemon's reserve of descriptors (default: the limit and count from /proc). */
  descriptorGuard?: DescriptorGuard;
}

/** What daemon.status says of descriptors: open now, the limit, the reserve, and connections refused for them since the start. */
export interface DescriptorStatus extends DescriptorUse {
  refused: number;
}

export interface RpcServer {
  close(): Promise<void>;
  connections(): number;
  /** Undefined where the limit or the count cannot be read. */
  descriptors(): DescriptorStatus | undefined;
  [Symbol.asyncDispose](): Promise<void>;
}

class RpcServerImpl implements RpcServer, ConnectionHost {
  readonly logger: Logger;
  readonly maxFrameBytes: number;
  readonly maxWriteBacklogBytes: number;
  readonly handshakeTimeoutMs: number;
  readonly peerLookup: PeerLookup;
  private readonly maxConnections: number;
  private readonly maxPendingHandshakes: number;
  private readonly live = new Set<Connection>();
  /** Connections still waiting for their handshake, oldest first (a Set keeps insertion order). */
  private readonly pendingHandshake = new Set<Connection>();
  private handshakenCount = 0;
  /** Sockets told "no" and being closed; tracked so close() never waits on them. */
  private readonly refused = new Set<Socket>();
  private counter = 0;
  private closing: Promise<void> | undefined;
  private readonly descriptorGuard: DescriptorGuard;
  /** Connections refused for want of descriptors since the start. */
  private refusedForDescriptors = 0;
  /** Set while descriptors are short: the log says so once when it starts and once when it ends. */
  private shortOfDescriptors: { refused: number; lastAt: number } | undefined;
  private descriptorTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly server: Server,
    private readonly options: RpcServerOptions,
  ) {
    this.logger = options.logger;
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.maxWriteBacklogBytes = options.maxWriteBacklogBytes ?? MAX_WRITE_BACKLOG_BYTES;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
    this.maxConnections = options.maxConnections ?? MAX_CONNECTIONS;
    this.maxPendingHandshakes = Math.max(1, options.maxPendingHandshakes ?? MAX_PENDING_HANDSHAKES);
    this.peerLookup = options.peerLookup ?? createPeerLookup();
    this.descriptorGuard = options.descriptorGuard ?? new DescriptorGuard();
  }

  /** Counts descriptors every second from now until close (called once the socket listens). */
  watchDescriptors(): void {
    this.descriptorTimer ??= setInterval(() => this.checkDescriptors(), DESCRIPTOR_CHECK_MS);
    this.descriptorTimer.unref();
  }

  /** The count between connections: a shortage no connection reached the daemon in is said too, once, and its end. */
  private checkDescriptors(): void {
    const use = this.descriptorGuard.use();
    if (use === undefined) return;
    if (use.open > use.limit - use.reserve) this.shortOf({ open: use.open, limit: use.limit, reserve: use.reserve }, false);
    else this.descriptorsBack();
  }

  /** Answers a connection with an error it was not admitted for and closes it; what it sent is read and dropped. */
  private refuse(socket: Socket, error: AssentError, lingerMs: number): void {
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    this.refused.add(socket);
    socket.on('close', () => this.refused.delete(socket));
    socket.end(encodeFrame({ jsonrpc: '2.0', id: null, error: rpcErrorBody(error) }));
    setTimeout(() => socket.destroy(), lingerMs).unref();
  }

  /** Descriptors ran short: said in the log once, when it starts, however many connections are refused meanwhile. */
  private shortOf(fields: Record<string, unknown>, refused = true): void {
    if (refused) this.refusedForDescriptors += 1;
    if (this.shortOfDescriptors !== undefined) {
      if (refused) this.shortOfDescriptors.refused += 1;
      this.shortOfDescriptors.lastAt = performance.now();
      return;
    }
    this.shortOfDescriptors = { refused: refused ? 1 : 0, lastAt: performance.now() };
    this.logger.warn(
      `out of file descriptors: new connections are refused (their hook and gateway calls are denied) until some close, rather than fail with EMFILE; to fix it, ${DESCRIPTOR_LIMIT_FIX}`,
      fields,
    );
  }

  /** Called when there is room again: once the shortage is quiet for a while, said once, with how many were refused. */
  private descriptorsBack(): void {
    if (this.shortOfDescriptors === undefined || performance.now() - this.shortOfDescriptors.lastAt < DESCRIPTOR_QUIET_MS) return;
    this.logger.info('file descriptors are free again: connections are accepted', { refused: this.shortOfDescriptors.refused });
    this.shortOfDescriptors = undefined;
  }

  /** The listening socket's own error: EMFILE or ENFILE from accept joins the shortage, said once; anything else is logged. */
  serverError(error: NodeJS.ErrnoException): void {
    if (isDescriptorExhaustion(error)) this.shortOf({ code: error.code, syscall: error.syscall });
    else this.logger.error('server error', { error });
  }

  accept(socket: Socket): void {
    if (this.closing) {
      this.refuse(socket, new AssentError('unavailable', 'The daemon is shutting down; retry in a moment.'), 1000);
      return;
    }
    const short = this.descriptorGuard.admit();
    if (short !== undefined) {
      this.shortOf({ open: short.open, limit: short.limit, reserve: short.reserve });
      this.refuse(socket, descriptorRefusal(short), REFUSAL_LINGER_MS);
      return;
    }
    this.descriptorsBack();
    // A new connection always gets its chance at the handshake: when too many are
    // waiting for theirs, the oldest waiting one goes (hardening 2).
    while (this.pendingHandshake.size >= this.maxPendingHandshakes) {
      const oldest = this.pendingHandshake.values().next().value as Connection;
      this.expire(
        oldest,
        new AssentError(
          'unavailable',
          `The daemon closed this connection: it had not completed daemon.hello and newer connections needed the room (at most ${this.maxPendingHandshakes} may wait for their handshake). Connect again and send daemon.hello {version} first.`,
          { details: { maxPendingHandshakes: this.maxPendingHandshakes } },
        ),
      );
    }
    this.counter += 1;
    const connection = new Connection(`c${this.counter}`, socket, this);
    this.live.add(connection);
    this.pendingHandshake.add(connection);
  }

  /** Closes a connection that did not complete its handshake in time or was evicted for a newer one. */
  expire(connection: Connection, error: AssentError): void {
    if (!this.pendingHandshake.delete(connection)) return;
    connection.closeWith(error);
  }

  /**
   * Moves a connection whose hello succeeded under the connection cap; returns
   * the refusal when the cap of handshaken connections is full.
   */
  admit(connection: Connection): AssentError | undefined {
    if (!this.pendingHandshake.has(connection)) return undefined;
    this.pendingHandshake.delete(connection);
    if (this.handshakenCount >= this.maxConnections) {
      return new AssentError('unavailable', `The daemon is at its limit of ${this.maxConnections} connections; close some clients or retry shortly.`, {
        details: { maxConnections: this.maxConnections },
      });
    }
    this.handshakenCount += 1;
    connection.markHandshaken();
    return undefined;
  }

  forget(connection: Connection): void {
    this.live.delete(connection);
    this.pendingHandshake.delete(connection);
    if (connection.handshaken) this.handshakenCount -= 1;
  }

  contextFor(connection: ConnectionHandle): Omit<CallContext, 'connection'> {
    return this.options.contextFor(connection);
  }

  lookup(method: string): Operation | undefined {
    const list = typeof this.options.operations === 'function' ? this.options.operations() : this.options.operations;
    return list.find((operation) => operation.name === method && operation.exposure.rpc === true);
  }

  connections(): number {
    return this.live.size;
  }

  descriptors(): DescriptorStatus | undefined {
    const use = this.descriptorGuard.use();
    return use === undefined ? undefined : { ...use, refused: this.refusedForDescriptors };
  }

  close(): Promise<void> {
    clearInterval(this.descriptorTimer);
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const connection of this.live) connection.destroy();
      for (const socket of this.refused) socket.destroy();
    });
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Listens on a Unix socket created 0600 (umask around bind, then chmod and a stat
 * check), so no other local user can connect even for an instant. A stale socket
 * file is the caller's business (runDaemon decides whether it is stale).
 */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const server = createServer({ allowHalfOpen: false });
  const impl = new RpcServerImpl(server, options);
  server.on('connection', (socket) => impl.accept(socket));
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(
        error.code === 'EADDRINUSE'
          ? new AssentError('conflict', `The socket ${options.socketPath} already exists. Stop the daemon using it (\`assent daemon stop\`) or remove the stale file.`, {
              details: { socket: options.socketPath },
            })
          : new AssentError('unavailable', `Cannot listen on ${options.socketPath}: ${error.message}. Check the directory exists and is writable.`, {
              details: { socket: options.socketPath, code: error.code },
              cause: error,
            }),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    const previous = process.umask(0o177);
    try {
      server.listen(options.socketPath);
    } finally {
      process.umask(previous);
    }
  });
  server.on('error', (error: NodeJS.ErrnoException) => impl.serverError(error));
  impl.watchDescriptors();
  try {
    chmodSync(options.socketPath, 0o600);
    const mode = statSync(options.socketPath).mode & 0o777;
    if (mode !== 0o600) {
      throw new AssentError('state_insecure', `The socket ${options.socketPath} has mode ${mode.toString(8)} instead of 600; the daemon will not serve on it. Check the file system supports permissions.`);
    }
  } catch (error) {
    await impl.close();
    throw error instanceof AssentError
      ? error
      : new AssentError('state_insecure', `Cannot secure the socket ${options.socketPath}: ${(error as Error).message}.`, { cause: error });
  }
  return impl;
}
