// The audit log (SPEC §15): one hash-chained JSON line per gated call or effect
// in audit/<YYYY-MM-DD>.jsonl. Writes are queued and asynchronous so they never
// block or fail a call; failures are counted for daemon.status. The day's file
// stays open for appending; each batch leaves in one write, then an fsync.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../core/clock.js';
import { nativeSha256Hex } from './nativeHash.js';

/** `started`: an allowed agent action whose after-event has not arrived (R-HOOK-10); its end, if reported, is a second line with the same callId. */
export type AuditOutcome = 'ok' | 'error' | 'denied' | 'consent_denied' | 'consent_timeout' | 'cancelled' | 'uncertain' | 'started';
export type AuditChannel = 'tty' | 'cli' | 'watch' | 'web' | 'elicitation' | 'rule' | 'session';

/**
 * The process that sent a decision, as the daemon found it (never as the client
 * said): `ss+proc` when the kernel named it, `unavailable` with a reason otherwise.
 */
export interface AuditPeer {
  source: 'ss+proc' | 'unavailable';
  pid?: number;
  /** Several processes share the connection (an inherited or passed socket). */
  pids?: number[];
  /** Effective uid of the process(es), read from /proc when the decision arrived. */
  uid?: number;
  reason?: string;
}

/** R-AUD-1 fields. There is deliberately no field for raw arguments: only their digest. */
export interface AuditRecord {
  /** ISO 8601 time of the call. */
  ts: string;
  principal: string;
  /** Agent actions (R-HOOK-10): the hook name of the agent (`claude-code`, `codex`, `gemini`); `server` is then its alias. */
  agent?: string;
  /** The call an agent action's `started` line and its end line share (R-HOOK-10). */
  callId?: string;
  sessionId?: string;
  server?: string;
  tool?: string;
  kind?: 'exec';
  argsSha256: string;
  outcome: AuditOutcome;
  deniedReason?: string;
  channel?: AuditChannel;
  approvalId?: string;
  ruleId?: string;
  waitedForConsentMs?: number;
  durationMs?: number;
  caller?: Record<string, unknown>;
  /** The effect a proof-bound call ran as (handoff retries, exec via the daemon). */
  effectId?: string;
  /** True when an identical retry was answered with the recorded disposition and nothing ran (R-J-4). */
  replayed?: boolean;
  /** The channel the deciding client said it was; a hint beside the head-stamped `channel`, never a fact. */
  claimedChannel?: string;
  /** The process that sent the decision over the socket, found by the daemon. */
  peer?: AuditPeer;
}

/** The order fields are written in; anything else a caller passes is dropped. */
const AUDIT_FIELDS = [
  'ts',
  'principal',
  'sessionId',
  'server',
  'tool',
  'kind',
  'argsSha256',
  'outcome',
  'deniedReason',
  'channel',
  'approvalId',
  'ruleId',
  'waitedForConsentMs',
  'durationMs',
  'caller',
  'effectId',
  'replayed',
  'claimedChannel',
  'peer',
  'agent',
  'callId',
] as const satisfies readonly (keyof AuditRecord)[];

/** `prev` of the very first line of a log. */
export const AUDIT_GENESIS = `v1:sha256:${'0'.repeat(64)}`;

/** Written by pruning: where the retained chain starts once older files are gone. */
const ANCHOR_FILE = 'anchor.json';
const FILE_PATTERN = /^\d{4}-\d{2}-\d{2}\.jsonl$/;
const DAY_MS = 86_400_000;
const NEWLINE = 0x0a;

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
}

interface ChainState {
  seq: number;
  prev: string;
}

/** The digest a line's successor names as `prev`: over the exact text of the line, without its newline. */
export function lineDigest(line: string): string {
  return `v1:sha256:${nativeSha256Hex(line)}`;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function listLogFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => FILE_PATTERN.test(name))
    .sort();
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function readAnchor(dir: string): ChainState | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(dir, ANCHOR_FILE), 'utf8')) as Partial<ChainState>;
    if (typeof value.seq === 'number' && typeof value.prev === 'string') return { seq: value.seq, prev: value.prev };
  } catch {
    // No anchor: the chain starts at genesis.
  }
  return undefined;
}

/** Copies the R-AUD-1 fields into `out` in their order and drops everything else, so a stray `args` never reaches disk. */
function copyAuditFields(record: AuditRecord, out: Record<string, unknown>): Record<string, unknown> {
  const source = record as unknown as Record<string, unknown>;
  for (const field of AUDIT_FIELDS) {
    const value = source[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** Picks the R-AUD-1 fields and drops everything else, so a stray `args` never reaches disk. */
export function sanitizeAuditRecord(record: AuditRecord): AuditRecord {
  return copyAuditFields(record, {}) as unknown as AuditRecord;
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
      const doomed = files.filter((name) => name.slice(0, 10) < cutoff);
      if (doomed.length === 0) return;
      const kept = files.filter((name) => name.slice(0, 10) >= cutoff);
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
      if (anchor !== undefined) {
        const tmp = path.join(this.dir, `${ANCHOR_FILE}.tmp`);
        fs.writeFileSync(tmp, `${JSON.stringify(anchor)}\n`, { mode: 0o600 });
        fs.renameSync(tmp, path.join(this.dir, ANCHOR_FILE));
      }
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
    let units = 0;
    for (const pending of batch) {
      seq += 1;
      pending.seq = seq;
      pending.prev = prev;
      const line = JSON.stringify(pending);
      lines.push(line);
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

/** How much of a day file is read at a time when only its first or last lines are needed. */
const EDGE_CHUNK = 64 * 1024;

/**
 * The last two lines of a file (`last` may be torn) and whether it ends with a
 * newline, read from the end in growing chunks: a day file can be large, and
 * this runs on start and after a failed write, on the daemon's event loop.
 */
function readLastLines(file: string): { last?: string; before?: string; endsWithNewline: boolean } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    for (let length = Math.min(size, EDGE_CHUNK); ; length = Math.min(size, length * 2)) {
      const buffer = Buffer.alloc(length);
      const read = fs.readSync(fd, buffer, 0, length, size - length);
      // A chunk that starts inside a character garbles only its first, partial line, which is never used.
      const text = buffer.subarray(0, read).toString('utf8');
      const lines = splitLines(text);
      const whole = length >= size;
      if (whole || lines.length >= 3) {
        const last = lines[lines.length - 1];
        const before = lines.length >= 2 ? lines[lines.length - 2] : undefined;
        const result: { last?: string; before?: string; endsWithNewline: boolean } = { endsWithNewline: text.endsWith('\n') };
        if (last !== undefined) result.last = last;
        if (before !== undefined) result.before = before;
        return result;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The first line of a file (undefined when empty), read from the start in growing chunks. */
function readFirstLine(file: string): string | undefined {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    for (let length = Math.min(size, EDGE_CHUNK); ; length = Math.min(size, length * 2)) {
      const buffer = Buffer.alloc(length);
      const read = fs.readSync(fd, buffer, 0, length, 0);
      const newline = buffer.subarray(0, read).indexOf(NEWLINE);
      if (newline !== -1 || length >= size) return read === 0 ? undefined : buffer.subarray(0, newline === -1 ? read : newline).toString('utf8');
    }
  } finally {
    fs.closeSync(fd);
  }
}

function seqOf(line: string | undefined): number | undefined {
  if (line === undefined) return undefined;
  try {
    const parsed = JSON.parse(line) as { seq?: unknown };
    return typeof parsed.seq === 'number' ? parsed.seq : undefined;
  } catch {
    return undefined;
  }
}

/** Reads where the chain continues: the last line of the newest file, else the anchor, else genesis. */
function loadChainState(dir: string): { state: ChainState; lastDay: string; tornTail: boolean } {
  const files = listLogFiles(dir);
  for (let i = files.length - 1; i >= 0; i -= 1) {
    const name = files[i] ?? '';
    const file = path.join(dir, name);
    const tail = readLastLines(file);
    const last = tail.last;
    if (last === undefined) continue;
    // A torn or edited last line still anchors the chain (verify reports it); its seq follows the line before.
    const before = seqOf(tail.before);
    const seq = seqOf(last) ?? (before !== undefined ? before + 1 : splitLines(fs.readFileSync(file, 'utf8')).length);
    return { state: { seq, prev: lineDigest(last) }, lastDay: name.slice(0, 10), tornTail: !tail.endsWithNewline };
  }
  const anchor = readAnchor(dir);
  const state = anchor === undefined ? { seq: 0, prev: AUDIT_GENESIS } : { seq: anchor.seq - 1, prev: anchor.prev };
  return { state, lastDay: '', tornTail: false };
}

export interface AuditVerification {
  ok: boolean;
  /** Lines verified intact (before the first broken one). */
  lines: number;
  firstBroken?: { file: string; line: number; reason: string };
}

/**
 * Checks every link of the chain in file order (R-AUD-2): each line parses,
 * its seq follows the previous one and its prev is the digest of the previous
 * line's exact text. Reports the first broken line (file name and 1-based line):
 * when only a `prev` link fails, that is the line before it, whose text changed.
 */
export function verifyAudit(dir: string): AuditVerification {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return { ok: true, lines: 0 };
  }
  // `expected` is what the next line must carry; the anchor says where a pruned log starts.
  let expected: ChainState = readAnchor(dir) ?? { seq: 1, prev: AUDIT_GENESIS };
  let count = 0;
  let last: { file: string; line: number } | undefined;
  for (const file of files) {
    const lines = splitLines(fs.readFileSync(path.join(dir, file), 'utf8'));
    for (let index = 0; index < lines.length; index += 1) {
      const line = lines[index] ?? '';
      const here = { file, line: index + 1 };
      const broken = (at: { file: string; line: number }, reason: string): AuditVerification => ({
        ok: false,
        lines: count,
        firstBroken: { ...at, reason },
      });
      let parsed: { seq?: unknown; prev?: unknown };
      try {
        parsed = JSON.parse(line) as { seq?: unknown; prev?: unknown };
      } catch {
        return broken(here, 'not valid JSON (edited or torn write)');
      }
      if (parsed === null || typeof parsed !== 'object') return broken(here, 'not a JSON object');
      if (parsed.seq !== expected.seq) {
        return broken(here, `seq is ${String(parsed.seq)}, expected ${expected.seq}: a line before it was removed or one was inserted here`);
      }
      if (parsed.prev !== expected.prev) {
        // Sequence numbers run on, so nothing was removed: the line before was edited after it was written.
        if (last !== undefined) {
          count -= 1;
          return broken(last, `changed after it was written: its digest no longer matches the prev recorded by the next line (${file}:${index + 1})`);
        }
        return broken(here, `prev does not match the start of the retained chain (${expected.prev}); earlier lines were removed or this line was changed`);
      }
      count += 1;
      last = here;
      expected = { seq: expected.seq + 1, prev: lineDigest(line) };
    }
  }
  return { ok: true, lines: count };
}

/** Reads records back (without seq/prev), oldest first; `since` is epoch ms compared with each record's ts. */
export function exportAudit(dir: string, options: { since?: number } = {}): AuditRecord[] {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return [];
  }
  const since = options.since;
  if (since !== undefined) {
    const firstDay = dayOf(since);
    files = files.filter((name) => name.slice(0, 10) >= firstDay);
  }
  const out: AuditRecord[] = [];
  for (const file of files) {
    for (const line of splitLines(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      if (parsed === null || typeof parsed !== 'object') continue;
      const record = sanitizeAuditRecord(parsed as AuditRecord);
      if (since !== undefined && !(Date.parse(record.ts) >= since)) continue;
      out.push(record);
    }
  }
  return out;
}

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // A spreadsheet would run a cell starting with = + - @ as a formula.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** CSV with a header row of the R-AUD-1 field names; `caller` is a JSON cell. */
export function auditToCsv(records: readonly AuditRecord[]): string {
  const rows = [AUDIT_FIELDS.join(',')];
  for (const record of records) {
    const source = record as unknown as Record<string, unknown>;
    rows.push(AUDIT_FIELDS.map((field) => csvCell(source[field])).join(','));
  }
  return `${rows.join('\n')}\n`;
}
