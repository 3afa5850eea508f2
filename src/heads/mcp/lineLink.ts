// Newline-delimited JSON-RPC over a pair of byte streams, the MCP stdio framing:
// the gateway's client side (stdin/stdout) and each stdio upstream. A line is
// JSON.parse'd and checked for shape only; the receiving peer validates params,
// once (SPEC §10). Each message keeps its original line so the gateway can
// write an unchanged message on as the same text, and everything queued in one
// event-loop turn leaves in a single write.
import type { Readable, Writable } from 'node:stream';
import { AssentError } from '../../core/base/errors.js';
import { LineDecoder } from '../daemon/framing.js';
import { MESSAGE_LINK, type MessageLink } from './messageLink.js';
import { wireShapeProblem, type WireMessage } from './wire.js';

/** The longest line accepted, in bytes: what the SDK's stdio transports buffered at most (10 MiB). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

export interface LineLinkOptions {
  /** Who is on the other side, for error texts: `the MCP client`, `MCP server "fs"`. */
  peer: string;
  maxLineBytes?: number;
  /** The input ending means the peer is gone, so the link closes (the client side). A child's exit says so instead. */
  closeOnEnd?: boolean;
  /** Defers the write of one turn's messages; setImmediate by default, after every callback of the turn. */
  defer?: (flush: () => void) => void;
  /**
   * The client side: a JSON-RPC batch (a JSON array) is answered with one
   * `-32600` error (id null) instead of being dropped in silence, so a client
   * that sent one is not left waiting. MCP since 2025-06-18 has no batches;
   * nothing in one is read, relayed or decided.
   */
  answerBatches?: boolean;
}

/** The JSON-RPC "Invalid Request" code, answered to a batch. */
export const RPC_INVALID_REQUEST = -32600;

export class LineLink implements MessageLink {
  readonly [MESSAGE_LINK] = true as const;
  onmessage?: (message: WireMessage, line: string | undefined) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  online?: (line: string) => boolean;
  private readonly decoder: LineDecoder;
  private readonly defer: (flush: () => void) => void;
  private state: 'new' | 'open' | 'closed' = 'new';
  private queued: string[] = [];
  private lateFailures: ((error: unknown) => void)[] = [];
  private flushScheduled = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineLinkOptions,
  ) {
    const maxBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.defer = options.defer ?? ((flush) => setImmediate(flush));
    this.decoder = new LineDecoder({
      maxBytes,
      onLine: (line) => this.receive(line, line),
      // Read as the SDK read it (U+FFFD for each bad sequence) and never passed on as the original bytes,
      // so the gateway and the next peer read the same text.
      onInvalidUtf8: (bytes) => this.receive(bytes.toString('utf8'), undefined),
      onOversize: () => {
        this.onerror?.(
          new AssentError(
            'frame_too_large',
            `${options.peer} sent a line longer than ${maxBytes} bytes; the connection is closed. MCP over stdio sends one JSON-RPC message per line.`,
            { details: { limitBytes: maxBytes } },
          ),
        );
        void this.close();
      },
    });
  }

  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new AssentError('internal', `The link to ${this.options.peer} was already started.`));
    this.state = 'open';
    this.input.on('data', this.onData);
    this.input.on('error', this.onStreamError);
    this.output.on('error', this.onStreamError);
    if (this.options.closeOnEnd === true) {
      this.input.on('end', this.onEnd);
      this.input.on('close', this.onEnd);
    }
    return Promise.resolve();
  }

  send(message: WireMessage, line?: string, onLateFailure?: (error: unknown) => void): boolean {
    if (this.state === 'closed') return false;
    let text = line;
    if (text === undefined) {
      try {
        text = JSON.stringify(message);
      } catch {
        return false;
      }
    }
    return this.sendLine(text, onLateFailure);
  }

  sendLine(text: string, onLateFailure?: (error: unknown) => void): boolean {
    if (this.state === 'closed') return false;
    this.queued.push(text);
    // One sender's handler hears a failed write once, however many of its messages it carried.
    if (onLateFailure !== undefined && this.lateFailures[this.lateFailures.length - 1] !== onLateFailure) this.lateFailures.push(onLateFailure);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.defer(this.flush);
    }
    return true;
  }

  /** Stops reading, writes what is still queued, then reports the close once. Idempotent. */
  close(): Promise<void> {
    if (this.state === 'closed') return Promise.resolve();
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    // Another reader of the same stream keeps it flowing; otherwise it must not hold the process open.
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.flush();
    if (wasOpen) this.onclose?.();
    return Promise.resolve();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.decoder.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  };

  private readonly onEnd = (): void => {
    void this.close();
  };

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.queued.length === 0) return;
    const text = this.queued.length === 1 ? `${this.queued[0] as string}\n` : `${this.queued.join('\n')}\n`;
    const failures = this.lateFailures;
    this.queued = [];
    this.lateFailures = [];
    const onWritten =
      failures.length === 0
        ? undefined
        : (error: Error | null | undefined): void => {
            if (error) for (const fail of failures) fail(error);
          };
    try {
      this.output.write(text, onWritten);
    } catch (error) {
      // A stream that throws (already destroyed) reports nothing else: the senders learn it here.
      for (const fail of failures) fail(error);
      this.onerror?.(error instanceof Error ? error : new AssentError('unavailable', String(error)));
    }
  };

  /** One error for the whole batch, id null: no member of it was read, so none is answered on its own. */
  private answerBatch(size: number): void {
    const message =
      `assent mcp does not accept JSON-RPC batches (MCP has none since protocol 2025-06-18): this batch of ${size} message${size === 1 ? '' : 's'} was not read, ` +
      'relayed or decided. Send each message on its own line.';
    this.sendLine(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RPC_INVALID_REQUEST, message, data: { type: 'invalid_request', details: { batchSize: size } } } }));
    this.onerror?.(new AssentError('invalid_request', `${this.options.peer} sent a JSON-RPC batch of ${size} messages; it was answered with one -32600 error and not relayed.`));
  }

  private receive(text: string, line: string | undefined): void {
    if (this.state !== 'open' || text === '' || text === '\r') return;
    if (line !== undefined && this.online !== undefined) {
      try {
        if (this.online(line)) return;
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new AssentError('internal', String(error)));
        return;
      }
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.onerror?.(new AssentError('parse_error', `${this.options.peer} sent a line that is not JSON; it was dropped. MCP over stdio sends one JSON-RPC message per line.`));
      return;
    }
    if (Array.isArray(value) && this.options.answerBatches === true) {
      this.answerBatch(value.length);
      return;
    }
    const problem = wireShapeProblem(value);
    if (problem !== undefined) {
      this.onerror?.(new AssentError('invalid_request', `${this.options.peer} sent a line that is not a JSON-RPC 2.0 message (${problem}); it was dropped.`));
      return;
    }
    try {
      this.onmessage?.(value as WireMessage, line);
    } catch (error) {
      // A failing handler must not take the stream down with it; the next line is read as usual.
      this.onerror?.(error instanceof Error ? error : new AssentError('internal', String(error)));
    }
  }
}
