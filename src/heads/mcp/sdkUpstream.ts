// An upstream reached through one of the SDK's client transports (Streamable
// HTTP; stdio on Windows), loaded only when its link starts: the SDK's
// transports bring its message schemas and their validator with them, about a
// fifth of a second of loading that a gateway fronting only stdio servers
// through its own line links never needs.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AssentError } from '../../core/base/errors.js';
import { asMessageLink, MESSAGE_LINK, type MessageLink } from './messageLink.js';
import type { WireMessage } from './wire.js';

export class DeferredTransportLink implements MessageLink {
  readonly [MESSAGE_LINK] = true as const;
  onmessage?: (message: WireMessage, line: string | undefined) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private loading: Promise<Transport> | undefined;
  private link: MessageLink | undefined;
  private closed = false;

  /** `load` builds the SDK transport (importing its module); it runs once, at the first `transport()` or `start()`. */
  constructor(private readonly load: () => Promise<Transport>) {}

  /** The SDK transport behind this link, loaded (not started) on first use. */
  transport(): Promise<Transport> {
    this.loading ??= this.load();
    return this.loading;
  }

  async start(): Promise<void> {
    if (this.link !== undefined) throw new AssentError('internal', 'This upstream link was already started.');
    const transport = await this.transport();
    if (this.closed) throw new AssentError('unavailable', 'The upstream link was closed before it started.');
    const link = asMessageLink(transport);
    link.onmessage = (message, line) => this.onmessage?.(message, line);
    link.onclose = () => this.onclose?.();
    link.onerror = (error) => this.onerror?.(error);
    this.link = link;
    await link.start();
  }

  /** False until the link started: nothing is queued for a transport that may never load. */
  send(message: WireMessage, line?: string, onLateFailure?: (error: unknown) => void): boolean {
    return this.link?.send(message, line, onLateFailure) ?? false;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.link?.close();
  }

  setProtocolVersion(version: string): void {
    this.link?.setProtocolVersion?.(version);
  }
}
