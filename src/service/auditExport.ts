// Delivery of audit lines to export sinks, at least once (R-AUD-5). The day
// files are the source of truth: each sink reads them forward from its durable
// cursor (this host, seq), sends a batch, and only then moves the cursor. A
// failed batch is sent again after a capped backoff; a crash between sending and
// moving the cursor sends it again, so receivers de-duplicate by (hostId, seq).
// Nothing here is on a call's path: the audit log only tells it a seq exists.
import type { ExportRecord } from '../core/audit/auditExportRecord.js';
import { toExportRecord } from '../core/audit/auditExportRecord.js';
import type { AuditSink, SinkDelivery } from '../channels/auditSinks/auditSink.js';
import { failureText } from '../channels/auditSinks/auditSink.js';
import type { TailLine } from '../journal/auditTail.js';
import type { Logger } from './logger.js';
import type { Timers } from '../core/base/timers.js';

/** Where cursors are kept: the journal (SQLite) or the team database (PostgreSQL). */
export interface ExportCursors {
  exportCursor(sink: string): Promise<number>;
  advanceExportCursor(sink: string, seq: number, at: number): Promise<void>;
}

/** Reads the audit files forward; one per sink, so each keeps its own place. */
export interface ExportSource {
  linesAfter(afterSeq: number, limit: number): Promise<TailLine[]>;
  lastSeq(): Promise<number>;
}

export interface ExportSinkEntry {
  sink: AuditSink;
  source: ExportSource;
  batchSize: number;
  maxLag: number;
}

export interface AuditExporterOptions {
  sinks: readonly ExportSinkEntry[];
  cursors: ExportCursors;
  host: { id: string; name: string };
  timers: Timers;
  now: () => number;
  logger: Logger;
  /** First retry after a failure, doubled on each further failure up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** A look at the files even without news from the log (a line written by another process, a missed kick). */
  pollMs?: number;
}

/** What `daemon status` shows per sink. */
export interface SinkStatus {
  kind: string;
  target: string;
  /** What `delivered` and `lag` can know (SinkDelivery): over UDP, that records were sent, never that they arrived. */
  delivery: SinkDelivery;
  /** Said beside an unacknowledged sink, so a lag of 0 is not read as "received". */
  note?: string;
  cursor: number;
  /** Lines in the files that the sink has not taken yet. */
  lag: number;
  /** True while lag is above the sink's maxLag: reported, and the lines wait in the files (nothing is dropped). */
  lagging: boolean;
  delivered: number;
  failures: number;
  lastSuccessAt: string | null;
  lastError: { at: string; message: string } | null;
  nextRetryAt: string | null;
}

interface SinkState {
  entry: ExportSinkEntry;
  cursor: number;
  running: Promise<void> | undefined;
  again: boolean;
  retry: unknown;
  retryAt: number | undefined;
  consecutiveFailures: number;
  failures: number;
  delivered: number;
  lastSuccessAt: number | undefined;
  lastError: { at: number; message: string } | undefined;
  lagging: boolean;
}

const UNACKNOWLEDGED_NOTE =
  'UDP has no acknowledgement: lag and delivered count records sent, and assent cannot know whether they arrived (a receiver that is down loses them without an error). Use tcp or tls where every record must be confirmed.';

export class AuditExporter {
  private readonly states: SinkState[];
  private newest = 0;
  private closed = false;
  private poll: unknown;
  private started: Promise<void> | undefined;

  constructor(private readonly options: AuditExporterOptions) {
    this.states = options.sinks.map((entry) => ({
      entry,
      cursor: 0,
      running: undefined,
      again: false,
      retry: undefined,
      retryAt: undefined,
      consecutiveFailures: 0,
      failures: 0,
      delivered: 0,
      lastSuccessAt: undefined,
      lastError: undefined,
      lagging: false,
    }));
  }

  /** Reads every cursor and how far the files go, then starts delivering. Never rejects. */
  start(): Promise<void> {
    this.started ??= (async () => {
      for (const state of this.states) {
        try {
          state.cursor = await this.options.cursors.exportCursor(state.entry.sink.name);
        } catch (error) {
          this.fail(state, error);
        }
        try {
          this.newest = Math.max(this.newest, await state.entry.source.lastSeq());
        } catch {
          // The files are read again on the first batch.
        }
      }
      for (const state of this.states) this.kick(state);
      this.schedulePoll();
    })();
    return this.started;
  }

  /** The audit log's news: lines up to `seq` are on disk. Cheap and synchronous; sending happens later. */
  written(seq: number): void {
    if (seq > this.newest) this.newest = seq;
    if (this.started === undefined) return;
    for (const state of this.states) if (state.retry === undefined) this.kick(state);
  }

  status(): Record<string, SinkStatus> {
    const out: Record<string, SinkStatus> = {};
    const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
    for (const state of this.states) {
      const delivery = state.entry.sink.delivery ?? 'acknowledged';
      out[state.entry.sink.name] = {
        kind: state.entry.sink.kind,
        target: state.entry.sink.description,
        delivery,
        ...(delivery === 'unacknowledged' ? { note: UNACKNOWLEDGED_NOTE } : {}),
        cursor: state.cursor,
        lag: Math.max(0, this.newest - state.cursor),
        lagging: state.lagging,
        delivered: state.delivered,
        failures: state.failures,
        lastSuccessAt: iso(state.lastSuccessAt),
        lastError: state.lastError === undefined ? null : { at: new Date(state.lastError.at).toISOString(), message: state.lastError.message },
        nextRetryAt: iso(state.retryAt),
      };
    }
    return out;
  }

  /** Largest lag of any sink, for /metrics. */
  lagBySink(): { sink: string; lag: number }[] {
    return this.states.map((state) => ({ sink: state.entry.sink.name, lag: Math.max(0, this.newest - state.cursor) }));
  }

  /** The lowest seq a sink still needs (pruning keeps the files holding it); infinite without sinks. */
  neededFrom(): number {
    return this.states.reduce((low, state) => Math.min(low, state.cursor + 1), Number.POSITIVE_INFINITY);
  }

  /** Resolves once no sink has a batch in flight or anything left to send (or it failed); tests and shutdown use it. */
  async idle(): Promise<void> {
    for (;;) {
      const running = this.states.map((state) => state.running).filter((p): p is Promise<void> => p !== undefined);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  /** Stops retrying and polling, lets a batch in flight end (bounded by the sinks' own timeouts), closes the sinks. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.poll !== undefined) this.options.timers.clearTimeout(this.poll);
    for (const state of this.states) if (state.retry !== undefined) this.options.timers.clearTimeout(state.retry);
    await this.idle();
    for (const state of this.states) await state.entry.sink.close().catch(() => undefined);
  }

  private schedulePoll(): void {
    if (this.closed) return;
    this.poll = this.options.timers.setTimeout(() => {
      this.poll = undefined;
      for (const state of this.states) if (state.retry === undefined) this.kick(state);
      this.schedulePoll();
    }, this.options.pollMs ?? 2000);
  }

  private kick(state: SinkState): void {
    if (this.closed) return;
    if (state.running !== undefined) {
      state.again = true;
      return;
    }
    state.running = this.deliver(state)
      .catch((error: unknown) => this.fail(state, error))
      .finally(() => {
        state.running = undefined;
        if (state.again && state.retry === undefined) {
          state.again = false;
          this.kick(state);
        }
      });
  }

  private async deliver(state: SinkState): Promise<void> {
    const { sink, source, batchSize } = state.entry;
    while (!this.closed) {
      state.again = false;
      const lines = await source.linesAfter(state.cursor, batchSize);
      if (lines.length === 0) return;
      const last = lines[lines.length - 1];
      if (last !== undefined && last.seq > this.newest) this.newest = last.seq;
      const records = lines.map((line) => this.recordOf(line));
      try {
        await sink.send(records);
      } catch (error) {
        this.fail(state, error);
        this.scheduleRetry(state);
        return;
      }
      const seq = last?.seq ?? state.cursor;
      state.cursor = seq;
      state.delivered += records.length;
      state.consecutiveFailures = 0;
      state.lastSuccessAt = this.options.now();
      try {
        await this.options.cursors.advanceExportCursor(sink.name, seq, state.lastSuccessAt);
      } catch (error) {
        // Delivered but not remembered: a restart sends these again, which at-least-once allows.
        this.options.logger.warn('an export cursor could not be stored; a restart sends those lines again', { sink: sink.name, seq, error: failureText(error) });
      }
      this.checkLag(state);
    }
  }

  private recordOf(line: TailLine): ExportRecord {
    let parsed: Record<string, unknown>;
    try {
      const value: unknown = JSON.parse(line.line);
      parsed = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : { seq: line.seq };
    } catch {
      // An edited or torn line still takes its place in the stream; `assent audit verify` says what broke.
      parsed = { seq: line.seq, outcome: 'unreadable' };
    }
    return toExportRecord(parsed, this.options.host, line.digest);
  }

  private fail(state: SinkState, error: unknown): void {
    const message = failureText(error);
    state.failures += 1;
    state.consecutiveFailures += 1;
    const first = state.lastError === undefined || state.consecutiveFailures === 1;
    state.lastError = { at: this.options.now(), message };
    if (first) this.options.logger.warn('an export sink failed; the lines stay in the audit files and are sent again', { sink: state.entry.sink.name, error: message });
    this.checkLag(state);
  }

  private scheduleRetry(state: SinkState): void {
    if (this.closed || state.retry !== undefined) return;
    const base = this.options.retryMs ?? 500;
    const cap = this.options.maxRetryMs ?? 30_000;
    const delay = Math.min(cap, base * 2 ** Math.min(20, state.consecutiveFailures - 1));
    state.retryAt = this.options.now() + delay;
    state.retry = this.options.timers.setTimeout(() => {
      state.retry = undefined;
      state.retryAt = undefined;
      this.kick(state);
    }, delay);
  }

  private checkLag(state: SinkState): void {
    const lag = this.newest - state.cursor;
    const lagging = lag > state.entry.maxLag;
    if (lagging && !state.lagging) {
      this.options.logger.warn('an export sink is behind by more than its maxLag; nothing is dropped, the lines wait in the audit files', { sink: state.entry.sink.name, lag, maxLag: state.entry.maxLag });
    }
    state.lagging = lagging;
  }
}
