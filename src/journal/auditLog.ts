// The audit log's writer (SPEC §15): one hash-chained JSON line per gated call or
// effect in audit/<YYYY-MM-DD>.jsonl. Writes are queued and asynchronous so they never
// block or fail a call. The day's file stays open for appending; each batch leaves
// in one write, then an fsync. A batch the disk does not take (full, or failing) is
// cut back out of the file and held, with its seqs, until a retry writes it whole:
// the chain gets no torn line and no gap, and nothing reads past what is on disk.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../core/base/clock.js';
import { realTimers, type Timers } from '../core/base/timers.js';
import { dayOf, lastSeqOfFile, lineDigest, listLogFiles, loadChainState, NEWLINE, readFirstLine, writeAnchor, type ChainState } from './auditChain.js';
import { copyAuditFields, type AuditRecord } from './auditRecords.js';

// Where the tests have always found them; the code imports each from its own module.
export { AUDIT_GENESIS, lineDigest } from './auditChain.js';
export type { AuditRecord } from './auditRecords.js';
export { auditToCsv, exportAudit, verifyAudit } from './auditReaders.js';

const DAY_MS = 86_400_000;

/** A day file opened for appending (created 0600); the writer keeps it open between batches. */
export interface AuditFile {
  /** Appends every byte: one write, repeated for the rest only if the system took part of it. */
  write(bytes: Uint8Array): Promise<void>;
  /** Waits until what was written is on disk. */
  sync(): Promise<void>;
  /** The file's size now, in bytes (as this writer knows it: the audit directory is its daemon's alone). */
  size(): Promise<number>;
  /** Cuts the file back to `size` bytes (what a failed batch left of itself). */
  truncate(size: number): Promise<void>;
  /** False once the path names another file or none (deleted or replaced since it was opened). */
  isCurrent(): Promise<boolean>;
  close(): Promise<void>;
}

export interface AuditLogOptions {
  dir: string;
  clock?: Clock;
  retentionDays?: number;
  /** Told each failed write (the batch is held and retried) and each record lost; must not throw. */
  onFailure?: (error: unknown) => void;
  /** Told when held records were written after failures (the disk takes writes again); must not throw. */
  onRecovered?: (info: { heldRecords: number; failedAttempts: number }) => void;
  /** How long after a failed write it is tried again (default 500 ms). */
  retryMs?: number;
  /** Records held in memory while the disk takes none; beyond it new ones are lost, counted and reported (default 10,000). */
  maxHeld?: number;
  timers?: Timers;
  /** Opens a day file for appending; tests inject failing ones. */
  openFile?: (file: string) => Promise<AuditFile>;
  /** Told the lines of each batch once they are on disk (team mode copies them to the database, R-TEAM-4); must not throw. */
  onWritten?: (lines: readonly WrittenLine[]) => void;
  /**
   * The lowest seq some reader still needs (an export sink's cursor + 1, R-AUD-5): pruning keeps
   * every file holding a line at or above it, however old, so a sink that is far behind loses nothing.
   */
  neededFrom?: () => number;
}

/** One line as written to the day file: its place in the chain, its exact text, and the record it is the JSON of (read only). */
export interface WrittenLine {
  seq: number;
  ts: string;
  line: string;
  record: Readonly<Record<string, unknown>>;
}

/** A queued line: `seq` and `prev` first (filled in when written), then the record's fields, copied once. */
interface PendingLine {
  seq: number;
  prev: string;
  [field: string]: unknown;
}

/** A batch with its place in the chain fixed: written whole, or held and written again byte for byte. */
interface PreparedBatch {
  bytes: Buffer;
  count: number;
  /** Where the chain stands once it is on disk. */
  end: ChainState;
  written: WrittenLine[] | undefined;
  /** The count of records appended when this batch was taken: every one up to it is in this batch, an earlier one, or lost. */
  through: number;
  /** Set while a failed attempt may have left part of it in a day file: that file, and the size to cut it back to. */
  cutBack?: { day: string; size: number };
}

/** The default `openFile`: an O_APPEND descriptor, so every write lands at the end whatever else wrote there. */
export async function openAuditFile(file: string): Promise<AuditFile> {
  const handle = await fs.promises.open(file, 'a', 0o600);
  let opened: fs.Stats;
  try {
    opened = await handle.stat();
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  // Kept here rather than asked of the file at every batch: one syscall less on the audit's path.
  let size = opened.size;
  return {
    async write(bytes) {
      for (let offset = 0; offset < bytes.length; ) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
        size += bytesWritten;
      }
    },
    sync: () => handle.sync(),
    size: () => Promise.resolve(size),
    async truncate(to) {
      await handle.truncate(to);
      size = to;
    },
    async isCurrent() {
      try {
        const now = await fs.promises.stat(file);
        return now.ino === opened.ino && now.dev === opened.dev;
      } catch {
        return false;
      }
    },
    close: () => handle.close(),
  };
}

export class AuditLog {
  private readonly dir: string;
  private readonly clock: Clock;
  private readonly retentionDays: number;
  private readonly onFailure: (error: unknown) => void;
  private readonly openFile: (file: string) => Promise<AuditFile>;
  private readonly onWritten: ((lines: readonly WrittenLine[]) => void) | undefined;
  private readonly neededFrom: (() => number) | undefined;
  private readonly onRecovered: AuditLogOptions['onRecovered'];
  private readonly retryMs: number;
  private readonly maxHeld: number;
  private readonly timers: Timers;
  private queue: PendingLine[] = [];
  private draining: Promise<void> | undefined;
  /** Where the chain stands on disk (the last line synced); undefined until read from disk. */
  private chain: ChainState | undefined;
  /** The batch the disk did not take yet; everything appended since waits behind it in `queue`. */
  private stalled: PreparedBatch | undefined;
  private retryTimer: unknown;
  /** Failed attempts since the last batch that was written. */
  private failedAttempts = 0;
  /** Records appended, and records on disk or lost: what `durable()` waits on. */
  private appendedCount = 0;
  private settledCount = 0;
  private durableWaiters: { target: number; resolve: () => void }[] = [];
  /** Records appended up to which a write was made or tried: what `written()` waits on. */
  private attemptedThrough = 0;
  private writtenWaiters: { target: number; resolve: () => void }[] = [];
  private currentDay = '';
  /** The open day file, kept between batches; replaced on a new day or when its path no longer names it. */
  private file: { day: string; handle: AuditFile } | undefined;
  /** Set when the last existing file lacks a final newline (a torn write); the next write starts a new line. */
  private needsNewline = false;
  private failureCount = 0;

  constructor(options: AuditLogOptions) {
    this.dir = options.dir;
    this.clock = options.clock ?? { now: () => Date.now(), monotonic: () => performance.now() };
    this.retentionDays = options.retentionDays ?? 30;
    this.onFailure = options.onFailure ?? (() => undefined);
    this.openFile = options.openFile ?? openAuditFile;
    this.onWritten = options.onWritten;
    this.neededFrom = options.neededFrom;
    this.onRecovered = options.onRecovered;
    this.retryMs = options.retryMs ?? 500;
    this.maxHeld = options.maxHeld ?? 10_000;
    this.timers = options.timers ?? realTimers;
  }

  /** Records lost (R-AUD-3): beyond `maxHeld` while the disk takes none, or still held when the log closed. For daemon.status. */
  get failures(): number {
    return this.failureCount;
  }

  /** Records appended and not yet on disk: held while the disk does not take them, written by the next attempt that succeeds. */
  get held(): number {
    return (this.stalled?.count ?? 0) + this.queue.length;
  }

  /** True from a failed write until held records are written again. */
  get failing(): boolean {
    return this.stalled !== undefined || this.failedAttempts > 0;
  }

  /** The seq of the last line known to be on disk (synced by this writer, or there when it read the file): readers go no further. */
  durableSeq(): number {
    try {
      return this.init().seq;
    } catch {
      return 0;
    }
  }

  /** Queues a record; never throws and never waits for the disk (R-AUD-3). */
  append(record: AuditRecord): void {
    this.appendedCount += 1;
    try {
      if (this.held >= this.maxHeld) {
        this.lose(1, new Error(`${this.maxHeld} audit records are held already while the disk takes none; this one is lost`));
        return;
      }
      this.queue.push(copyAuditFields(record, { seq: 0, prev: '' }) as PendingLine);
      // Held records wait for the retry timer: not one failing write per call while the disk is full.
      if (this.draining === undefined && this.retryTimer === undefined) {
        this.draining = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
      }
    } catch (error) {
      this.lose(1, error);
    }
  }

  /** Resolves once every record appended so far was tried: written, or held after a failed write (see `held`). */
  async flush(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  /**
   * Resolves once every record appended so far is on disk (or was lost and
   * counted in `failures`); while the disk takes none, it waits. What must not
   * run ahead of the audit (removing a spool, clearing a call) waits on this.
   */
  durable(): Promise<void> {
    const target = this.appendedCount;
    if (this.settledCount >= target) return Promise.resolve();
    return new Promise((resolve) => this.durableWaiters.push({ target, resolve }));
  }

  /**
   * Resolves once every record appended so far was handed to its file by
   * write(2), before the fsync that follows: in the kernel's page cache a line
   * survives a kill -9 of this process (not a power cut). Also resolves when
   * that write failed (the records are then held, see `held`) and, at once,
   * while held records wait for the retry. What answers a caller that runs the
   * call at once, unjournaled (an agent's hook, R-HOOK-10), waits on this, so
   * no such call starts without its line on the way to disk.
   */
  written(): Promise<void> {
    const target = this.appendedCount;
    if (this.attemptedThrough >= target || this.settledCount >= target || this.retryTimer !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.writtenWaiters.push({ target, resolve }));
  }

  /** Tries the held records now (as the retry timer would); resolves when that attempt ended. */
  async retry(): Promise<void> {
    if (this.retryTimer !== undefined) {
      this.timers.clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.draining === undefined && this.held > 0) this.draining = this.drain();
    await this.flush();
  }

  /** Flushes, then closes the day file; a record appended later opens it again. Records still held are lost, and counted. Never rejects. */
  async close(): Promise<void> {
    await this.flush();
    if (this.retryTimer !== undefined) {
      this.timers.clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    const held = this.held;
    if (held > 0) {
      this.stalled = undefined;
      this.queue = [];
      this.lose(held, new Error(`${held} audit records could not be written before the audit log closed (the disk took none)`));
    }
    await this.closeFile();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Deletes day files older than retentionDays and records where the retained
   * chain now starts (anchor.json), so `verify` still checks the first kept line.
   */
  prune(): void {
    try {
      const cutoff = dayOf(this.clock.now() - this.retentionDays * DAY_MS);
      const files = listLogFiles(this.dir);
      const needed = this.neededFrom?.() ?? Number.POSITIVE_INFINITY;
      // Oldest first, and stop at the first file a reader still needs: the retained chain stays contiguous.
      const doomed: string[] = [];
      for (const name of files) {
        if (name.slice(0, 10) >= cutoff || (lastSeqOfFile(path.join(this.dir, name)) ?? 0) >= needed) break;
        doomed.push(name);
      }
      if (doomed.length === 0) return;
      const kept = files.slice(doomed.length);
      let anchor: ChainState | undefined;
      const firstKept = kept[0];
      if (firstKept !== undefined) {
        const first = readFirstLine(path.join(this.dir, firstKept));
        const parsed = first === undefined ? undefined : (JSON.parse(first) as { seq?: unknown; prev?: unknown });
        if (parsed && typeof parsed.seq === 'number' && typeof parsed.prev === 'string') anchor = { seq: parsed.seq, prev: parsed.prev };
      } else {
        const state = this.chain ?? loadChainState(this.dir).state;
        anchor = { seq: state.seq + 1, prev: state.prev };
      }
      if (anchor !== undefined) writeAnchor(this.dir, anchor);
      for (const name of doomed) fs.rmSync(path.join(this.dir, name), { force: true });
    } catch (error) {
      this.fail(error, 0);
    }
  }

  private fail(error: unknown, records: number): void {
    this.failureCount += records;
    try {
      this.onFailure(error);
    } catch {
      // A failing failure handler must not reach the call path either.
    }
  }

  /** Records that will never be written: counted, reported, and no longer waited for. */
  private lose(records: number, error: unknown): void {
    this.fail(error, records);
    this.settle(records);
  }

  /** Records up to `through` reached write(2), or their write failed: wakes whoever waits for that. */
  private attempted(through: number): void {
    if (through > this.attemptedThrough) this.attemptedThrough = through;
    this.wakeWritten();
  }

  private wakeWritten(): void {
    if (this.writtenWaiters.length === 0) return;
    const still: { target: number; resolve: () => void }[] = [];
    for (const waiter of this.writtenWaiters) {
      if (waiter.target <= this.attemptedThrough || waiter.target <= this.settledCount) waiter.resolve();
      else still.push(waiter);
    }
    this.writtenWaiters = still;
  }

  /** `records` more are on disk or lost: wakes whoever waits for them. */
  private settle(records: number): void {
    this.settledCount += records;
    this.wakeWritten();
    if (this.durableWaiters.length === 0) return;
    const still: { target: number; resolve: () => void }[] = [];
    for (const waiter of this.durableWaiters) {
      if (waiter.target <= this.settledCount) waiter.resolve();
      else still.push(waiter);
    }
    this.durableWaiters = still;
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined) return;
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = undefined;
      if (this.draining === undefined && this.held > 0) this.draining = this.drain();
    }, this.retryMs);
  }

  private init(): ChainState {
    if (this.chain !== undefined) return this.chain;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const loaded = loadChainState(this.dir);
    this.chain = loaded.state;
    this.currentDay = loaded.lastDay;
    this.needsNewline = loaded.tornTail;
    return this.chain;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        let batch = this.stalled;
        if (batch === undefined) {
          if (this.queue.length === 0) break;
          const records = this.queue;
          this.queue = [];
          try {
            batch = this.prepare(records, this.appendedCount);
          } catch (error) {
            // The directory could not even be read or made: the records wait, unnumbered, for the next try.
            this.queue = records.concat(this.queue);
            throw error;
          }
          this.stalled = batch;
        }
        await this.write(batch);
        this.stalled = undefined;
        this.settle(batch.count);
        if (this.failedAttempts > 0) {
          const failedAttempts = this.failedAttempts;
          this.failedAttempts = 0;
          try {
            this.onRecovered?.({ heldRecords: batch.count + this.queue.length, failedAttempts });
          } catch {
            // Told, or not: the records are on disk either way.
          }
        }
      }
    } catch (error) {
      this.failedAttempts += 1;
      // Tried and held: whoever waits for the write is told now, not after the disk has room.
      this.attempted(this.appendedCount);
      this.fail(error, 0);
      await this.closeFile();
      this.scheduleRetry();
    } finally {
      this.draining = undefined;
    }
  }

  /** Numbers a batch after the chain as it stands on disk and serializes it, once: a retry writes the very same bytes. */
  private prepare(batch: readonly PendingLine[], through: number): PreparedBatch {
    const start = this.init();
    let { seq, prev } = start;
    const lines: string[] = [];
    const written: WrittenLine[] | undefined = this.onWritten === undefined ? undefined : [];
    let units = 0;
    for (const pending of batch) {
      seq += 1;
      pending.seq = seq;
      pending.prev = prev;
      const line = JSON.stringify(pending);
      lines.push(line);
      written?.push({ seq, ts: String(pending['ts'] ?? ''), line, record: pending });
      units += line.length;
      prev = lineDigest(line);
    }
    // Each line goes straight into one buffer (a UTF-16 unit is at most 3 UTF-8 bytes), after room for
    // one newline that ends a torn line before it: no joined string to flatten and re-encode.
    const bytes = Buffer.allocUnsafe(units * 3 + lines.length + 1);
    let length = 1;
    for (const line of lines) {
      length += bytes.write(line, length, 'utf8');
      bytes[length++] = NEWLINE;
    }
    bytes[0] = NEWLINE;
    return { bytes: bytes.subarray(0, length), count: batch.length, end: { seq, prev }, written, through };
  }

  /** Writes a prepared batch whole and syncs it; on failure cuts the file back to where it was and rethrows. */
  private async write(batch: PreparedBatch): Promise<void> {
    const today = dayOf(this.clock.now());
    // Never go back to an earlier file if the wall clock steps back: the chain reads in file order. A batch that
    // failed goes back to the file it failed in, which may still hold part of it.
    const day = batch.cutBack?.day ?? (today > this.currentDay ? today : this.currentDay);
    const rolled = day !== this.currentDay && this.currentDay !== '';
    const file = await this.fileFor(day);
    let size = await file.size();
    if (batch.cutBack !== undefined && size > batch.cutBack.size) {
      await file.truncate(batch.cutBack.size);
      size = batch.cutBack.size;
    }
    batch.cutBack = { day, size };
    const newline = this.needsNewline && day === this.currentDay;
    try {
      await file.write(newline ? batch.bytes : batch.bytes.subarray(1));
      this.attempted(batch.through);
      await file.sync();
    } catch (error) {
      // Tried: whoever waits for the write goes on now, its line held for the retry.
      this.attempted(batch.through);
      // Whatever part reached the file goes: the chain on disk ends where it ended, and the retry writes it all.
      try {
        await file.truncate(size);
        await file.sync();
      } catch {
        // Cut back at the next attempt, before it writes.
      }
      throw error;
    }
    batch.cutBack = undefined;
    this.chain = batch.end;
    this.currentDay = day;
    this.needsNewline = false;
    if (batch.written !== undefined) {
      try {
        this.onWritten?.(batch.written);
      } catch (error) {
        this.fail(error, 0);
      }
    }
    if (rolled) this.prune();
  }

  /** The open file for `day`: the one kept from the last batch while its path still names it, else newly opened. */
  private async fileFor(day: string): Promise<AuditFile> {
    const kept = this.file;
    if (kept !== undefined && kept.day === day && (await kept.handle.isCurrent())) return kept.handle;
    await this.closeFile();
    const handle = await this.openFile(path.join(this.dir, `${day}.jsonl`));
    this.file = { day, handle };
    return handle;
  }

  private async closeFile(): Promise<void> {
    const kept = this.file;
    this.file = undefined;
    if (kept === undefined) return;
    try {
      await kept.handle.close();
    } catch (error) {
      // Everything in it was synced before; a failed close loses nothing, but it is worth knowing.
      this.fail(error, 0);
    }
  }
}
