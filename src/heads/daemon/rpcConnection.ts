// One connection on the daemon socket (R-D-2, R-D-3): line framing, request
// validation, dispatch to the operation registry and typed errors, the
// handshake deadline, and the write backlog rule. The server decides admission.
//
// Error encoding: every error uses code -32000 with `data: { type, details }`,
// including parse and framing errors, so a client needs one rule only (R-D-3);
// the standard -327xx codes are deliberately not used.
import { isPlainObject } from '../../core/base/plainObject.js';
import type { Socket } from 'node:net';
import { AssentError } from '../../core/base/errors.js';
import type { ErrorType } from '../../core/base/errors.js';
import { JsonText } from '../../core/base/jsonText.js';
import type { CallContext, ConnectionHandle, Operation } from '../../operations/operation.js';
import type { DecisionPeer } from '../../service/approvalService.js';
import { REPLY_DEFERRED } from '../../service/pendingApproval.js';
import type { Logger } from '../../service/logger.js';
import { CANCEL_METHOD, HELLO_METHOD, LineDecoder, encodeFrame } from './framing.js';
import type { PeerLookup } from './peerCredentials.js';
import { InFlightRequest, type RequestConnection, type RequestId } from './rpcRequest.js';

/** The one JSON-RPC error code the daemon uses; the meaning is in `data.type`. */
export const RPC_ERROR_CODE = -32000;
/** Longest string id or method name accepted. */
export const MAX_ID_LENGTH = 256;
/** A frame longer than this (in characters; a pending list of a hundred or more) is streamed as the socket drains. */
const STREAMED_FRAME_CHARS = 64 * 1024;

/** One encoded frame: its pieces, ready or made as they are written, and its length in characters. */
interface Frame {
  pieces: Iterable<string>;
  length: number;
}

/** A reply whose result is ready JSON text: the envelope around the text's own pieces, and the newline. */
function* framed(head: string, result: JsonText): Generator<string> {
  yield head;
  yield* result.pieces();
  yield '}\n';
}
/** Requests one connection may have running at once (long waits included). */
export const MAX_IN_FLIGHT_PER_CONNECTION = 1024;

/** What a connection needs of the server that accepted it. */
export interface ConnectionHost {
  readonly logger: Logger;
  readonly maxFrameBytes: number;
  readonly maxWriteBacklogBytes: number;
  readonly handshakeTimeoutMs: number;
  readonly peerLookup: PeerLookup;
  /** Closes a connection that did not complete its handshake in time. */
  expire(connection: Connection, error: AssentError): void;
  /** Admits a connection whose hello succeeded; the refusal when the cap is full. */
  admit(connection: Connection): AssentError | undefined;
  forget(connection: Connection): void;
  contextFor(connection: ConnectionHandle): Omit<CallContext, 'connection'>;
  lookup(method: string): Operation | undefined;
}

export interface RpcErrorBody {
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

export class Connection implements RequestConnection {
  readonly id: string;
  private readonly closeListeners: (() => void)[] = [];
  private readonly inFlight = new Map<RequestId | symbol, InFlightRequest>();
  /** Frames waiting while a large one streams out (see writeFrame), and their size in characters. */
  private queued: Frame[] | undefined;
  private queuedChars = 0;
  private isClosed = false;
  /** Set once the daemon decided to close this connection; its further frames are ignored. */
  private isEnding = false;
  private isHandshaken = false;
  private handshakeTimer: NodeJS.Timeout | undefined;
  private peerLookup: Promise<DecisionPeer> | undefined;
  private readonly decoder: LineDecoder;
  private readonly log: Logger;
  /** Principal, head and channel of every call on this connection, asked of the server on first use. */
  private context: Omit<CallContext, 'connection'> | undefined;

  constructor(
    id: string,
    private readonly socket: Socket,
    private readonly server: ConnectionHost,
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

  logError(message: string, error: unknown): void {
    this.log.error(message, { error });
  }

  private finish(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.clearHandshakeTimer();
    const requests = [...this.inFlight.values()];
    this.inFlight.clear();
    const disconnected = new AssentError('unavailable', 'The client disconnected.');
    for (const request of requests) request.end('disconnected', disconnected);
    this.server.forget(this);
    for (const listener of this.closeListeners.splice(0)) {
      try {
        listener();
      } catch (error) {
        this.log.error('close listener failed', { error });
      }
    }
  }

  /**
   * Writes a frame that is already encoded. A client that lets more than the
   * backlog limit pile up unread is dropped. A large frame (a list of thousands)
   * goes out piece by piece as the socket drains, never as one write: Node would
   * copy every piece of one write into a single native buffer of the whole
   * frame, and the allocator keeps such a block long after (SPEC §14 memory
   * budget). Frames sent meanwhile wait behind it, so frames never interleave.
   */
  private writeFrame(frame: Frame): void {
    if (this.isClosed || this.socket.destroyed || this.socket.writableEnded) return;
    const backlog = this.socket.writableLength + this.queuedChars;
    if (backlog > this.server.maxWriteBacklogBytes) {
      this.log.warn('dropping a client that does not read its replies', { backlogBytes: backlog });
      this.socket.destroy();
      return;
    }
    if (this.queued !== undefined) {
      this.queued.push(frame);
      this.queuedChars += frame.length;
      return;
    }
    if (frame.length > STREAMED_FRAME_CHARS) {
      this.stream(frame.pieces[Symbol.iterator]());
      return;
    }
    this.socket.cork();
    for (const piece of frame.pieces) this.socket.write(piece);
    this.socket.uncork();
  }

  /** Writes a large frame's pieces one by one, each once the socket has taken the one before; then what queued behind it. */
  private stream(pieces: Iterator<string>): void {
    this.queued = [];
    const next = (): void => {
      for (let piece = pieces.next(); piece.done !== true; piece = pieces.next()) {
        if (this.isClosed || this.socket.destroyed) return;
        if (!this.socket.write(piece.value)) {
          this.socket.once('drain', next);
          return;
        }
      }
      const waiting = this.queued ?? [];
      this.queued = undefined;
      this.queuedChars = 0;
      // A frame among them may be large too: it streams in turn, and the rest queue behind it again.
      for (const frame of waiting) this.writeFrame(frame);
    };
    next();
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
    this.writeFrame({ pieces: [frame], length: frame.length });
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
      if (isValidId(target)) this.inFlight.get(target)?.end('cancelled', new AssentError('timeout', 'The client cancelled the request.'));
      return;
    }
    this.dispatch(id, method, params ?? {});
  }

  /** Answers an error to a request; a notification (no id) gets nothing back, as JSON-RPC says. */
  private reject(id: RequestId | undefined, error: AssentError): void {
    // Not logged either: a hostile peer must not be able to fill daemon.log.
    if (id === undefined) return;
    this.sendError(id, error);
  }

  private dispatch(id: RequestId | undefined, method: string, params: Record<string, unknown>): void {
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
    // The operation's own name, not the parsed string: one copy for every request.
    this.context ??= this.server.contextFor(this);
    const request = new InFlightRequest(id ?? Symbol('notification'), operation.name, this, this.context);
    this.inFlight.set(request.key, request);
    let running: Promise<unknown>;
    try {
      running = operation.handler(parsed.data, request);
    } catch (error) {
      running = Promise.reject(error);
    }
    // Nothing of the request (its params, the parsed copy) stays referenced while the handler runs:
    // a call waiting for a person holds only the request record (SPEC §14), and one that handed its
    // result to request.reply holds not even this promise: it resolved to REPLY_DEFERRED at once.
    running.then(
      (result: unknown) => {
        if (result !== REPLY_DEFERRED) request.resolve(result);
      },
      (error: unknown) => request.reject(error),
    );
  }

  answer(request: InFlightRequest, result: unknown): void {
    this.settle(request, result);
  }

  answerError(request: InFlightRequest, error: unknown): void {
    this.fail(request, error);
  }

  /** Sends a handler's result, after admitting a connection whose hello it was. */
  private settle(request: InFlightRequest, result: unknown): void {
    this.forgetRequest(request);
    const { id } = request;
    try {
      if (request.method === HELLO_METHOD && !this.handshaken) {
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
      // Large ready-made results go out piece by piece, never copied into one frame string.
      if (result instanceof JsonText) {
        const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
        this.writeFrame({ pieces: framed(head, result), length: head.length + result.length + 2 });
      } else this.write({ jsonrpc: '2.0', id, result: result === undefined ? null : result });
    } catch (error) {
      this.fail(request, error);
    }
  }

  private forgetRequest(request: InFlightRequest): void {
    if (this.inFlight.get(request.key) === request) this.inFlight.delete(request.key);
  }

  private fail(request: InFlightRequest, error: unknown): void {
    this.forgetRequest(request);
    if (error instanceof AssentError) {
      this.reject(request.id, error);
    } else {
      this.log.error('operation failed', { method: request.method, error });
      this.reject(request.id, new AssentError('internal', `The daemon failed while running ${request.method}; details are in daemon.log.`));
    }
  }
}
