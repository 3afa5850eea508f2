// The audit spool of a gateway (SPEC §14 audit durability): every call a gateway
// settles itself from its policy snapshot is appended, within a few
// milliseconds, as one line of a file of its own under <ASSENT_HOME>/spool, and
// the daemon reads that file into the audit log. The daemon alone reads it
// and alone keeps how far it read (in memory and in `<file>.read` beside it), so
// each line is audited once however often it is told to read: on every
// `calls.ingestSpool` from the gateway, when the gateway's connection closes
// (a gateway killed -9 cannot say goodbye), and at start for the files of
// gateways that are gone. Only files that look like a spool are read: a name
// of the spool pattern, in a directory named `spool`, both owned by this user
// and private to them, opened without following a link.
import type { Logger } from '../service/logger.js';
import { SPOOL_DIR_NAME, spoolDirOf } from '../state/statePaths.js';
import { isSettledCall, SettledCallSchema, toAuditRecord, type SettledCallRecord } from './settledCalls.js';
import type { AuditRecord } from '../journal/auditRecords.js';

const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

export { SPOOL_DIR_NAME, spoolDirOf };

/**
 * A spool file's name: who wrote it (`mcp`, a gateway; `hook`, a hook that found no daemon to decide its call,
 * heads/hook/hookSpool.ts), its pid and a random part, so two writers never share one.
 */
export const SPOOL_FILE_PATTERN = /^(?:mcp|hook)-([1-9][0-9]{0,9})-([0-9a-f]{16})\.jsonl$/;
/** What the daemon reads of a spool at once; the rest is read in further steps of the same call. */
const READ_STEP_BYTES = 4 * 1024 * 1024;
/** The longest line taken: a record is a few hundred bytes, its caller at most a few kB. */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * One line of a spool: when the gateway wrote it (epoch ms) and its records as `calls.record` takes them. A line is
 * `{"at":…,"record":{…}}` (one record), or `{"at":…,"head":{…},"calls":[[argsSha256,outcome,durationMs?],…]}`:
 * calls of one session, server, tool, rule and caller (the head), each record being the head with its call's fields
 * (`deniedReason` "policy" for a denied one, the only denial a gateway settles itself).
 */
export interface SpoolLine {
  at: number;
  records: SettledCallRecord[];
  /** Calls of the line that are no audit record. */
  refused: number;
}

/** Fields a line's head must not hold: each call gives its own. */
const CALL_FIELDS = new Set(['argsSha256', 'outcome', 'durationMs', 'deniedReason']);

export interface SpoolIngestion {
  /** Lines audited by this reading. */
  recorded: number;
  /** Lines that are no audit record (refused by the `calls.record` schema) or too long; counted, never audited. */
  refused: number;
  /** Bytes of the file read so far (complete lines only). */
  offset: number;
  /** Whether the file and its progress were removed (a final reading, or a gateway that is gone). */
  removed: boolean;
}

export interface AuditSpoolReaderOptions {
  /** Where the records go: the daemon's audit log. */
  append: (record: AuditRecord) => void;
  principal: string;
  now: () => number;
  logger: Logger;
  /** Resolves once every record appended so far is on disk (the audit log's flush); without it progress is kept at once. */
  flushed?: () => Promise<void>;
  /** Whether a process runs; default `process.kill(pid, 0)`. */
  alive?: (pid: number) => boolean;
  getuid?: () => number;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What is wrong with a spool path, or undefined when the daemon may read it. */
export function spoolPathProblem(file: string, getuid: () => number = () => process.getuid?.() ?? -1): string | undefined {
  if (!path.isAbsolute(file)) return `${file} is not an absolute path`;
  const name = path.basename(file);
  if (!SPOOL_FILE_PATTERN.test(name)) return `${name} is not named like a spool file (mcp-<pid>-<16 hex digits>.jsonl or hook-<pid>-<16 hex digits>.jsonl)`;
  const dir = path.dirname(file);
  if (path.basename(dir) !== SPOOL_DIR_NAME) return `${file} is not in a folder named ${SPOOL_DIR_NAME}`;
  let stat: import('node:fs').Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  if (stat.uid !== getuid()) return `${dir} is not owned by this user`;
  if ((stat.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 700`;
  return undefined;
}

export class AuditSpoolReader {
  /** How far each spool was read (its lines handed to the audit log). */
  private readonly offsets = new Map<string, number>();
  /** How far that is kept beside each file, written once the audit had the lines on disk. */
  private readonly persisted = new Map<string, number>();
  /** Files read whole and removed once the audit has their lines on disk. */
  private readonly removing = new Set<string>();
  private readonly alive: (pid: number) => boolean;
  private readonly getuid: () => number;

  constructor(private readonly options: AuditSpoolReaderOptions) {
    this.alive = options.alive ?? processAlive;
    this.getuid = options.getuid ?? (() => process.getuid?.() ?? -1);
  }

  /**
   * Audits the complete lines of `file` not read before. With `final` (the
   * gateway closes, or moves on to a new file) the file and its progress are
   * removed afterwards: a line left without its newline was never whole.
   * Throws `invalid_params`-style errors as plain Errors naming the file when
   * it is not a spool file the daemon may read.
   */
  ingest(file: string, final = false): SpoolIngestion {
    const problem = spoolPathProblem(file, this.getuid);
    if (problem !== undefined) throw new Error(`not read as an audit spool: ${problem}`);
    if (this.removing.has(file)) return { recorded: 0, refused: 0, offset: this.offsets.get(file) ?? 0, removed: true };
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.forget(file);
        return { recorded: 0, refused: 0, offset: 0, removed: true };
      }
      throw error;
    }
    let result: SpoolIngestion;
    try {
      const stat = fs.fstatSync(fd);
      if (!stat.isFile()) throw new Error(`not read as an audit spool: ${file} is not a regular file`);
      if (stat.uid !== this.getuid()) throw new Error(`not read as an audit spool: ${file} is not owned by this user`);
      if ((stat.mode & 0o077) !== 0) throw new Error(`not read as an audit spool: ${file} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 600`);
      result = this.readFrom(fd, file, stat.size);
    } finally {
      fs.closeSync(fd);
    }
    if (final) {
      this.remove(file);
      result.removed = true;
    }
    return result;
  }

  /**
   * At start, and whenever a gateway's connection closed: audits what the
   * spool files in `dir` hold that was not read yet, and removes the files of
   * gateways no longer running. Never throws; a file it cannot read is logged.
   */
  ingestDir(dir: string): { recorded: number; refused: number; files: number } {
    const total = { recorded: 0, refused: 0, files: 0 };
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.options.logger.warn('could not list the audit spool folder', { dir, error });
      return total;
    }
    for (const name of names) {
      const match = SPOOL_FILE_PATTERN.exec(name);
      if (match === null) {
        // Progress left by a file already removed.
        if (name.endsWith('.jsonl.read') && !names.includes(name.slice(0, -'.read'.length))) this.removeQuietly(path.join(dir, name));
        continue;
      }
      const file = path.join(dir, name);
      try {
        const gone = !this.alive(Number(match[1]));
        const read = this.ingest(file, gone);
        total.recorded += read.recorded;
        total.refused += read.refused;
        total.files += 1;
      } catch (error) {
        this.options.logger.warn('could not read an audit spool', { file, error });
      }
    }
    if (total.recorded + total.refused > 0) this.options.logger.info('audited the calls gateways had spooled', total);
    return total;
  }

  private readFrom(fd: number, file: string, size: number): SpoolIngestion {
    let offset = this.offsetOf(file);
    const result: SpoolIngestion = { recorded: 0, refused: 0, offset, removed: false };
    if (offset > size) {
      // The file is not the one the progress was kept for: it is read from its start.
      this.options.logger.warn('an audit spool is shorter than what was read of it; reading it from its start', { file, read: offset, size });
      offset = 0;
    }
    let lastAt = Number.NaN;
    let lastTs = '';
    while (offset < size) {
      const length = Math.min(READ_STEP_BYTES, size - offset);
      const buffer = Buffer.allocUnsafe(length);
      const got = fs.readSync(fd, buffer, 0, length, offset);
      const end = buffer.lastIndexOf(0x0a, got - 1);
      if (end === -1) {
        if (got < MAX_LINE_BYTES || got < length) break;
        // A whole step without a newline: no record is that long. Skip to the next newline.
        result.refused += 1;
        offset += got;
        continue;
      }
      let start = 0;
      while (start <= end) {
        const newline = buffer.indexOf(0x0a, start);
        const from = start;
        start = newline + 1;
        if (newline === from) continue;
        const parsed = newline - from > MAX_LINE_BYTES ? undefined : parseSpoolLine(buffer.toString('utf8', from, newline));
        if (parsed === undefined) {
          result.refused += 1;
          continue;
        }
        if (parsed.at !== lastAt) {
          lastAt = parsed.at;
          lastTs = new Date(sensibleTime(parsed.at, this.options.now())).toISOString();
        }
        for (const record of parsed.records) this.options.append(toAuditRecord(record, lastTs, this.options.principal));
        result.recorded += parsed.records.length;
        result.refused += parsed.refused;
      }
      offset += end + 1;
    }
    if (result.refused > 0) this.options.logger.warn('lines of an audit spool are no audit record; they were not audited', { file, count: result.refused });
    result.offset = offset;
    this.keepOffset(file, offset);
    return result;
  }

  private offsetOf(file: string): number {
    const known = this.offsets.get(file);
    if (known !== undefined) return known;
    try {
      const kept = Number(fs.readFileSync(`${file}.read`, 'utf8'));
      return Number.isSafeInteger(kept) && kept >= 0 ? kept : 0;
    } catch {
      return 0;
    }
  }

  /**
   * Runs `task` once the audit lines appended so far are on disk: the progress
   * kept beside a spool (and its removal) never runs ahead of the audit, so a
   * daemon killed in between reads those lines again rather than losing them.
   */
  private afterDurable(task: () => void): void {
    const flushed = this.options.flushed;
    if (flushed === undefined) {
      task();
      return;
    }
    flushed().then(task, task);
  }

  private keepOffset(file: string, offset: number): void {
    if (this.offsets.get(file) === offset) return;
    this.offsets.set(file, offset);
    this.afterDurable(() => this.persistOffset(file));
  }

  private persistOffset(file: string): void {
    const offset = this.offsets.get(file);
    // Removed meanwhile (or already kept): nothing to write.
    if (offset === undefined || this.removing.has(file) || this.persisted.get(file) === offset) return;
    this.persisted.set(file, offset);
    const progress = `${file}.read`;
    try {
      // Written aside, then renamed over: a daemon killed meanwhile leaves the old progress, never half of one.
      fs.writeFileSync(`${progress}.tmp`, String(offset), { mode: 0o600 });
      fs.renameSync(`${progress}.tmp`, progress);
    } catch (error) {
      this.options.logger.warn('could not keep how far an audit spool was read; a restarted daemon may audit its lines again', { file, error });
    }
  }

  private remove(file: string): void {
    this.removing.add(file);
    this.afterDurable(() => {
      this.removeQuietly(file);
      this.removeQuietly(`${file}.read`);
      this.removing.delete(file);
      this.forget(file);
    });
  }

  private forget(file: string): void {
    this.offsets.delete(file);
    this.persisted.delete(file);
  }

  private removeQuietly(file: string): void {
    try {
      fs.unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.options.logger.warn('could not remove an audit spool file', { file, error });
    }
  }
}

/** The records of one spool line, each checked as `calls.record` checks one; undefined when the line is none. */
export function parseSpoolLine(line: string): SpoolLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const at = fields['at'];
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  const keys = Object.keys(fields).length;
  if (keys === 2 && 'record' in fields) {
    const record = checkedRecord(fields['record']);
    return record === undefined ? undefined : { at, records: [record], refused: 0 };
  }
  const { head, calls } = fields;
  if (keys !== 3 || !Array.isArray(calls) || typeof head !== 'object' || head === null || Array.isArray(head)) return undefined;
  if (Object.keys(head).some((key) => CALL_FIELDS.has(key))) return undefined;
  const parsed: SpoolLine = { at, records: [], refused: 0 };
  for (const call of calls as unknown[]) {
    const record = Array.isArray(call) && call.length >= 2 && call.length <= 3 ? checkedRecord(recordOf(head as Record<string, unknown>, call)) : undefined;
    if (record === undefined) parsed.refused += 1;
    else parsed.records.push(record);
  }
  return parsed;
}

/** A call of a line with a head, as the record `calls.record` would take. */
function recordOf(head: Record<string, unknown>, call: unknown[]): Record<string, unknown> {
  const [argsSha256, outcome, durationMs] = call;
  const record: Record<string, unknown> = { ...head, argsSha256, outcome };
  if (outcome === 'denied') record['deniedReason'] = 'policy';
  if (call.length === 3) record['durationMs'] = durationMs;
  return record;
}

function checkedRecord(record: unknown): SettledCallRecord | undefined {
  if (isSettledCall(record)) return record as SettledCallRecord;
  const checked = SettledCallSchema.safeParse(record);
  return checked.success ? checked.data : undefined;
}

/** The time a line says, unless it is later than now (a clock that jumped): then now. */
function sensibleTime(at: number, now: number): number {
  return at > now || at < 0 ? now : at;
}
