// What every export sink is to the exporter (R-AUD-4, R-AUD-5): a named thing
// that takes a batch of records and resolves once the receiver took them (or
// the transport did, where the protocol has no acknowledgement), else rejects.
import type { ExportRecord } from '../../core/audit/auditExportRecord.js';

/**
 * What a sink knows once a batch counts as sent (R-AUD-5): `acknowledged`, the
 * receiver said so (OTLP, a webhook's 2xx) or the file was synced; `sent`, a
 * stream socket took the bytes (syslog over TCP, TLS, Unix); `unacknowledged`,
 * UDP: nothing comes back, so a lag of 0 cannot say the records arrived.
 */
export type SinkDelivery = 'acknowledged' | 'sent' | 'unacknowledged';

/** The delivery of a syslog transport: UDP is fire-and-forget, the stream transports know their socket took the bytes. */
export function syslogDelivery(transport: string): SinkDelivery {
  return transport === 'udp' ? 'unacknowledged' : 'sent';
}

export interface AuditSink {
  /** The key of its cursor (`name`, or `<kind>-<position>`). */
  readonly name: string;
  readonly kind: 'syslog' | 'cef' | 'otlp' | 'webhook';
  /** Where it sends, as status may show it: never a secret. */
  readonly description: string;
  /** What a sent batch means for this sink; `acknowledged` when absent. */
  readonly delivery?: SinkDelivery;
  /** Sends one batch, oldest first; rejects when any of it may not have arrived (then the whole batch is sent again). */
  send(records: readonly ExportRecord[]): Promise<void>;
  close(): Promise<void>;
}

/** A short reason for status and logs: the error's code and message, without a stack. */
export function failureText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return (code !== undefined ? `${code}: ${error.message}` : error.message).slice(0, 300);
  }
  return String(error).slice(0, 300);
}
