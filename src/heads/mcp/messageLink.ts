// The one interface the gateway talks through, towards the client and towards
// each upstream: framed JSON-RPC messages in and out. A line-framed link
// (lineLink.ts: stdio) also hands over each message's original line, so a
// message the gateway does not change is written on as the same bytes; an SDK
// transport (Streamable HTTP, in-memory in tests) carries parsed messages only.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { WireMessage } from './wire.js';

/** Marks an object as a MessageLink rather than an SDK Transport. */
export const MESSAGE_LINK: unique symbol = Symbol('assent.messageLink');

export interface MessageLink {
  readonly [MESSAGE_LINK]: true;
  /** Each message received; `line` is its exact text when the link reads lines, undefined otherwise. */
  onmessage?: (message: WireMessage, line: string | undefined) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  start(): Promise<void>;
  /**
   * Queues one message. `line`, when given, must be this very message as the
   * peer sent it; a line-framed link then writes it as it is. False when the
   * link cannot take it now (closed, or the transport threw at once); a
   * failure that shows later (an HTTP POST refused, a broken pipe) goes to
   * `onLateFailure`, so no request waits for an answer that cannot come.
   */
  send(message: WireMessage, line?: string, onLateFailure?: (error: unknown) => void): boolean;
  close(): Promise<void>;
  /** The protocol version initialize settled on (the HTTP transport sends it as a header). */
  setProtocolVersion?(version: string): void;
  /**
   * Line-framed links only: each line is offered here before it is parsed; true
   * means the receiver took the line as it is (it is not parsed, and `onmessage`
   * does not hear of it), false that it goes the usual way.
   */
  online?: (line: string) => boolean;
  /** Line-framed links only: queues a line exactly as a peer wrote it (one complete JSON-RPC message), unparsed. */
  sendLine?(line: string, onLateFailure?: (error: unknown) => void): boolean;
}

export function isMessageLink(endpoint: Transport | MessageLink): endpoint is MessageLink {
  return (endpoint as Partial<MessageLink>)[MESSAGE_LINK] === true;
}

/** The endpoint as a MessageLink: itself, or an SDK Transport behind the same interface. */
export function asMessageLink(endpoint: Transport | MessageLink): MessageLink {
  return isMessageLink(endpoint) ? endpoint : new TransportLink(endpoint);
}

/** An SDK Transport as a MessageLink: messages arrive parsed (and validated by the SDK), no original lines. */
class TransportLink implements MessageLink {
  readonly [MESSAGE_LINK] = true as const;
  onmessage?: (message: WireMessage, line: string | undefined) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly transport: Transport) {}

  start(): Promise<void> {
    // Installed only now: an in-memory transport keeps what arrived earlier and delivers it on start.
    const transport = this.transport;
    transport.onmessage = (message) => this.onmessage?.(message as unknown as WireMessage, undefined);
    transport.onclose = () => this.onclose?.();
    transport.onerror = (error) => this.onerror?.(error);
    return transport.start();
  }

  send(message: WireMessage, _line?: string, onLateFailure?: (error: unknown) => void): boolean {
    try {
      this.transport.send(message as unknown as JSONRPCMessage).catch((error: unknown) => onLateFailure?.(error));
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }
}
