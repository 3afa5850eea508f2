// The audit log's writer (SPEC §15): one hash-chained JSON line per gated call or
// effect in audit/<YYYY-MM-DD>.jsonl. Writes are queued and asynchronous so they never
// block or fail a call; failures are counted for daemon.status. The day's file
// stays open for appending; each batch leaves in one write, then an fsync.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../core/base/clock.js';
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
  /** False once the path names another file or none (deleted or replaced since it was opened). */
  isCurrent(): Promise<boolean>;
  close(): Promise<void>;
}

export interface AuditLogOptions {
  dir: string;
  clock?: Clock;
  retentionDays?: number;
  onFailure?: (error: unknown) => void;
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
  return {
    async write(bytes) {
      for (let offset = 0; offset < bytes.length; ) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
        offset += bytesWritten;
      }
    },
    sync: () => handle.sync(),
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
  private queue: PendingLine[] = [];
  private draining: Promise<void> | undefined;
  /** Where the chain continues; undefined until read from disk, and again after a failed write (the disk is the truth). */
  private chain: ChainState | undefined;
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
  }

  /** Records that failed to be written (R-AUD-3), for daemon.status. */
  get failures(): number {
    return this.failureCount;
  }

  /** Queues a record; never throws and never waits for the disk (R-AUD-3). */
  append(record: AuditRecord): void {
    try {
      this.queue.push(copyAuditFields(record, { seq: 0, prev: '' }) as PendingLine);
      if (this.draining === undefined) {
        this.draining = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
      }
    } catch (error) {
      this.fail(error, 1);
    }
  }

  /** Resolves once every record appended so far is written (or counted as failed). */
  async flush(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  /** Flushes, then closes the day file; a record appended later opens it again. Never rejects. */
  async close(): Promise<void> {
    await this.flush();
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
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.write(batch);
        } catch (error) {
          this.fail(error, batch.length);
          // Part of the batch may be in the file (or all of it, unsynced): continue the chain from what is there.
          this.chain = undefined;
          await this.closeFile();
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  private async write(batch: readonly PendingLine[]): Promise<void> {
    const start = this.init();
    const today = dayOf(this.clock.now());
    // Never go back to an earlier file if the wall clock steps back: the chain reads in file order.
    const day = today > this.currentDay ? today : this.currentDay;
    const rolled = day !== this.currentDay && this.currentDay !== '';
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
    // Each line goes straight into one buffer (a UTF-16 unit is at most 3 UTF-8 bytes): no joined string to flatten and re-encode.
    const bytes = Buffer.allocUnsafe(units * 3 + lines.length + 1);
    let length = 0;
    if (this.needsNewline && day === this.currentDay) bytes[length++] = NEWLINE;
    for (const line of lines) {
      length += bytes.write(line, length, 'utf8');
      bytes[length++] = NEWLINE;
    }
    const file = await this.fileFor(day);
    await file.write(bytes.subarray(0, length));
    await file.sync();
    this.chain = { seq, prev };
    this.currentDay = day;
    this.needsNewline = false;
    if (written !== undefined) {
      try {
        this.onWritten?.(written);
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
