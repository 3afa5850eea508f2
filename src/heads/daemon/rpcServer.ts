// The daemon's JSON-RPC 2.0 head over a Unix socket (R-D-2, R-D-3): framing,
// request validation, dispatch to the operation registry and typed errors.
// It owns no policy: every method is an Operation declared in src/operations.
//
// Error encoding: every error uses code -32000 with `data: { type, details }`,
// including parse and framing errors, so a client needs one rule only (R-D-3);
// the standard -327xx codes are deliberately not used.
//
// It also admits connections: a connection is handshake-pending until its
// `daemon.hello` succeeds, has 5 s for it, and pending ones have their own small
// cap (oldest evicted), so idle peers never fill the connection cap.
import { chmodSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { AssentError } from '../../core/errors.js';
import type { ErrorType } from '../../core/errors.js';
import { JsonText } from '../../core/jsonText.js';
import type { CallContext, ConnectionHandle, Operation } from '../../operations/operation.js';
import type { DecisionPeer } from '../../service/approvalService.js';
import type { Logger } from '../../service/logger.js';
import { CANCEL_METHOD, HELLO_METHOD, LineDecoder, MAX_FRAME_BYTES, encodeFrame } from './framing.js';
import { createPeerLookup, type PeerLookup } from './peerCredentials.js';

/** The one JSON-RPC error code the daemon uses; the meaning is in `data.type`. */
export const RPC_ERROR_CODE = -32000;
/** A client whose unsent replies exceed this is too slow to keep; it is dropped so it cannot hold memory. */
export const MAX_WRITE_BACKLOG_BYTES = 8 * 1024 * 1024;
/** Longest string id or method name accepted. */
export const MAX_ID_LENGTH = 256;
/** Requests one connection may have running at once (long waits included). */
export const MAX_IN_FLIGHT_PER_CONNECTION = 1024;
/** Handshaken connections served at once. */
export const MAX_CONNECTIONS = 256;
/** How long a new connection may take to complete `daemon.hello` before it is closed. */
export const HANDSHAKE_TIMEOUT_MS = 5000;
/** Connections that may wait for their handshake at once; a newer one evicts the oldest, so idle peers never lock clients out. */
export const MAX_PENDING_HANDSHAKES = 32;

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
}

export interface RpcServer {
  close(): Promise<void>;
  connections(): number;
  [Symbol.asyncDispose](): Promise<void>;
}

type RequestId = string | number;

interface RpcErrorBody {
  code: number;
  message: string;
  data: { type: ErrorType; details: Record<string, unknown> };
}

/** Builds the wire form of a typed error. */
export function rpcErrorBody(error: AssentError): RpcErrorBody {
  return { code: RPC_ERROR_CODE, message: error.message, data: { type: error.type, details: error.details ?? {} } };
}

function isValidId(id: unknown): id is RequestId {
  if (typeof id === 'string') return id.length <= MAX_ID_LENGTH;
  return typeof id === 'number' && Number.isSafeInteger(id);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Lists an operation's zod issues as `{ path, message }` with a dotted path a person can find. */
function issuesOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): {
  path: string;
  message: string;
}[] {
  return error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map((part) => String(part)).join('.'),
    message: issue.message,
  }));
}

class Connection implements ConnectionHandle {
  readonly id: string;
  private readonly closeListeners: (() => void)[] = [];
  private readonly inFlight = new Map<RequestId | symbol, AbortController>();
  private isClosed = false;
  /** Set once the daemon decided to close this connection; its further frames are ignored. */
  private isEnding = false;
  private isHandshaken = false;
  private handshakeTimer: NodeJS.Timeout | undefined;
  private peerLookup: Promise<DecisionPeer> | undefined;
  private readonly decoder: LineDecoder;
  private readonly log: Logger;

  constructor(
    id: string,
    private readonly socket: Socket,
    private readonly server: RpcServerImpl,
  ) {
    this.id = id;
    this.log = server.logger.child({ connection: id });
    this.decoder = new LineDecoder({
      maxBytes: server.maxFrameBytes,
      onLine: (line) => this.onLine(line),
      onInvalidUtf8: () =>
        this.sendError(null, new AssentError('parse_error', 'The frame is not valid UTF-8. Send one JSON-RPC 2.0 message per line, UTF-8 encoded.')),
      onOversize: () => {
        this.sendError(
          null,
          new AssentError(
            'frame_too_large',
            `A frame exceeded ${server.maxFrameBytes} bytes without a newline; the connection is closed. Send one message per line, each under 1 MiB.`,
            { details: { limitBytes: server.maxFrameBytes } },
          ),
        );
        this.socket.end();
        setTimeout(() => this.socket.destroy(), 1000).unref();
      },
    });
    socket.on('data', (chunk: Buffer) => this.decoder.push(chunk));
    socket.on('error', (error) => this.log.debug('connection error', { error: error.message }));
    socket.on('close', () => this.finish());
    this.handshakeTimer = setTimeout(() => {
      try {
        this.server.expire(
          this,
          new AssentError(
            'timeout',
            `No daemon.hello arrived within ${server.handshakeTimeoutMs} ms of connecting; the daemon closed the connection. Connect again and send daemon.hello {version} as the first request.`,
            { details: { handshakeTimeoutMs: server.handshakeTimeoutMs } },
          ),
        );
      } catch (error) {
        this.log.error('handshake timer failed', { error });
      }
    }, server.handshakeTimeoutMs);
    this.handshakeTimer.unref();
  }

  /** The process at the other end, looked up once per connection on first need (a decision), never from what it sends. */
  peer(): Promise<DecisionPeer> {
    this.peerLookup ??= this.server.peerLookup(this.socket).catch(
      (error: unknown): DecisionPeer => ({ source: 'unavailable', reason: `peer lookup failed: ${error instanceof Error ? error.message : String(error)}` }),
    );
    return this.peerLookup;
  }

  /** True once a `daemon.hello` succeeded on this connection and it was admitted under the connection cap. */
  get handshaken(): boolean {
    return this.isHandshaken;
  }

  /** The handshake succeeded: the connection now counts against the connection cap and has no deadline. */
  markHandshaken(): void {
    this.isHandshaken = true;
    this.clearHandshakeTimer();
  }

  private clearHandshakeTimer(): void {
    if (this.handshakeTimer !== undefined) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = undefined;
  }

  /** Tells the peer why with one error line (unless it was told already), then closes; nothing it sends afterwards is read. */
  closeWith(error?: AssentError): void {
    if (this.isEnding || this.isClosed) return;
    this.clearHandshakeTimer();
    if (error !== undefined) this.sendError(null, error);
    this.isEnding = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  notify(method: string, params: unknown): void {
    this.write({ jsonrpc: '2.0', method, params });
  }

  onClose(listener: () => void): () => void {
    if (this.isClosed) {
      queueMicrotask(listener);
      return () => undefined;
    }
    this.closeListeners.push(listener);
    return () => {
      const index = this.closeListeners.indexOf(listener);
      if (index !== -1) this.closeListeners.splice(index, 1);
    };
  }

  destroy(): void {
    this.socket.destroy();
  }

  private finish(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.clearHandshakeTimer();
    for (const controller of this.inFlight.values()) controller.abort(new AssentError('unavailable', 'The client disconnected.'));
    this.inFlight.clear();
    this.server.forget(this);
    for (const listener of this.closeListeners.splice(0)) {
      try {
        listener();
      } catch (error) {
        this.log.error('close listener failed', { error });
      }
    }
  }

  /** Writes a frame that is already encoded; same backlog rule as write(). */
  private writeFrame(...pieces: string[]): void {
    if (this.isClosed || this.socket.destroyed || this.socket.writableEnded) return;
    if (this.socket.writableLength > this.server.maxWriteBacklogBytes) {
      this.log.warn('dropping a client that does not read its replies', { backlogBytes: this.socket.writableLength });
      this.socket.destroy();
      return;
    }
    for (const piece of pieces) this.socket.write(piece);
  }

  private write(message: unknown): void {
    if (this.isClosed || this.socket.destroyed || this.socket.writableEnded) return;
    let frame: string;
    try {
      frame = encodeFrame(message);
    } catch (error) {
      this.log.error('reply not serializable', { error });
      const id = isPlainObject(message) && isValidId(message['id']) ? message['id'] : null;
      frame = encodeFrame({ jsonrpc: '2.0', id, error: rpcErrorBody(new AssentError('internal', 'The daemon could not encode its reply; see daemon.log.')) });
    }
    this.writeFrame(frame);
  }

  private sendError(id: RequestId | null, error: AssentError): void {
    this.write({ jsonrpc: '2.0', id, error: rpcErrorBody(error) });
  }

  private onLine(line: string): void {
    if (this.isEnding || line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.sendError(null, new AssentError('parse_error', 'The frame is not valid JSON. Send one JSON-RPC 2.0 object per line.'));
      return;
    }
    if (Array.isArray(message)) {
      this.sendError(null, new AssentError('invalid_request', 'Batch requests are not supported. Send each JSON-RPC request as its own line.'));
      return;
    }
    if (!isPlainObject(message)) {
      this.sendError(null, new AssentError('invalid_request', 'The frame is not a JSON-RPC 2.0 request object. Send {"jsonrpc":"2.0","id":1,"method":"…","params":{…}}.'));
      return;
    }
    const hasId = Object.prototype.hasOwnProperty.call(message, 'id');
    const rawId = message['id'];
    if (hasId && !isValidId(rawId)) {
      this.sendError(
        null,
        new AssentError('invalid_request', `The request id must be a safe integer or a string of at most ${MAX_ID_LENGTH} characters.`, {
          details: { idType: rawId === null ? 'null' : typeof rawId },
        }),
      );
      return;
    }
    const id = hasId ? (rawId as RequestId) : undefined;
    if (message['jsonrpc'] !== '2.0') {
      this.reject(id, new AssentError('invalid_request', 'The request must carry "jsonrpc": "2.0".'));
      return;
    }
    const method = message['method'];
    if (typeof method !== 'string' || method.length === 0 || method.length > MAX_ID_LENGTH) {
      this.reject(id, new AssentError('invalid_request', `The request needs a "method" string of 1 to ${MAX_ID_LENGTH} characters.`));
      return;
    }
    const params = message['params'];
    if (params !== undefined && !isPlainObject(params)) {
      this.reject(
        id,
        new AssentError('invalid_params', `Params of ${method} must be a JSON object of named parameters (positional arrays are not supported).`, {
          details: { method, issues: [{ path: '', message: 'expected an object' }] },
        }),
      );
      return;
    }
    if (method === CANCEL_METHOD) {
      const target = params?.['id'];
      if (isValidId(target)) this.inFlight.get(target)?.abort(new AssentError('timeout', 'The client cancelled the request.'));
      return;
    }
    void this.dispatch(id, method, params ?? {});
  }

  /** Answers an error to a request; a notification (no id) gets nothing back, as JSON-RPC says. */
  private reject(id: RequestId | undefined, error: AssentError): void {
    // Not logged either: a hostile peer must not be able to fill daemon.log.
    if (id === undefined) return;
    this.sendError(id, error);
  }

  private async dispatch(id: RequestId | undefined, method: string, params: Record<string, unknown>): Promise<void> {
    const operation = this.server.lookup(method);
    if (!operation) {
      this.reject(
        id,
        new AssentError('method_not_found', `The daemon has no method ${JSON.stringify(method)}. Check the name in \`assent operations --json\`; client and daemon versions may differ.`, {
          details: { method },
        }),
      );
      return;
    }
    const parsed = operation.accepts?.(params) === true ? { success: true as const, data: params } : operation.params.safeParse(params);
    if (!parsed.success) {
      this.reject(
        id,
        new AssentError('invalid_params', `Invalid params for ${method}: ${issuesOf(parsed.error).map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}.`, {
          details: { method, issues: issuesOf(parsed.error) },
        }),
      );
      return;
    }
    if (id !== undefined && this.inFlight.has(id)) {
      this.reject(id, new AssentError('invalid_request', `Request id ${JSON.stringify(id)} is already in use by a running request on this connection; use a fresh id.`));
      return;
    }
    if (this.inFlight.size >= MAX_IN_FLIGHT_PER_CONNECTION) {
      this.reject(id, new AssentError('unavailable', `This connection already has ${MAX_IN_FLIGHT_PER_CONNECTION} requests running; wait for some to finish.`));
      return;
    }
    const controller = new AbortController();
    const key: RequestId | symbol = id ?? Symbol('notification');
    this.inFlight.set(key, controller);
    try {
      const context: CallContext = { ...this.server.contextFor(this), connection: this, signal: controller.signal, peer: () => this.peer() };
      const result: unknown = await operation.handler(parsed.data, context);
      if (method === HELLO_METHOD && !this.handshaken) {
        // Checked and marked together, after the handler, so concurrent hellos cannot both take the last place.
        const refusal = this.server.admit(this);
        if (refusal !== undefined) {
          // The refusal answers the hello itself; a hello sent as a notification hears it as a connection error.
          this.reject(id, refusal);
          this.closeWith(id === undefined ? refusal : undefined);
          return;
        }
      }
      if (id === undefined) return;
      // Large ready-made results go out in three writes, never copied into one frame string.
      if (result instanceof JsonText) this.writeFrame(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`, result.text, '}\n');
      else this.write({ jsonrpc: '2.0', id, result: result === undefined ? null : result });
    } catch (error) {
      if (error instanceof AssentError) {
        this.reject(id, error);
      } else {
        this.log.error('operation failed', { method, error });
        this.reject(id, new AssentError('internal', `The daemon failed while running ${method}; details are in daemon.log.`));
      }
    } finally {
      this.inFlight.delete(key);
    }
  }
}

class RpcServerImpl implements RpcServer {
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
  }

  accept(socket: Socket): void {
    if (this.closing) {
      const error = new AssentError('unavailable', 'The daemon is shutting down; retry in a moment.');
      socket.on('error', () => undefined);
      this.refused.add(socket);
      socket.on('close', () => this.refused.delete(socket));
      socket.end(encodeFrame({ jsonrpc: '2.0', id: null, error: rpcErrorBody(error) }));
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
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

  close(): Promise<void> {
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
  server.on('error', (error) => options.logger.error('server error', { error }));
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
