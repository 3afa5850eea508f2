// The audit of calls the gate settled itself: records kept in order, sent in batches
// on a short timer, a refused batch retried record by record, a bounded backlog while no daemon listens.
// While calls are in flight the records wait (at most about a second): a burst of calls
// is not slowed by its own audit, which then goes in a few large batches once it is over.
import { errorText } from '../../core/base/errors.js';
import { nativeDigestOf } from '../../journal/nativeHash.js';
import type { Logger } from '../../service/logger.js';
import type { Timers } from '../../core/base/timers.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import { isConnectionLoss } from './daemonAnswers.js';

/** A call the gate allowed or denied by policy itself, as it is audited. */
export interface SettledCall {
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  ruleId?: string;
  caller: Record<string, unknown>;
  /** The length of the request's line (an upper bound of the arguments' size), when known: bounds what deferred records hold. */
  argsSize?: number;
}

/** `cancelled`: allowed, but the client withdrew it before it was forwarded; it never ran. */
export type SettledOutcome = 'ok' | 'error' | 'denied' | 'cancelled';

interface QueuedRecord {
  call: SettledCall;
  outcome: SettledOutcome;
  durationMs: number | undefined;
  /** The wire record, built once at the first send; null when the call's arguments cannot be digested. */
  params?: Record<string, unknown> | null;
}

const AUDIT_BATCH = 1000;
const AUDIT_FLUSH_MS = 20;
/** While calls are in flight, a flush waits at most this many timer periods (1 s), so records never wait long. */
const MAX_BUSY_TICKS = 50;
/** Queued records beyond which a flush starts at once, calls in flight or not. */
const MAX_DEFERRED_RECORDS = 10_000;
/** Size of the arguments deferred records may hold (in characters of their lines); beyond it a record is digested at once and its arguments let go. */
const MAX_DEFERRED_ARGS_SIZE = 8 * 1024 * 1024;
/** What a record whose size is not known counts as against that bound. */
const UNKNOWN_ARGS_SIZE = 64 * 1024;
const NO_ARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export interface AuditQueueOptions {
  logger: Logger;
  timers: Timers;
  /** Records kept while the daemon cannot be reached; beyond it new records are dropped, counted and logged. */
  maxBacklog: number;
  /** The current daemon connection; undefined while there is none (records are kept for the next). */
  client: () => DaemonClient | undefined;
  /** Whether the gate is closing: then everything queued goes at once, batch after batch. */
  closing: () => boolean;
  /** Whether calls are in flight: the flush then waits for them (up to MAX_BUSY_TICKS timer periods). */
  busy?: () => boolean;
  /** How many calls the gate has started so far: once a flush waited, it waits on while calls keep starting. */
  started?: () => number;
}

export interface AuditQueue {
  /** Settled calls waiting to be reported (kept across a lost connection). */
  readonly backlog: number;
  /** Settled calls never reported: backlog full, arguments that cannot be digested, or refused by the daemon. */
  readonly dropped: number;
  /** Queues a settled call; never throws and never waits for the daemon. */
  record(call: SettledCall, outcome: SettledOutcome, durationMs?: number): void;
  /** Sends what is queued; never rejects (it runs from a timer, R-AUD-3: audit never fails a call). */
  flush(): Promise<void>;
}

export function createAuditQueue(options: AuditQueueOptions): AuditQueue {
  const { logger, timers, maxBacklog } = options;
  // Locally settled calls are audited in batches, off the call path: the digest and
  // the socket write happen after the client already has its answer. A batch the
  // daemon did not take (its connection dropped) stays queued and goes to the next
  // daemon; the backlog is bounded.
  const queue: QueuedRecord[] = [];
  const busy = options.busy ?? (() => false);
  const started = options.started ?? (() => 0);
  /** `started()` at the previous timer period of a waiting flush. */
  let startedBefore = 0;
  let dropped = 0;
  let flushTimer: unknown;
  let inFlight: Promise<void> | undefined;
  /** Timer periods the current flush has waited for calls in flight. */
  let busyTicks = 0;
  /** Argument bytes held by queued records not encoded yet. */
  let heldArgsSize = 0;

  const drop = (count: number, why: string, fields: Record<string, unknown> = {}): void => {
    const before = dropped;
    dropped += count;
    // The first drop, then one line per hundred: a long outage must not flood stderr.
    if (before === 0 || Math.floor(before / 100) !== Math.floor(dropped / 100)) {
      logger.error(`settled calls were not audited: ${why}`, { ...fields, count, droppedSoFar: dropped });
    }
  };

  const encode = (entry: QueuedRecord): Record<string, unknown> | null => {
    if (entry.params !== undefined) return entry.params;
    const { call, outcome, durationMs } = entry;
    try {
      const params: Record<string, unknown> = {
        sessionId: call.sessionId,
        server: call.server,
        tool: call.tool,
        argsSha256: nativeDigestOf(call.args),
        outcome,
        caller: call.caller,
      };
      if (outcome === 'denied') params['deniedReason'] = 'policy';
      if (call.ruleId !== undefined) params['ruleId'] = call.ruleId;
      if (durationMs !== undefined) params['durationMs'] = Math.round(durationMs);
      entry.params = params;
    } catch (error) {
      entry.params = null;
      drop(1, 'the call arguments cannot be canonicalized for their digest', { server: call.server, tool: call.tool, error: errorText(error) });
    }
    // The queue owns the record now: its arguments are let go once digested.
    heldArgsSize -= call.argsSize ?? UNKNOWN_ARGS_SIZE;
    call.args = NO_ARGS;
    call.argsSize = 0;
    return entry.params;
  };

  /** Sends the queue front to back; what the daemon took leaves the queue, a lost connection keeps the rest. */
  const drain = async (): Promise<void> => {
    for (;;) {
      const client = options.client();
      if (client === undefined || queue.length === 0) return;
      const batch = queue.slice(0, AUDIT_BATCH);
      const records = batch.map(encode).filter((params): params is Record<string, unknown> => params !== null);
      try {
        if (records.length > 0) await client.call('calls.record', { records });
        queue.splice(0, batch.length);
        // What arrived meanwhile waits for the timer, so batches stay large (each costs the daemon a
        // write and an fsync); a full batch, or a gateway closing, goes at once.
        if (queue.length >= AUDIT_BATCH || options.closing()) continue;
        return;
      } catch (error) {
        if (isConnectionLoss(error) || client.closed) {
          logger.info('audit records kept until the daemon is back', { count: queue.length });
          return;
        }
        logger.warn('the daemon refused a batch of audit records; sending them one by one', { error: errorText(error) });
      }
      // The daemon refused the batch: it would refuse it again. Find the records it refuses; keep the others.
      for (const entry of batch) {
        const params = entry.params;
        try {
          if (params !== null && params !== undefined) await client.call('calls.record', { records: [params] });
        } catch (error) {
          if (isConnectionLoss(error) || client.closed) return;
          drop(1, 'the daemon refused the record', { server: entry.call.server, tool: entry.call.tool, error: errorText(error) });
        }
        queue.shift();
      }
    }
  };

  const flush = (): Promise<void> => {
    busyTicks = 0;
    if (flushTimer !== undefined) {
      timers.clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    inFlight ??= drain()
      .catch((error: unknown) => logger.error('sending audit records failed', { error: errorText(error), kept: queue.length }))
      .finally(() => {
        inFlight = undefined;
        if (queue.length > 0 && options.client() !== undefined) scheduleFlush();
      });
    return inFlight;
  };

  const scheduleFlush = (): void => {
    if (flushTimer !== undefined || options.client() === undefined) return;
    flushTimer = timers.setTimeout(() => {
      flushTimer = undefined;
      try {
        // Calls still in flight, or (once it waited) calls started since the last period: a burst goes on,
        // and the records wait for it to end (but not for ever). A gateway between two calls of a burst
        // may have none in flight for a moment; only a whole quiet period ends the wait.
        const now = started();
        const active = busy() || (busyTicks > 0 && now !== startedBefore);
        startedBefore = now;
        if (active && busyTicks < MAX_BUSY_TICKS && !options.closing()) {
          busyTicks += 1;
          scheduleFlush();
          return;
        }
        busyTicks = 0;
        void flush();
      } catch (error) {
        logger.error('the audit timer failed', { error: errorText(error) });
      }
    }, AUDIT_FLUSH_MS);
  };

  const record = (call: SettledCall, outcome: SettledOutcome, durationMs?: number): void => {
    if (queue.length >= maxBacklog) {
      drop(1, `the daemon has been unreachable for ${maxBacklog} settled calls and the backlog is full`, { server: call.server, tool: call.tool });
      return;
    }
    const entry: QueuedRecord = { call, outcome, durationMs };
    queue.push(entry);
    heldArgsSize += call.argsSize ?? UNKNOWN_ARGS_SIZE;
    // Large arguments are not held for a deferred flush: digested now, they are let go.
    if (heldArgsSize > MAX_DEFERRED_ARGS_SIZE) encode(entry);
    const full = queue.length >= MAX_DEFERRED_RECORDS || (queue.length >= AUDIT_BATCH && busyTicks === 0 && !busy());
    if (full && options.client() !== undefined) void flush();
    else scheduleFlush();
  };

  return {
    get backlog() {
      return queue.length;
    },
    get dropped() {
      return dropped;
    },
    record,
    flush,
  };
}
