// Team mode (R-TEAM-4): every line this host writes to its own hash-chained
// audit file is also a row of the shared `audit` table, so the team can read and
// verify every host's chain in one place. Copying never blocks a call and never
// throws (R-AUD-3): rows the database refuses (it is away) wait and are sent
// again, and on start whatever the file holds beyond the last stored seq is sent.
import type { WrittenLine } from '../journal/auditLog.js';
import type { AuditMirrorStore, AuditRow, StoreInfo } from '../journal/store.js';
import type { Logger } from './logger.js';
import type { Timers } from '../core/base/timers.js';

/** Rows sent in one statement. */
const BATCH = 500;

export interface AuditMirrorOptions {
  /** Where the rows go, and this host, whose lines they are. */
  store: AuditMirrorStore & Pick<StoreInfo, 'hostId'>;
  timers: Timers;
  logger: Logger;
  /** Wait before sending again after the database refused (default 1 s). */
  retryMs?: number;
}

export class AuditMirror {
  private queue: AuditRow[] = [];
  private sending: Promise<void> | undefined;
  private retry: unknown;
  private failureCount = 0;

  constructor(private readonly options: AuditMirrorOptions) {}

  /** Rows not in the database yet, and sends that failed, for daemon.status. */
  status(): { pending: number; failures: number } {
    return { pending: this.queue.length, failures: this.failureCount };
  }

  /** The AuditLog's `onWritten` (and lines read back from the day files): queues the lines of a batch now on disk. */
  add(lines: readonly Pick<WrittenLine, 'seq' | 'ts' | 'line'>[]): void {
    const hostId = this.options.store.hostId;
    for (const line of lines) this.queue.push({ hostId, seq: line.seq, ts: line.ts, line: line.line });
    this.kick();
  }

  /** Starts a send unless one runs or a retry waits; also called when the database is back. */
  kick(): void {
    if (this.sending !== undefined || this.queue.length === 0) return;
    if (this.retry !== undefined) {
      this.options.timers.clearTimeout(this.retry);
      this.retry = undefined;
    }
    this.sending = this.send().finally(() => {
      this.sending = undefined;
    });
  }

  /** Resolves once nothing is being sent (what could not be sent stays queued). */
  async flush(): Promise<void> {
    this.kick();
    while (this.sending !== undefined) await this.sending;
  }

  private async send(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, BATCH);
      try {
        await this.options.store.appendAuditRows(batch);
        this.queue.splice(0, batch.length);
      } catch (error) {
        this.failureCount += 1;
        this.options.logger.warn('audit lines could not be copied to the team database; they stay in this host\u2019s file and are sent again', { pending: this.queue.length, error });
        this.retry = this.options.timers.setTimeout(() => {
          this.retry = undefined;
          this.kick();
        }, this.options.retryMs ?? 1000);
        return;
      }
    }
  }
}
