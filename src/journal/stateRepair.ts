// The two repairs of damaged state (issue 35), each planned first — what it will
// do, where the backup goes — and applied only after the operator confirmed the
// plan (heads/cli/commands/repair.ts asks). Nothing is deleted: the damaged
// bytes stay in a backup beside the file, and the cut is recorded in the audit
// chain, which verifies afterwards.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { AssentError } from '../core/base/errors.js';
import { localPrincipal } from '../core/config/hostConfig.js';
import { DEFAULT_CONFIG, type Config } from '../core/config/config.js';
import { writeFileNew, type StatePaths } from '../state/statePaths.js';
import { dayOf, loadChainState } from './auditChain.js';
import { verifyAudit, type AuditVerification } from './auditReaders.js';
import { copyAuditFields, type AuditRecord } from './auditRecords.js';
import { decodePin, PINNED_CONFIG_KEY, readConfirmedConfig, type StoredPin } from './confirmedConfig.js';
import { hostNameOf, osUserName } from './hostIdentity.js';
import { Journal } from './journal.js';
import { nativeDigestOf } from './nativeHash.js';
import { findTornAuditTail, journalFileDamage, type TornAuditTail } from './stateDamage.js';

/** `<file>.assent-backup-20261207T110814Z`, the name every backup assent keeps has; `-1`, `-2`… when taken. */
function freeBackupName(file: string, now: Date): string {
  const base = `${file}.assent-backup-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
  for (let n = 0; n < 100; n += 1) {
    const candidate = n === 0 ? base : `${base}-${n}`;
    if (!fs.existsSync(candidate) && !fs.existsSync(`${candidate}-wal`)) return candidate;
  }
  throw new AssentError('conflict', `cannot find a free backup name beside ${file} (${base}…); move old backups away, then run this again`, { details: { path: file } });
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The principal the repair's audit line names: this OS user at this host, as the daemon would name a CLI decision. */
function repairPrincipal(paths: StatePaths): string {
  const confirmed = readConfirmedConfig(paths.journal, paths.config);
  const config: Pick<Config, 'host'> = confirmed.ok ? confirmed.config : DEFAULT_CONFIG;
  return localPrincipal(osUserName(), hostNameOf(config));
}

/**
 * Appends one record to the chain from where the files end (the CLI's own
 * writer, used only while no daemon runs): into today's file, or the newest
 * one when the clock is behind it, as the daemon's writer would.
 */
function appendRepairRecord(dir: string, record: AuditRecord, now: Date): { seq: number; file: string } {
  const { state, lastDay } = loadChainState(dir);
  const today = dayOf(now.getTime());
  const day = today > lastDay ? today : lastDay;
  const file = path.join(dir, `${day}.jsonl`);
  const seq = state.seq + 1;
  const line = JSON.stringify(copyAuditFields(record, { seq, prev: state.prev }));
  const fd = fs.openSync(file, 'a', 0o600);
  try {
    fs.writeSync(fd, `${line}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncDir(dir);
  return { seq, file };
}

export interface AuditRepairPlan {
  torn: TornAuditTail;
  /** Where the file is copied, whole, before anything is cut. */
  backup: string;
  /** SHA-256 (hex) of the bytes to cut. */
  cutSha256: string;
}

export interface AuditRepairResult extends AuditRepairPlan {
  /** The seq of the line recording the cut. */
  recordSeq: number;
  verification: AuditVerification;
}

/** What `assent audit repair` would do; undefined when the newest audit file ends in a whole record. */
export function planAuditRepair(dir: string, now: Date): AuditRepairPlan | undefined {
  const torn = findTornAuditTail(dir);
  if (torn === undefined) return undefined;
  const bytes = fs.readFileSync(torn.file).subarray(torn.offset);
  return { torn, backup: freeBackupName(torn.file, now), cutSha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * Repairs a torn audit tail: copies the whole file to the backup (new file,
 * 0600, synced), cuts the torn line off the file, and appends a record of the
 * cut (its line, size and SHA-256) to the chain. Refuses when the file changed
 * since the plan was shown.
 */
export function applyAuditRepair(paths: StatePaths, plan: AuditRepairPlan, now: Date): AuditRepairResult {
  const again = planAuditRepair(paths.auditDir, now);
  if (again === undefined || again.torn.file !== plan.torn.file || again.torn.offset !== plan.torn.offset || again.cutSha256 !== plan.cutSha256) {
    throw new AssentError('conflict', `${plan.torn.file} changed after the repair was shown; nothing was changed; run \`assent audit repair\` again to see it as it is now`, {
      details: { file: plan.torn.file },
    });
  }
  const whole = fs.readFileSync(plan.torn.file);
  writeFileNew(plan.backup, whole);
  const fd = fs.openSync(plan.torn.file, 'r+');
  try {
    fs.ftruncateSync(fd, plan.torn.offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncDir(paths.auditDir);
  const cut = { file: path.basename(plan.torn.file), line: plan.torn.line, bytes: plan.torn.bytes, sha256: plan.cutSha256, backup: path.basename(plan.backup) };
  const record: AuditRecord = {
    ts: now.toISOString(),
    principal: repairPrincipal(paths),
    server: 'assent',
    tool: 'audit repair',
    argsSha256: nativeDigestOf(cut),
    outcome: 'ok',
    channel: 'cli',
    caller: { head: 'cli', repair: 'torn-audit-line', ...cut },
  };
  const { seq } = appendRepairRecord(paths.auditDir, record, now);
  return { ...plan, recordSeq: seq, verification: verifyAudit(paths.auditDir) };
}

export interface JournalRepairPlan {
  journal: string;
  /** What SQLite found. */
  damage: string;
  /** Where journal.db (and its -wal and -shm, as `<backup>-wal`, `<backup>-shm`) is moved, whole. */
  backup: string;
  /** The confirmed configuration read back from the damaged file, carried into the new journal; undefined when it cannot be read intact. */
  carried?: { revision: string; stored: string };
  /** Why the confirmed configuration is not carried over. */
  notCarried?: string;
  /** Rows of the damaged file that stay only in the backup, per table, where they can still be counted. */
  leftBehind: Record<string, number | 'unreadable'>;
}

export interface JournalRepairResult extends JournalRepairPlan {
  /** The seq of the audit line recording the repair; undefined when the audit tail is torn too (repair it first). */
  recordSeq?: number;
}

const LEFT_BEHIND_TABLES: readonly [string, string][] = [
  ['pending approvals', "SELECT count(*) AS n FROM approvals WHERE state = 'pending'"],
  ['rules', 'SELECT count(*) AS n FROM rules WHERE revoked_at IS NULL'],
  ['tokens', 'SELECT count(*) AS n FROM tokens WHERE revoked_at IS NULL'],
  ['passkeys', 'SELECT count(*) AS n FROM passkeys'],
  ['remembered browsers', 'SELECT count(*) AS n FROM web_devices WHERE revoked_at IS NULL'],
  ['calls in progress', 'SELECT count(*) AS n FROM calls_in_progress'],
];

/**
 * Reads what can still be read of a damaged journal, read-only: the confirmed
 * configuration, carried over only when it decodes and its text still has the
 * digest its revision names (a damaged page could have changed a byte of a
 * rule), and how many rows of each kind stay behind.
 */
function readWhatRemains(file: string): Pick<JournalRepairPlan, 'carried' | 'notCarried' | 'leftBehind'> {
  const leftBehind: Record<string, number | 'unreadable'> = {};
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    for (const [what] of LEFT_BEHIND_TABLES) leftBehind[what] = 'unreadable';
    return { leftBehind, notCarried: 'the damaged file cannot be opened at all' };
  }
  try {
    for (const [what, sql] of LEFT_BEHIND_TABLES) {
      try {
        leftBehind[what] = (db.prepare<[], { n: number }>(sql).get()?.n ?? 0);
      } catch {
        leftBehind[what] = 'unreadable';
      }
    }
    let stored: string | undefined;
    try {
      stored = db.prepare<[string], { value: string }>('SELECT value FROM daemon_meta WHERE key = ?').get(PINNED_CONFIG_KEY)?.value;
    } catch (error) {
      return { leftBehind, notCarried: `it cannot be read from the damaged file (${(error as Error).message})` };
    }
    if (stored === undefined) return { leftBehind, notCarried: 'the damaged file holds none' };
    try {
      const decoded = decodePin(stored, 'config.json');
      const pin = JSON.parse(stored) as StoredPin;
      if (pin.text !== null && nativeDigestOf(pin.text) !== pin.revision) return { leftBehind, notCarried: `its text no longer has the digest of revision ${pin.revision}, so it may have been changed by the damage` };
      return { leftBehind, carried: { revision: decoded.revision, stored } };
    } catch (error) {
      return { leftBehind, notCarried: `it is not intact (${(error as Error).message})` };
    }
  } finally {
    db.close();
  }
}

/** What `assent journal repair` would do; undefined when SQLite finds journal.db sound (or there is none). */
export function planJournalRepair(paths: StatePaths, now: Date): JournalRepairPlan | undefined {
  const damage = journalFileDamage(paths);
  if (damage === undefined) return undefined;
  return { journal: paths.journal, damage, backup: freeBackupName(paths.journal, now), ...readWhatRemains(paths.journal) };
}

/**
 * Moves the damaged journal.db (with its -wal and -shm) aside to the backup,
 * starts a new journal, carries the confirmed configuration into it when the
 * plan could, and records the repair in the audit chain (unless its tail is
 * torn: `assent audit repair` comes first then).
 */
export function applyJournalRepair(paths: StatePaths, plan: JournalRepairPlan, now: Date): JournalRepairResult {
  if (journalFileDamage(paths) === undefined) {
    throw new AssentError('conflict', `${paths.journal} reads as sound now; nothing was changed (run \`assent doctor\` to check it again)`, { details: { file: paths.journal } });
  }
  for (const suffix of ['-wal', '-shm']) {
    if (fs.existsSync(`${paths.journal}${suffix}`)) fs.renameSync(`${paths.journal}${suffix}`, `${plan.backup}${suffix}`);
  }
  fs.renameSync(paths.journal, plan.backup);
  syncDir(path.dirname(paths.journal));
  const journal = Journal.open(paths.journal);
  try {
    if (plan.carried !== undefined) journal.writeMeta(PINNED_CONFIG_KEY, plan.carried.stored);
  } finally {
    journal.close();
  }
  const result: JournalRepairResult = { ...plan };
  if (findTornAuditTail(paths.auditDir) === undefined) {
    const facts = { backup: path.basename(plan.backup), confirmedConfigCarried: plan.carried !== undefined };
    const record: AuditRecord = {
      ts: now.toISOString(),
      principal: repairPrincipal(paths),
      server: 'assent',
      tool: 'journal repair',
      argsSha256: nativeDigestOf(facts),
      outcome: 'ok',
      channel: 'cli',
      caller: { head: 'cli', repair: 'damaged-journal', ...facts },
    };
    result.recordSeq = appendRepairRecord(paths.auditDir, record, now).seq;
  }
  return result;
}
