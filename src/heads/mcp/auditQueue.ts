// The audit of calls the gate settled itself: records kept in order, sent in batches
// on a short timer, a refused batch retried record by record, a bounded backlog while no daemon listens.
// While calls are in flight the records wait (at most about a second): a burst of calls
// is not slowed by its own audit, which then goes in a few large batches once it is over.
// With a spool (auditSpool.ts) the records do not wait in memory: every SPOOL_MS they are
// digested and appended to the spool file, and what waits for the burst to end is only the
// daemon's reading of that file (`calls.ingestSpool`), which the daemon also does by itself
// when this gateway's connection closes. A gateway killed -9 then leaves unaudited only
// the calls of its last SPOOL_MS and those still in flight.
import { errorText } from '../../core/base/errors.js';
import type { Logger } from '../../service/logger.js';
import type { Timers } from '../../core/base/timers.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import { argsDigest } from './auditDigest.js';
import type { AuditSpool } from './auditSpool.js';
import { SpoolHeads, type SettledCall, type SettledOutcome } from './settledCall.js';
import { isConnectionLoss } from './daemonAnswers.js';

export type { SettledCall, SettledOutcome } from './settledCall.js';

interface QueuedRecord {
  call: SettledCall;
  outcome: SettledOutcome;
  durationMs: number | undefined;
  /** The wire record, built once at the first send; null when the call's arguments cannot be digested. */
  params?: Record<string, unknown> | null;
  /** The arguments' digest, taken once; null when they have none. */
  digest?: string | null;
}

const AUDIT_BATCH = 1000;
const AUDIT_FLUSH_MS = 20;
/** How long a settled call's record waits before it is written to the spool: what a gateway killed -9 may lose at most, besides calls in flight. */
const SPOOL_MS = 20;
/** Records queued beyond which the spool is written at once. */
const SPOOL_BATCH = 256;
/** Spooled records the daemon has not read beyond which it is told to read at once, calls in flight or not (well below the backlog bound). */
const MAX_UNREAD_SPOOLED = 5000;
/** Calls one spool line holds at most, and about the most characters it has (the daemon reads lines of up to 64 KiB). */
const MAX_CALLS_PER_SPOOL_LINE = 128;
const MAX_SPOOL_LINE_CHARS = 16 * 1024;
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
  /** Where records are written within SPOOL_MS for the daemon to read; absent, they wait in memory until a daemon takes them. */
  spool?: AuditSpool;
  /** Epoch milliseconds, stamped on spool lines (the time the daemon audits them at). */
  now?: () => number;
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
  /** Writes what is queued to the spool, tells the daemon to read it all (removing the files), and closes the spool. Never rejects. */
  close(): Promise<void>;
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
  let spool = options.spool;
  const wallNow = options.now ?? Date.now;
  let spoolTimer: unknown;
  /** The daemon connection told of the spool file last: a new one is told at once, so it reads the file when this gateway dies. */
  let spoolToldTo: DaemonClient | undefined;
  let spoolClosed = false;
  /** When the oldest record not yet spooled was queued (monotonic ms). */
  let oldestQueuedAt = 0;

  const drop = (count: number, why: string, fields: Record<string, unknown> = {}): void => {
    const before = dropped;
    dropped += count;
    // The first drop, then one line per hundred: a long outage must not flood stderr.
    if (before === 0 || Math.floor(before / 100) !== Math.floor(dropped / 100)) {
      logger.error(`settled calls were not audited: ${why}`, { ...fields, count, droppedSoFar: dropped });
    }
  };

  /** The digest of a record's arguments, taken once; the arguments are let go. Null (counted as dropped) when they have no canonical form. */
  const digestEntry = (entry: QueuedRecord): string | null => {
    if (entry.digest !== undefined) return entry.digest;
    const { call } = entry;
    try {
      entry.digest = argsDigest(call.args);
    } catch (error) {
      entry.digest = null;
      drop(1, 'the call arguments cannot be canonicalized for their digest', { server: call.server, tool: call.tool, error: errorText(error) });
    }
    // The queue owns the record now: its arguments are let go once digested.
    heldArgsSize -= call.argsSize ?? UNKNOWN_ARGS_SIZE;
    call.args = NO_ARGS;
    call.argsSize = 0;
    return entry.digest;
  };

  const encode = (entry: QueuedRecord): Record<string, unknown> | null => {
    if (entry.params !== undefined) return entry.params;
    const argsSha256 = digestEntry(entry);
    if (argsSha256 === null) {
      entry.params = null;
      return null;
    }
    const { call, outcome, durationMs } = entry;
    const params: Record<string, unknown> = { sessionId: call.sessionId, server: call.server, tool: call.tool, argsSha256, outcome, caller: call.caller };
    if (outcome === 'denied') params['deniedReason'] = call.deniedReason ?? 'policy';
    if (call.ruleId !== undefined) params['ruleId'] = call.ruleId;
    if (call.policyKey !== undefined) params['policyKey'] = call.policyKey;
    if (call.risk !== undefined) params['risk'] = call.risk;
    if (durationMs !== undefined) params['durationMs'] = Math.round(durationMs);
    entry.params = params;
    return params;
  };

  const heads = new SpoolHeads();

  /**
   * Digests what is queued and appends it to the spool in one write; on a write error the spool is given up and the
   * records stay queued. Calls that share a head go on one line (operations/auditSpool.ts reads it):
   * `{"at":…,"head":{sessionId,server,tool,caller,ruleId?,policyKey?,risk?},"calls":[[argsSha256,outcome,durationMs?],…]}`.
   */
  const writeSpool = (): void => {
    if (spoolTimer !== undefined) {
      timers.clearTimeout(spoolTimer);
      spoolTimer = undefined;
    }
    if (spool === undefined || queue.length === 0) return;
    const at = String(Math.floor(wallNow()));
    let text = '';
    let records = 0;
    /** The head of the line being written, '' when none is open. */
    let open = '';
    let onLine = 0;
    let lineStart = 0;
    for (const entry of queue) {
      // A refusal for another reason than policy (a line's calls are read as refused by policy) is a line of its own.
      if (entry.call.deniedReason !== undefined && entry.params === undefined) encode(entry);
      if (entry.params !== undefined) {
        // Encoded for the socket before the spool took over, or one of its own: written as a line of its own.
        if (entry.params === null) continue;
        if (open !== '') text += ']}\n';
        open = '';
        text += `{"at":${at},"record":${JSON.stringify(entry.params)}}\n`;
        records += 1;
        continue;
      }
      const argsSha256 = digestEntry(entry);
      if (argsSha256 === null) continue;
      const head = heads.headOf(entry.call);
      const { outcome, durationMs } = entry;
      const call = durationMs === undefined ? `["${argsSha256}","${outcome}"]` : `["${argsSha256}","${outcome}",${String(Math.round(durationMs))}]`;
      if (head === open && onLine < MAX_CALLS_PER_SPOOL_LINE && text.length - lineStart < MAX_SPOOL_LINE_CHARS) {
        text += `,${call}`;
        onLine += 1;
      } else {
        if (open !== '') text += ']}\n';
        lineStart = text.length;
        text += `{"at":${at},"head":${head},"calls":[${call}`;
        open = head;
        onLine = 1;
      }
      records += 1;
    }
    if (open !== '') text += ']}\n';
    try {
      if (records > 0) spool.append(text, records);
      queue.length = 0;
    } catch (error) {
      logger.error('could not write to the audit spool; audit records are kept in memory until the daemon takes them', { error: errorText(error) });
      spool = undefined;
    }
  };

  const scheduleSpool = (): void => {
    if (spoolTimer !== undefined) return;
    spoolTimer = timers.setTimeout(() => {
      spoolTimer = undefined;
      try {
        writeSpool();
        scheduleFlush();
      } catch (error) {
        logger.error('the audit spool timer failed', { error: errorText(error) });
      }
    }, SPOOL_MS);
  };

  /** Tells the daemon to read the spool files, oldest first; an older file is read whole and removed. */
  const drainSpool = async (current: AuditSpool, final: boolean): Promise<void> => {
    const client = options.client();
    if (client === undefined) return;
    if (current.unread === 0 && spoolToldTo === client && !final) return;
    // A file read for the last time (the gateway closes, or it was rotated away from) must hold all its lines first.
    if (final || current.files.length > 1) await current.written();
    for (const file of [...current.files]) {
      const last = file === current.files[current.files.length - 1];
      try {
        const read = await client.call<{ recorded: number; refused: number; offset: number; removed: boolean }>('calls.ingestSpool', {
          file: file.path,
          ...(last && !final ? {} : { final: true }),
        });
        if (read.refused > 0) drop(read.refused, 'the daemon refused lines of the audit spool', { file: file.path });
        current.read(file.path, read.offset, read.removed);
        if (last) spoolToldTo = client;
      } catch (error) {
        if (isConnectionLoss(error) || client.closed) {
          logger.info('audit records kept in the spool until the daemon is back', { count: current.unread });
          return;
        }
        // A daemon that cannot read the spool (another state directory, an older daemon): the records go over the socket instead.
        logger.warn('the daemon did not read the audit spool; records are sent to it instead', { error: errorText(error) });
        spool = undefined;
        spoolToldTo = undefined;
        return;
      }
    }
  };

  /** Sends the queue front to back; what the daemon took leaves the queue, a lost connection keeps the rest. */
  const drain = async (): Promise<void> => {
    const spooling = spool;
    if (spooling !== undefined) {
      writeSpool();
      return drainSpool(spooling, options.closing());
    }
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
        if (backlog() > 0 && options.client() !== undefined) scheduleFlush();
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

  const backlog = (): number => queue.length + (spool?.unread ?? 0);

  const record = (call: SettledCall, outcome: SettledOutcome, durationMs?: number): void => {
    if (backlog() >= maxBacklog) {
      drop(1, `the daemon has been unreachable for ${maxBacklog} settled calls and the backlog is full`, { server: call.server, tool: call.tool });
      return;
    }
    const entry: QueuedRecord = { call, outcome, durationMs };
    queue.push(entry);
    heldArgsSize += call.argsSize ?? UNKNOWN_ARGS_SIZE;
    // Large arguments are not held for a deferred flush: digested now, they are let go.
    if (heldArgsSize > MAX_DEFERRED_ARGS_SIZE) digestEntry(entry);
    if (spool !== undefined && !spoolClosed) {
      // Written within SPOOL_MS whatever the daemon does; the daemon reads it once the burst is over,
      // or at once when so much waits unread that a long burst would fill the backlog.
      // A loaded event loop runs timers late: the age of the oldest record decides too, so none waits much past SPOOL_MS.
      const at = performance.now();
      if (queue.length === 1) oldestQueuedAt = at;
      if (queue.length >= SPOOL_BATCH || at - oldestQueuedAt >= SPOOL_MS) writeSpool();
      else scheduleSpool();
      if (backlog() >= MAX_UNREAD_SPOOLED && options.client() !== undefined) void flush();
      else scheduleFlush();
      return;
    }
    const full = queue.length >= MAX_DEFERRED_RECORDS || (queue.length >= AUDIT_BATCH && busyTicks === 0 && !busy());
    if (full && options.client() !== undefined) void flush();
    else scheduleFlush();
  };

  const close = async (): Promise<void> => {
    await flush();
    spoolClosed = true;
    if (spoolTimer !== undefined) timers.clearTimeout(spoolTimer);
    spoolTimer = undefined;
    try {
      await spool?.close();
    } catch (error) {
      logger.warn('could not close the audit spool', { error: errorText(error) });
    }
  };

  return {
    get backlog() {
      return backlog();
    },
    get dropped() {
      return dropped;
    },
    record,
    flush,
    close,
  };
}
