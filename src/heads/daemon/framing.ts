// Line framing for the daemon socket (R-D-2): one JSON-RPC message per line,
// each line capped, so a peer can never make the other side buffer without bound.

/** The cap of one frame on the daemon socket: 1 MiB, not counting the newline (R-D-2). */
export const MAX_FRAME_BYTES = 1_048_576;

const NEWLINE = 0x0a;

export interface LineDecoderOptions {
  /** Largest line accepted, in bytes, excluding the newline. */
  maxBytes?: number;
  /** One complete line, decoded as UTF-8 (a trailing `\r` is kept; JSON treats it as whitespace). */
  onLine(line: string): void;
  /** A line that is not valid UTF-8, with its bytes (a lenient reader may still decode them); the stream stays usable. */
  onInvalidUtf8?(bytes: Buffer): void;
  /** A line grew past `maxBytes`; the decoder stops accepting input for good. */
  onOversize(): void;
}

/**
 * Splits a byte stream into lines. Bytes are kept until the newline arrives and
 * only then decoded, so a multi-byte character split across chunks is whole when
 * decoded (0x0A never occurs inside a UTF-8 sequence). Once a line exceeds the cap
 * the decoder drops its buffer and ignores all further input: the caller answers
 * `frame_too_large` and closes the connection.
 */
export class LineDecoder {
  private readonly maxBytes: number;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failed = false;

  constructor(private readonly options: LineDecoderOptions) {
    this.maxBytes = options.maxBytes ?? MAX_FRAME_BYTES;
  }

  /** True once a line was too long; no more lines will be delivered. */
  get overflowed(): boolean {
    return this.failed;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.failed && start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.pendingBytes + (end - start) > this.maxBytes) {
        this.overflow();
        return;
      }
      if (newline === -1) {
        this.pending.push(chunk.subarray(start));
        this.pendingBytes += chunk.length - start;
        return;
      }
      const piece = chunk.subarray(start, end);
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      this.deliver(line);
    }
  }

  private deliver(bytes: Buffer): void {
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      this.options.onInvalidUtf8?.(bytes);
      return;
    }
    this.options.onLine(text);
  }

  private overflow(): void {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.options.onOversize();
  }
}

/** Serializes one message as a frame. */
export function encodeFrame(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** Notification a client sends to abort one of its running requests. */
export const CANCEL_METHOD = '$/cancelRequest';

/** The version handshake every client sends first (R-D-3); until it succeeds a connection is handshake-pending. */
export const HELLO_METHOD = 'daemon.hello';
