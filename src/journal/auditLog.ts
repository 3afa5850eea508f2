// The audit log (SPEC §15): one hash-chained JSON line per gated call or effect
// in audit/<YYYY-MM-DD>.jsonl. Writes are queued and asynchronous so they never
// block or fail a call; failures are counted for daemon.status.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../core/canonical.js';
import type { Clock } from '../core/clock.js';

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

export interface AuditLogOptions {
  dir: string;
  clock?: Clock;
  retentionDays?: number;
  onFailure?: (error: unknown) => void;
  /** The write primitive; tests inject a failing one. */
  appendFile?: (file: string, text: string) => Promise<void>;
}

interface ChainState {
  seq: number;
  prev: string;
}

/** The digest a line's successor names as `prev`: over the exact text of the line, without its newline. */
export function lineDigest(line: string): string {
  return `v1:sha256:${sha256Hex(line)}`;
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

/** Picks the R-AUD-1 fields and drops everything else, so a stray `args` never reaches disk. */
export function sanitizeAuditRecord(record: AuditRecord): AuditRecord {
  const source = record as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of AUDIT_FIELDS) {
    const value = source[field];
    if (value !== undefined) out[field] = value;
  }
  return out as unknown as AuditRecord;
}

const defaultAppendFile = async (file: string, text: string): Promise<void> => {
  const handle = await fs.promises.open(file, 'a', 0o600);
  try {
    await handle.appendFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
};

export class AuditLog {
  private readonly dir: string;
  private readonly clock: Clock;
  private readonly retentionDays: number;
  private readonly onFailure: (error: unknown) => void;
  private readonly appendFile: (file: string, text: string) => Promise<void>;
  private queue: AuditRecord[] = [];
  private draining: Promise<void> | undefined;
  private chain: ChainState | undefined;
  private currentDay = '';
  /** Set when the last existing file lacks a final newline (a torn write); the next write starts a new line. */
  private needsNewline = false;
  private failureCount = 0;

  constructor(options: AuditLogOptions) {
    this.dir = options.dir;
    this.clock = options.clock ?? { now: () => Date.now(), monotonic: () => performance.now() };
    this.retentionDays = options.retentionDays ?? 30;
    this.onFailure = options.onFailure ?? (() => undefined);
    this.appendFile = options.appendFile ?? defaultAppendFile;
  }

  /** Records that failed to be written (R-AUD-3), for daemon.status. */
  get failures(): number {
    return this.failureCount;
  }

  /** Queues a record; never throws and never waits for the disk (R-AUD-3). */
  append(record: AuditRecord): void {
    try {
      this.queue.push(sanitizeAuditRecord(record));
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
        const first = splitLines(fs.readFileSync(path.join(this.dir, firstKept), 'utf8'))[0];
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
          const start = this.init();
          const today = dayOf(this.clock.now());
          // Never go back to an earlier file if the wall clock steps back: the chain reads in file order.
          const day = today > this.currentDay ? today : this.currentDay;
          const rolled = day !== this.currentDay && this.currentDay !== '';
          let { seq, prev } = start;
          let text = this.needsNewline && day === this.currentDay ? '\n' : '';
          for (const record of batch) {
            seq += 1;
            const line = JSON.stringify({ seq, prev, ...record });
            text += `${line}\n`;
            prev = lineDigest(line);
          }
          await this.appendFile(path.join(this.dir, `${day}.jsonl`), text);
          this.chain = { seq, prev };
          this.currentDay = day;
          this.needsNewline = false;
          if (rolled) this.prune();
        } catch (error) {
          this.fail(error, batch.length);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}

/** Reads where the chain continues: the last line of the newest file, else the anchor, else genesis. */
function loadChainState(dir: string): { state: ChainState; lastDay: string; tornTail: boolean } {
  const files = listLogFiles(dir);
  for (let i = files.length - 1; i >= 0; i -= 1) {
    const name = files[i] ?? '';
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    const lines = splitLines(text);
    const last = lines[lines.length - 1];
    if (last === undefined) continue;
    let seq = lines.length;
    try {
      const parsed = JSON.parse(last) as { seq?: unknown };
      if (typeof parsed.seq === 'number') seq = parsed.seq;
    } catch {
      // A torn or edited last line still anchors the chain; verify reports it.
    }
    return { state: { seq, prev: lineDigest(last) }, lastDay: name.slice(0, 10), tornTail: !text.endsWith('\n') };
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
