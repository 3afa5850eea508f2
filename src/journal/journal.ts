// The journal (R-J-1): journal.db in the private state directory is the single
// durable authority for approvals, events and rules. SQLite in WAL mode with
// synchronous=FULL, so a decision that returned is on disk before anyone acts on it.
import * as fs from 'node:fs';
import Database from 'better-sqlite3';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import {
  rowToWebDevice,
  type ApprovalRecord,
  type ApprovalResolution,
  type ApprovalState,
  type ApprovalVote,
  type CallInProgressRecord,
  type EventRecord,
  type TokenRecord,
  type WebDeviceRecord,
  type WebDeviceRow,
} from './journalRecords.js';
import * as approvalVotes from './approvalVotes.js';
import * as eventsCalls from './eventsCalls.js';
import { migrate } from './journalSchema.js';
import { bind } from './sql/prepared.js';
import { isSqliteConstraint, SqliteSteps } from './sql/sqliteSteps.js';
import * as tokenRules from './tokenRules.js';
import { rowToPasskey, type PasskeyRecord, type PasskeyRow } from './passkeyRecords.js';
import type { DecisionJudge, PasskeyStore, WebDeviceStore } from './store.js';

// What the journal stores, named here so its users import one module.
export type { ApprovalRecord, ApprovalResolution, ApprovalState, ApprovalVote, CallInProgressRecord, EventRecord, TokenRecord, WebDeviceRecord } from './journalRecords.js';
export { JOURNAL_SCHEMA_VERSION } from './journalSchema.js';
export type { PasskeyRecord } from './passkeyRecords.js';

export interface JournalOptions {
  clock?: Clock;
  /** How long a writer waits for another process's lock before failing, in ms. */
  busyTimeoutMs?: number;
  /**
   * Reads every page once (`PRAGMA quick_check`) before anything is trusted, so a
   * damaged page stops the open instead of surfacing later inside a decision.
   * The daemon's start sets it; it costs about 15–20 ms per 10 MB of journal here (140–190 ms for 91 MB).
   */
  check?: boolean;
}

/** SQLite's result codes for a file that is not, or no longer, a sound database. */
const DAMAGE_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_VTAB']);

/** Whether SQLite refused a file as damaged (not a database, a malformed page), as opposed to a lock or a permission. */
export function isSqliteDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (DAMAGE_CODES.has(code) || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * The error for a journal.db SQLite cannot read as a sound database: it names the
 * file, what SQLite found, and the one command that repairs it (keeping the
 * damaged file as a backup). Like a database server that will not start on a
 * damaged data file, nothing runs on it: every decision would rest on it.
 */
export function journalDamaged(path: string, detail: string, cause?: unknown): AssentError {
  return new AssentError(
    'state_damaged',
    `the journal ${path} is damaged (${detail}), so assent will not start on it; stop here and run \`assent journal repair\` in your terminal: ` +
      'it keeps the damaged file as a backup, carries over the confirmed configuration if it can still be read, and starts a new journal ' +
      '(pending approvals, rules, tokens, passkeys and remembered browsers stay only in the backup)',
    { cause, details: { path, file: path, reason: 'journal-damaged', detail, fix: 'assent journal repair' } },
  );
}

/** What `PRAGMA quick_check` says about an open database: undefined when sound, else its first complaint. */
export function quickCheck(db: Database.Database): string | undefined {
  const rows = db.pragma('quick_check(5)') as { quick_check?: unknown }[];
  const first = rows[0]?.quick_check;
  if (rows.length === 1 && first === 'ok') return undefined;
  return rows.map((row) => String(row.quick_check)).join('; ') || 'quick_check returned nothing';
}

const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

const isConstraintError = isSqliteConstraint;

/** Creates the database file 0600 before SQLite opens it; SQLite gives -wal and -shm the same mode. */
function createPrivateFile(target: string): void {
  try {
    fs.closeSync(fs.openSync(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** This host's journal.db: in SQLite mode the shared concerns' statements too (sqliteStore.ts); in either mode its own web devices and passkeys. */
export class Journal implements WebDeviceStore, PasskeyStore {
  /** The statements written once for both engines (approvals and votes, tokens and rules, events, calls in progress, export cursors, settings), run on this connection. */
  private readonly steps: SqliteSteps;
  private readonly tokenRules: tokenRules.TokenRuleContext = { q: tokenRules.TOKEN_RULE_QUERIES.sqlite, isUniqueViolation: isConstraintError };
  private readonly approvals: approvalVotes.ApprovalContext = { q: approvalVotes.APPROVAL_QUERIES.sqlite, isUniqueViolation: isConstraintError, defaultHostId: null };
  /** Events, calls in progress, export cursors and settings; one host writes this journal, so its rows name none. */
  private readonly eventsCalls: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.sqlite, hostId: undefined };

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    private readonly clock: Clock,
  ) {
    this.steps = new SqliteSteps(db);
  }

  /**
   * Opens (creating 0600 if needed) and migrates the journal. Throws
   * `state_insecure` when the file cannot be opened as a journal and
   * `version_mismatch` when a newer assent wrote it.
   */
  static open(path: string, options: JournalOptions = {}): Journal {
    let db: Database.Database;
    try {
      createPrivateFile(path);
      db = new Database(path);
      // Wait for another process's lock (even while switching to WAL) instead of failing at once.
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      // SQLite's own default page cache (2 MB): better-sqlite3 builds it with 16 MB per connection, which 10,000
      // filed approvals fill (SPEC §14: 10,000 pending within 120 MB).
      db.pragma('cache_size = -2000');
    } catch (cause) {
      if (isSqliteDamage(cause)) throw journalDamaged(path, (cause as Error).message, cause);
      throw new AssentError('state_insecure', `cannot open the journal ${path}: ${(cause as Error).message}; check the file is a journal.db owned by you, or move it aside`, {
        cause,
        details: { path },
      });
    }
    try {
      if (options.check === true) {
        const damage = quickCheck(db);
        if (damage !== undefined) throw journalDamaged(path, `SQLite's quick_check: ${damage}`);
      }
      migrate(db, path);
    } catch (error) {
      db.close();
      if (isSqliteDamage(error)) throw journalDamaged(path, (error as Error).message, error);
      throw error;
    }
    for (const suffix of ['-wal', '-shm']) {
      try {
        fs.chmodSync(`${path}${suffix}`, 0o600);
      } catch {
        // Not created yet; SQLite copies the database file's mode when it does.
      }
    }
    return new Journal(db, path, options.clock ?? systemClock);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Runs fn in one BEGIN IMMEDIATE transaction: the write lock is taken up front, so racing processes serialize. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** Stores a new approval. Throws `conflict` when the id is taken, so the caller can draw another. */
  insertApproval(record: ApprovalRecord): void {
    this.steps.run(approvalVotes.insertApproval(this.approvals, record));
  }

  getApproval(id: string): ApprovalRecord | undefined {
    return this.steps.run(approvalVotes.getApproval(this.approvals, id));
  }

  /** Oldest first; uses the (state, requested_at) index so the pending list stays fast with many rows. */
  listApprovals(filter: { state?: ApprovalState; limit?: number } = {}): ApprovalRecord[] {
    return this.steps.run(approvalVotes.listApprovals(this.approvals, filter));
  }

  /**
   * Atomic compare-and-set from `pending`: the first resolver wins and later
   * ones get false, whichever process or channel they come from (R-D-5).
   */
  resolveApproval(id: string, resolution: ApprovalResolution): boolean {
    return this.steps.run(approvalVotes.resolveApproval(this.approvals, id, resolution));
  }

  /** The deciding transaction (approvalVotes.ts) in one BEGIN IMMEDIATE transaction: another process deciding the same approval waits for the write lock. */
  decideApproval<T>(id: string, judge: DecisionJudge<T>): T {
    return this.steps.runLocked(() => approvalVotes.decideApproval(this.approvals, id, judge));
  }

  /** Records one principal's approval; false when that principal's approval is recorded already (a repeat changes nothing). */
  recordApprovalVote(vote: ApprovalVote): boolean {
    return this.steps.run(approvalVotes.recordApprovalVote(this.approvals, vote));
  }

  /** The approvals recorded for one approval, oldest first. */
  listApprovalVotes(approvalId: string): ApprovalVote[] {
    return this.steps.run(approvalVotes.listApprovalVotes(this.approvals, approvalId));
  }

  /** The approvals recorded for every pending approval, oldest first (a restart takes them up with their approvals). */
  listPendingApprovalVotes(): ApprovalVote[] {
    return this.steps.run(approvalVotes.listPendingApprovalVotes(this.approvals));
  }

  /** Appends to the event log and returns its sequence number, which only ever grows. */
  appendEvent(event: { kind: string; ts: number; sessionId?: string; data: Record<string, unknown> }): number {
    return this.steps.run(eventsCalls.appendEvent(this.eventsCalls, event));
  }

  /** Events with seq greater than `cursor`, oldest first, at most `limit`. */
  eventsSince(cursor: number, limit: number): EventRecord[] {
    return this.steps.run(eventsCalls.eventsSince(this.eventsCalls, cursor, limit));
  }

  /** Stores a rule. Throws `conflict` when the id is taken. */
  insertRule(rule: Rule): void {
    this.steps.run(tokenRules.insertRule(this.tokenRules, rule));
  }

  getRule(id: string): Rule | undefined {
    return this.steps.run(tokenRules.getRule(this.tokenRules, id));
  }

  /** Active rules (not revoked, not expired at `now`, by default the clock's) unless includeInactive. Oldest first. */
  listRules(options: { includeInactive?: boolean; now?: number } = {}): Rule[] {
    return this.steps.run(tokenRules.listRules(this.tokenRules, options.includeInactive === true, options.now ?? this.clock.now()));
  }

  /** Marks a rule revoked at `at`; false when it does not exist or was already revoked. */
  revokeRule(id: string, at: number): boolean {
    return this.steps.run(tokenRules.revokeRule(this.tokenRules, id, at));
  }

  /** Records an admitted call before the caller may run it; it stays until `endCallInProgress`. */
  recordCallInProgress(record: CallInProgressRecord): void {
    this.steps.run(eventsCalls.recordCallInProgress(this.eventsCalls, record));
  }

  /** The call's end was recorded; false when it was not (or no longer) in progress. */
  endCallInProgress(callId: string): boolean {
    return this.steps.run(eventsCalls.endCallInProgress(this.eventsCalls, callId));
  }

  /** Admitted calls whose end was never recorded, oldest first. */
  listCallsInProgress(): CallInProgressRecord[] {
    return this.steps.run(eventsCalls.listCallsInProgress(this.eventsCalls));
  }

  /** A daemon setting kept across restarts (e.g. the confirmed config), or undefined. */
  readMeta(key: string): string | undefined {
    return this.steps.run(eventsCalls.readMeta(this.eventsCalls, key));
  }

  writeMeta(key: string, value: string): void {
    this.steps.run(eventsCalls.writeMeta(this.eventsCalls, key, value));
  }

  /** The seq of the last audit line export sink `sink` took from host `hostId`'s files (0: none yet; R-AUD-5). */
  exportCursor(sink: string, hostId: string): number {
    return this.steps.run(eventsCalls.exportCursor(this.eventsCalls, sink, hostId));
  }

  /** Moves a sink's cursor forward (never back: a late acknowledgement of an earlier batch keeps the later seq). */
  advanceExportCursor(sink: string, hostId: string, seq: number, at: number): void {
    this.steps.run(eventsCalls.advanceExportCursor(this.eventsCalls, sink, hostId, seq, at));
  }

  /** This journal's random instance id, drawn once at creation: the audience bearer tokens are bound to (R-WEB-4). */
  instanceId(): string {
    const id = this.readMeta('instance_id');
    if (id === undefined) throw new AssentError('state_insecure', `the journal ${this.path} has no instance id; move it aside so assent creates a new one`);
    return id;
  }

  /** Stores a bearer token's metadata and hash (never the token). Throws `conflict` when the id is taken. */
  insertToken(token: TokenRecord): void {
    this.steps.run(tokenRules.insertToken(this.tokenRules, token));
  }

  /** The token whose SHA-256 is `tokenSha256`, whatever its state; the caller checks audience, expiry and revocation. */
  findTokenByHash(tokenSha256: string): TokenRecord | undefined {
    return this.steps.run(tokenRules.findTokenByHash(this.tokenRules, tokenSha256));
  }

  getToken(id: string): TokenRecord | undefined {
    return this.steps.run(tokenRules.getToken(this.tokenRules, id));
  }

  /** Every token, oldest first. */
  listTokens(): TokenRecord[] {
    return this.steps.run(tokenRules.listTokens(this.tokenRules));
  }

  /** Marks a token revoked at `at`; false when it does not exist or was already revoked. */
  revokeToken(id: string, at: number): boolean {
    return this.steps.run(tokenRules.revokeToken(this.tokenRules, id, at));
  }

  /** Stores a remembered web device (R-REM-3). Throws `conflict` when the id or cookie hash is taken. */
  insertWebDevice(device: WebDeviceRecord): void {
    try {
      this.db
        .prepare('INSERT INTO web_devices (id, cookie_sha256, name, user_agent, paired_at, last_seen_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(device.id, device.cookieSha256, device.name, device.userAgent, device.pairedAt, device.lastSeenAt, device.expiresAt, device.revokedAt ?? null);
    } catch (error) {
      if (isConstraintError(error)) {
        throw new AssentError('conflict', `web device id ${device.id} already exists in the journal; draw a new id and retry`, { cause: error, details: { id: device.id } });
      }
      throw error;
    }
  }

  /** Remembered devices neither revoked nor expired at `now`, oldest first. */
  listWebDevices(now: number): WebDeviceRecord[] {
    return this.db
      .prepare<[number], WebDeviceRow>('SELECT * FROM web_devices WHERE revoked_at IS NULL AND expires_at > ? ORDER BY paired_at, id')
      .all(now)
      .map(rowToWebDevice);
  }

  touchWebDevice(id: string, at: number): void {
    this.db.prepare('UPDATE web_devices SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?').run(at, id, at);
  }

  /** Marks a remembered device revoked at `at`; false when it does not exist or was already revoked. */
  revokeWebDevice(id: string, at: number): boolean {
    return this.db.prepare('UPDATE web_devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes === 1;
  }

  /** Stores an enrolled passkey (R-REM-6). Throws `conflict` when its id or credential id is taken. */
  insertPasskey(passkey: PasskeyRecord): void {
    try {
      this.db
        .prepare(
          'INSERT INTO passkeys (id, credential_id, public_key, counter, transports, enrolled_by, rp_id, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(passkey.id, passkey.credentialId, passkey.publicKey, passkey.counter, JSON.stringify(passkey.transports), passkey.enrolledBy, passkey.rpId, passkey.createdAt, passkey.lastUsedAt ?? null);
    } catch (error) {
      if (isConstraintError(error)) {
        throw new AssentError('conflict', `passkey ${passkey.id} (credential ${passkey.credentialId}) is already enrolled; list them with \`assent web passkeys\``, { cause: error, details: { id: passkey.id } });
      }
      throw error;
    }
  }

  /** Every enrolled passkey, oldest first. */
  listPasskeys(): PasskeyRecord[] {
    return this.db.prepare<[], PasskeyRow>('SELECT * FROM passkeys ORDER BY created_at, id').all().map(rowToPasskey);
  }

  findPasskeyByCredentialId(credentialId: string): PasskeyRecord | undefined {
    const row = this.db.prepare<[string], PasskeyRow>('SELECT * FROM passkeys WHERE credential_id = ?').get(credentialId);
    return row === undefined ? undefined : rowToPasskey(row);
  }

  /** Records a verified assertion's counter; false when the passkey is gone or the counter did not move on. */
  advancePasskeyCounter(credentialId: string, counter: number, at: number): boolean {
    const info = this.db
      .prepare('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ? AND (counter < ? OR (counter = 0 AND ? = 0))')
      .run(counter, at, credentialId, counter, counter);
    return info.changes === 1;
  }

  /** Removes a passkey at once; false when there is none with that id. */
  removePasskey(id: string): boolean {
    return this.db.prepare('DELETE FROM passkeys WHERE id = ?').run(id).changes === 1;
  }
}

/**
 * Reads one daemon setting without the daemon: the journal is opened read-only,
 * never created and never migrated, so a reader (a gateway with no daemon) cannot
 * change it. Undefined when the key is absent; throws `unavailable` when the
 * journal does not exist or cannot be read as one.
 */
export function readJournalMeta(path: string, key: string): string | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 1000');
    const table = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'daemon_meta'").get();
    if (table === undefined) return undefined;
    const query = eventsCalls.EVENT_CALL_QUERIES.sqlite.readMeta;
    return db.prepare<unknown[], { value: string }>(query.sql).get(...bind(query, { key }))?.value;
  } catch (cause) {
    const missing = !fs.existsSync(path);
    throw new AssentError(
      'unavailable',
      missing
        ? `there is no journal at ${path}: no assent daemon has run for this state directory yet`
        : `the journal ${path} cannot be read (${(cause as Error).message})`,
      { cause, details: { path, reason: missing ? 'no-journal' : 'unreadable' } },
    );
  } finally {
    db?.close();
  }
}
