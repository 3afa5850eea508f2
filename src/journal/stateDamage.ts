// Damaged state files (issue 35): a journal.db SQLite cannot read as a sound
// database, a confirmed configuration that is not a readable record, a
// config.json that is not valid JSON, and an audit day file whose last line is
// torn. Each finding names the file, what is wrong, what the daemon does about
// it, and the one thing to do. The daemon's start and `assent doctor` read them
// from here; the repairs are in stateRepair.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';
import type { StatePaths } from '../state/statePaths.js';
import { listLogFiles } from './auditChain.js';
import { cutShortAdvice, inspectConfigFile, isCutShortJson } from './configFile.js';
import { decodePin, PINNED_CONFIG_KEY, pinDamage } from './confirmedConfig.js';
import { isSqliteDamage, journalDamaged, quickCheck } from './journal.js';

export type StateDamageKind = 'journal' | 'confirmed-config' | 'config' | 'audit-tail';

export interface StateDamage {
  kind: StateDamageKind;
  /** The damaged file's path. */
  file: string;
  /** What is wrong with it, in one sentence. */
  problem: string;
  /** What assent does while it is so: refuse to start, run fail-closed, or keep the confirmed configuration. */
  effect: string;
  /** The one thing to do, naming the command. */
  fix: string;
  /** An audit file's 1-based line number. */
  line?: number;
}

/** A torn last line of an audit day file: where the bytes to cut start and how many there are. */
export interface TornAuditTail {
  file: string;
  line: number;
  /** Byte offset of the torn line's first byte: the file is sound up to here. */
  offset: number;
  /** How many bytes the torn line holds (up to the end of the file). */
  bytes: number;
  endsWithNewline: boolean;
}

const TAIL_CHUNK = 64 * 1024;

function isRecordLine(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as { seq?: unknown } | null;
    return parsed !== null && typeof parsed === 'object' && typeof parsed.seq === 'number';
  } catch {
    return false;
  }
}

/** Reads `length` bytes at `position` of an open file. */
function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = fs.readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}

/** The byte offset where the last line of the file starts (after the newline before it), reading backwards in chunks. */
function lastLineStart(fd: number, size: number, endsWithNewline: boolean): number {
  let end = endsWithNewline ? size - 1 : size;
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const newline = readAt(fd, start, end - start).lastIndexOf(0x0a);
    if (newline !== -1) return start + newline + 1;
    end = start;
  }
  return 0;
}

/** How many newlines come before `offset`: the 1-based line number of the line starting there, minus one. */
function linesBefore(fd: number, offset: number): number {
  let count = 0;
  for (let position = 0; position < offset; position += TAIL_CHUNK) {
    const chunk = readAt(fd, position, Math.min(TAIL_CHUNK, offset - position));
    for (const byte of chunk) if (byte === 0x0a) count += 1;
  }
  return count;
}

/**
 * The torn last line of the newest audit day file that holds anything, or
 * undefined when its last line is a whole record. A last line that parses as a
 * record but lacks its newline is whole (the writer adds the newline before its
 * next line); one that does not parse — cut in the middle of its JSON, or the
 * zero bytes a file system leaves after power loss — is torn.
 */
export function findTornAuditTail(dir: string): TornAuditTail | undefined {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return undefined;
  }
  for (let index = files.length - 1; index >= 0; index -= 1) {
    const file = path.join(dir, files[index] ?? '');
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      if (size === 0) continue;
      const endsWithNewline = readAt(fd, size - 1, 1)[0] === 0x0a;
      const start = lastLineStart(fd, size, endsWithNewline);
      const text = readAt(fd, start, size - start).toString('utf8');
      if (isRecordLine(endsWithNewline ? text.slice(0, -1) : text)) return undefined;
      return { file, line: linesBefore(fd, start) + 1, offset: start, bytes: size - start, endsWithNewline };
    } finally {
      fs.closeSync(fd);
    }
  }
  return undefined;
}

/** The finding for a torn audit tail: the daemon refuses to start on it, and `assent audit repair` is the fix. */
export function tornTailDamage(torn: TornAuditTail): StateDamage {
  const shape = torn.endsWithNewline ? 'is not a whole record' : 'has no newline and its JSON is cut short';
  return {
    kind: 'audit-tail',
    file: torn.file,
    line: torn.line,
    problem: `the last line (line ${torn.line}, ${torn.bytes} bytes) ${shape}: a write torn by a crash or power loss`,
    effect: 'the daemon does not start, so no record is dropped or written over it silently, and every gated call is refused until it is repaired',
    fix: 'run `assent audit repair` in your terminal: it keeps a copy of the file, cuts the torn line and records the cut in the chain; `assent audit verify` then checks it',
  };
}

/**
 * Refuses a daemon start on a torn audit tail, naming the file, the line and the
 * repair. Why refuse rather than carry on: the audit is the evidence of calls
 * that may already have run (its writes are asynchronous), so the torn line is
 * a record we must not drop silently, and chaining new lines over it — what
 * the writer would do — leaves `assent audit verify` failing at that line
 * forever, which teaches an operator to ignore it. A database server that will
 * not start on a damaged data file and names it is what operators of security
 * tools expect; the repair is one confirmed command that keeps a backup.
 */
export function refuseTornAuditTail(dir: string): void {
  const torn = findTornAuditTail(dir);
  if (torn === undefined) return;
  const damage = tornTailDamage(torn);
  throw new AssentError('state_damaged', `the audit file ${torn.file} ends in a torn line: ${damage.problem}; assent will not start on it; ${damage.fix}`, {
    details: { file: torn.file, line: torn.line, bytes: torn.bytes, reason: 'audit-tail-torn', fix: 'assent audit repair' },
  });
}

/** What SQLite says about journal.db, read-only: undefined when it is sound (or absent: the daemon creates it). */
export function journalFileDamage(paths: StatePaths): string | undefined {
  let size: number;
  try {
    size = fs.statSync(paths.journal).size;
  } catch {
    return undefined;
  }
  // A 0-byte journal.db is what the daemon's first start creates before SQLite writes it; once the audit
  // log has lines, a daemon ran here, and an empty journal lost its confirmed configuration and everything else.
  if (size === 0) return hasAuditLines(paths.auditDir) ? 'it is empty (0 bytes) although the audit log shows a daemon ran here' : undefined;
  let db: Database.Database | undefined;
  try {
    db = new Database(paths.journal, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 1000');
    return quickCheck(db);
  } catch (error) {
    return isSqliteDamage(error) ? (error as Error).message : undefined;
  } finally {
    db?.close();
  }
}

function hasAuditLines(dir: string): boolean {
  try {
    return listLogFiles(dir).some((name) => fs.statSync(path.join(dir, name)).size > 0);
  } catch {
    return false;
  }
}

/** The stored pin's raw text, read-only; undefined when there is none or the journal cannot be read. */
function storedPin(journal: string): string | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(journal, { readonly: true, fileMustExist: true });
    const table = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'daemon_meta'").get();
    if (table === undefined) return undefined;
    return db.prepare<[string], { value: string }>('SELECT value FROM daemon_meta WHERE key = ?').get(PINNED_CONFIG_KEY)?.value;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

/** What is wrong with a stored pin: damaged, or no longer valid with this version; undefined when the daemon can run it. */
function pinProblem(stored: string, configPath: string): string | undefined {
  const damage = pinDamage(stored);
  if (damage !== undefined) return `is damaged: ${damage}`;
  try {
    decodePin(stored, configPath);
    return undefined;
  } catch (error) {
    return `no longer validates with this version of assent (${error instanceof Error ? error.message : String(error)})`;
  }
}

/**
 * Refuses a daemon start on a journal.db of 0 bytes once the audit log has lines:
 * SQLite would take it for a new database, and the daemon would confirm
 * config.json as it is now in place of the configuration the operator confirmed.
 */
export function refuseLostJournal(paths: StatePaths): void {
  let size: number;
  try {
    size = fs.statSync(paths.journal).size;
  } catch {
    return;
  }
  if (size === 0 && hasAuditLines(paths.auditDir)) throw journalDamaged(paths.journal, 'it is empty (0 bytes) although the audit log shows a daemon ran here');
}

/** The problem of config.json in one sentence (cut short, not JSON, or the first of its errors) and whether it was cut short; undefined when valid or absent. */
function configFileProblem(configPath: string): { problem: string; cutShort: boolean } | undefined {
  let inspection: ReturnType<typeof inspectConfigFile>;
  try {
    inspection = inspectConfigFile(configPath);
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error), cutShort: false };
  }
  const errors = inspection.problems.filter((problem) => problem.severity === 'error');
  const first = errors[0];
  if (first === undefined) return undefined;
  const text = inspection.text ?? '';
  if (first.path === '' && first.message.startsWith('not valid JSON') && isCutShortJson(text)) {
    return { problem: `it ends in the middle of its JSON after ${Buffer.byteLength(text)} bytes, as a write cut short leaves it (${first.message})`, cutShort: true };
  }
  return { problem: `${errors.length} error${errors.length === 1 ? '' : 's'}; first: ${first.path === '' ? '(document)' : first.path}: ${first.message}`, cutShort: false };
}

/**
 * Every damaged state file of this state directory, for `assent doctor`: the
 * journal (and, when it is readable, the confirmed configuration in it),
 * config.json, and the audit log's last line. Reads only; never creates or
 * migrates anything.
 */
export function inspectStateFiles(paths: StatePaths): StateDamage[] {
  const found: StateDamage[] = [];
  const journal = journalFileDamage(paths);
  if (journal !== undefined) {
    found.push({
      kind: 'journal',
      file: paths.journal,
      problem: `SQLite cannot read it as a sound database: ${journal}`,
      effect: 'the daemon does not start, so every gated call is refused',
      fix: 'stop here and run `assent journal repair` in your terminal: it keeps the damaged file as a backup, carries over the confirmed configuration if it can still be read, and starts a new journal',
    });
  }
  const stored = journal === undefined ? storedPin(paths.journal) : undefined;
  const pinned = stored === undefined ? undefined : pinProblem(stored, paths.config);
  if (pinned !== undefined) {
    found.push({
      kind: 'confirmed-config',
      file: paths.journal,
      problem: `the confirmed configuration kept in it (meta key ${PINNED_CONFIG_KEY}) ${pinned}`,
      effect: 'the daemon runs fail-closed: no servers, every tool call and agent action denied',
      fix: `review ${paths.config} (\`assent config check\`), then confirm it with \`assent config reload\` in your terminal`,
    });
  }
  const config = configFileProblem(paths.config);
  if (config !== undefined) {
    // Only a pin the daemon can run keeps it running; with none (or a damaged one) the start needs this file, or runs fail-closed.
    const confirmed = journal === undefined && stored !== undefined && pinned === undefined;
    found.push({
      kind: 'config',
      file: paths.config,
      problem: config.problem,
      effect: confirmed
        ? 'the daemon keeps running the configuration you last confirmed; this file is not applied, and `assent config reload` refuses it'
        : pinned !== undefined
          ? 'the daemon runs fail-closed, and `assent config reload` refuses this file until it is valid'
          : 'a daemon with no confirmed configuration does not start on it, so every gated call is refused',
      fix: `${config.cutShort ? cutShortAdvice(paths.config) : `fix what \`assent config check --file ${paths.config}\` reports`}${confirmed ? '; `assent config reload` then applies it' : ''}`,
    });
  }
  const torn = settledTornTail(paths.auditDir);
  if (torn !== undefined) found.push(tornTailDamage(torn));
  return found;
}

/**
 * A torn tail that is still there, byte for byte, a moment later: doctor may
 * run while a daemon writes, and a reader can catch a batch half written.
 */
function settledTornTail(dir: string, waitMs = 100, tries = 10): TornAuditTail | undefined {
  let torn = findTornAuditTail(dir);
  for (let attempt = 0; torn !== undefined && attempt < tries; attempt += 1) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, waitMs);
    const again = findTornAuditTail(dir);
    if (again !== undefined && again.file === torn.file && again.offset === torn.offset && again.bytes === torn.bytes) return again;
    torn = again;
  }
  return torn;
}
