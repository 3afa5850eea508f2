// The journal (R-J-1): journal.db in the private state directory is the single
// durable authority for approvals, events and rules. SQLite in WAL mode with
// synchronous=FULL, so a decision that returned is on disk before anyone acts on it.
import * as fs from 'node:fs';
import Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { AssentError } from '../core/errors.js';
import type { ArgMatcher, Rule } from '../core/toolPolicy.js';

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'expired';

export interface ApprovalRecord {
  id: string;
  sessionId: string;
  kind: 'tool' | 'exec';
  server?: string;
  tool?: string;
  args?: Record<string, unknown>;
  action?: unknown;
  argsSha256: string;
  requestedAt: number;
  expiresAt: number;
  caller: Record<string, unknown>;
  handoff: boolean;
  state: ApprovalState;
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt?: number;
}

export interface ApprovalResolution {
  state: 'approved' | 'denied' | 'expired';
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt: number;
}

export interface EventRecord {
  seq: number;
  kind: string;
  ts: number;
  sessionId?: string;
  data: Record<string, unknown>;
}

/** A call the daemon admitted whose end it has not been told yet (kept durably, so a crash cannot hide it). */
export interface CallInProgressRecord {
  callId: string;
  sessionId: string;
  server: string;
  tool: string;
  argsSha256: string;
  caller: Record<string, unknown>;
  channel?: string;
  approvalId?: string;
  ruleId?: string;
  waitedForConsentMs: number;
  /** Wall-clock ms when the daemon admitted it. */
  authorizedAt: number;
}

interface CallInProgressRow {
  call_id: string;
  session_id: string;
  server: string;
  tool: string;
  args_sha256: string;
  caller: string;
  channel: string | null;
  approval_id: string | null;
  rule_id: string | null;
  waited_ms: number;
  authorized_at: number;
}

function rowToCallInProgress(row: CallInProgressRow): CallInProgressRecord {
  const record: CallInProgressRecord = {
    callId: row.call_id,
    sessionId: row.session_id,
    server: row.server,
    tool: row.tool,
    argsSha256: row.args_sha256,
    caller: JSON.parse(row.caller) as Record<string, unknown>,
    waitedForConsentMs: row.waited_ms,
    authorizedAt: row.authorized_at,
  };
  if (row.channel !== null) record.channel = row.channel;
  if (row.approval_id !== null) record.approvalId = row.approval_id;
  if (row.rule_id !== null) record.ruleId = row.rule_id;
  return record;
}

export interface JournalOptions {
  clock?: Clock;
  /** How long a writer waits for another process's lock before failing, in ms. */
  busyTimeoutMs?: number;
}

/** Each entry upgrades the schema by one version; never edit a shipped entry, append a new one. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     session_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     server TEXT,
     tool TEXT,
     args TEXT,
     action TEXT,
     args_sha256 TEXT NOT NULL,
     requested_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     caller TEXT NOT NULL,
     handoff INTEGER NOT NULL,
     state TEXT NOT NULL,
     channel TEXT,
     reason TEXT,
     scope TEXT,
     decided_at INTEGER
   );
   CREATE INDEX approvals_by_state ON approvals (state, requested_at, id);
   CREATE TABLE events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     ts INTEGER NOT NULL,
     session_id TEXT,
     data TEXT NOT NULL
   );
   CREATE TABLE rules (
     id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     tool TEXT NOT NULL,
     args TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER,
     revoked_at INTEGER
   );
   CREATE INDEX rules_by_tool ON rules (tool);`,
  `CREATE TABLE daemon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO daemon_meta (key, value) VALUES ('instance_id', lower(hex(randomblob(16))));
   CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     token_sha256 TEXT NOT NULL UNIQUE,
     audience TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     revoked_at INTEGER
   );`,
  // Calls the daemon admitted and has not seen finish (R-J-5 for calls): a restart audits each as uncertain.
  `CREATE TABLE calls_in_progress (
     call_id TEXT PRIMARY KEY,
     session_id TEXT NOT NULL,
     server TEXT NOT NULL,
     tool TEXT NOT NULL,
     args_sha256 TEXT NOT NULL,
     caller TEXT NOT NULL,
     channel TEXT,
     approval_id TEXT,
     rule_id TEXT,
     waited_ms INTEGER NOT NULL,
     authorized_at INTEGER NOT NULL
   );`,
];

export const JOURNAL_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Approval rows are read in raw (array) mode with this fixed column order:
 * building a named-key object per row costs several times more, and the
 * pending list must stay fast with 10,000 rows (SPEC §14).
 */
const APPROVAL_COLUMNS =
  'id, session_id, kind, server, tool, args, action, args_sha256, requested_at, expires_at, caller, handoff, state, channel, reason, scope, decided_at';

type ApprovalRow = [
  id: string,
  sessionId: string,
  kind: string,
  server: string | null,
  tool: string | null,
  args: string | null,
  action: string | null,
  argsSha256: string,
  requestedAt: number,
  expiresAt: number,
  caller: string,
  handoff: number,
  state: string,
  channel: string | null,
  reason: string | null,
  scope: string | null,
  decidedAt: number | null,
];

interface EventRow {
  seq: number;
  kind: string;
  ts: number;
  session_id: string | null;
  data: string;
}

interface RuleRow {
  id: string;
  version: number;
  tool: string;
  args: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

function rowToApproval(row: ApprovalRow): ApprovalRecord {
  const [id, sessionId, kind, server, tool, args, action, argsSha256, requestedAt, expiresAt, caller, handoff, state, channel, reason, scope, decidedAt] =
    row;
  const record: ApprovalRecord = {
    id,
    sessionId,
    kind: kind as ApprovalRecord['kind'],
    argsSha256,
    requestedAt,
    expiresAt,
    caller: JSON.parse(caller) as Record<string, unknown>,
    handoff: handoff === 1,
    state: state as ApprovalState,
  };
  if (server !== null) record.server = server;
  if (tool !== null) record.tool = tool;
  if (args !== null) record.args = JSON.parse(args) as Record<string, unknown>;
  if (action !== null) record.action = JSON.parse(action) as unknown;
  if (channel !== null) record.channel = channel;
  if (reason !== null) record.reason = reason;
  if (scope !== null) record.scope = scope as 'call' | 'session';
  if (decidedAt !== null) record.decidedAt = decidedAt;
  return record;
}

function rowToEvent(row: EventRow): EventRecord {
  const event: EventRecord = { seq: row.seq, kind: row.kind, ts: row.ts, data: JSON.parse(row.data) as Record<string, unknown> };
  if (row.session_id !== null) event.sessionId = row.session_id;
  return event;
}

function rowToRule(row: RuleRow): Rule {
  const rule: Rule = {
    id: row.id,
    version: row.version,
    tool: row.tool,
    args: JSON.parse(row.args) as ArgMatcher[],
    createdAt: row.created_at,
  };
  if (row.expires_at !== null) rule.expiresAt = row.expires_at;
  if (row.revoked_at !== null) rule.revokedAt = row.revoked_at;
  return rule;
}

function isConstraintError(error: unknown): boolean {
  return typeof (error as { code?: unknown }).code === 'string' && (error as { code: string }).code.startsWith('SQLITE_CONSTRAINT');
}

/** Creates the database file 0600 before SQLite opens it; SQLite gives -wal and -shm the same mode. */
function createPrivateFile(target: string): void {
  try {
    fs.closeSync(fs.openSync(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

export class Journal {
  private readonly statements;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    private readonly clock: Clock,
  ) {
    this.statements = {
      insertApproval: db.prepare(
        `INSERT INTO approvals (id, session_id, kind, server, tool, args, action, args_sha256, requested_at, expires_at, caller, handoff, state, channel, reason, scope, decided_at)
         VALUES (@id, @session_id, @kind, @server, @tool, @args, @action, @args_sha256, @requested_at, @expires_at, @caller, @handoff, @state, @channel, @reason, @scope, @decided_at)`,
      ),
      getApproval: db.prepare<[string], ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = ?`).raw(),
      listByState: db
        .prepare<[string, number], ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE state = ? ORDER BY requested_at, id LIMIT ?`)
        .raw(),
      listAll: db.prepare<[number], ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY requested_at, id LIMIT ?`).raw(),
      resolveApproval: db.prepare(
        `UPDATE approvals SET state = @state, channel = @channel, reason = @reason, scope = @scope, decided_at = @decided_at
         WHERE id = @id AND state = 'pending'`,
      ),
      appendEvent: db.prepare('INSERT INTO events (kind, ts, session_id, data) VALUES (?, ?, ?, ?)'),
      eventsSince: db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
      insertRule: db.prepare(
        'INSERT INTO rules (id, version, tool, args, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      getRule: db.prepare<[string], RuleRow>('SELECT * FROM rules WHERE id = ?'),
      listAllRules: db.prepare<[], RuleRow>('SELECT * FROM rules ORDER BY created_at, id'),
      listActiveRules: db.prepare<[number, number], RuleRow>(
        `SELECT * FROM rules WHERE (revoked_at IS NULL OR revoked_at > ?) AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, id`,
      ),
      revokeRule: db.prepare('UPDATE rules SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      insertCallInProgress: db.prepare(
        `INSERT INTO calls_in_progress (call_id, session_id, server, tool, args_sha256, caller, channel, approval_id, rule_id, waited_ms, authorized_at)
         VALUES (@call_id, @session_id, @server, @tool, @args_sha256, @caller, @channel, @approval_id, @rule_id, @waited_ms, @authorized_at)`,
      ),
      deleteCallInProgress: db.prepare('DELETE FROM calls_in_progress WHERE call_id = ?'),
      listCallsInProgress: db.prepare<[], CallInProgressRow>('SELECT * FROM calls_in_progress ORDER BY authorized_at, call_id'),
    };
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
    } catch (cause) {
      throw new AssentError('state_insecure', `cannot open the journal ${path}: ${(cause as Error).message}; check the file is a journal.db owned by you, or move it aside`, {
        cause,
        details: { path },
      });
    }
    try {
      migrate(db, path);
    } catch (error) {
      db.close();
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
    try {
      this.statements.insertApproval.run({
        id: record.id,
        session_id: record.sessionId,
        kind: record.kind,
        server: record.server ?? null,
        tool: record.tool ?? null,
        args: record.args === undefined ? null : JSON.stringify(record.args),
        action: record.action === undefined ? null : JSON.stringify(record.action),
        args_sha256: record.argsSha256,
        requested_at: record.requestedAt,
        expires_at: record.expiresAt,
        caller: JSON.stringify(record.caller),
        handoff: record.handoff ? 1 : 0,
        state: record.state,
        channel: record.channel ?? null,
        reason: record.reason ?? null,
        scope: record.scope ?? null,
        decided_at: record.decidedAt ?? null,
      });
    } catch (error) {
      if (isConstraintError(error)) {
        throw new AssentError('conflict', `approval id ${record.id} already exists in the journal; draw a new id and retry`, {
          cause: error,
          details: { id: record.id },
        });
      }
      throw error;
    }
  }

  getApproval(id: string): ApprovalRecord | undefined {
    const row = this.statements.getApproval.get(id);
    return row === undefined ? undefined : rowToApproval(row);
  }

  /** Oldest first; uses the (state, requested_at) index so the pending list stays fast with many rows. */
  listApprovals(filter: { state?: ApprovalState; limit?: number } = {}): ApprovalRecord[] {
    const limit = filter.limit === undefined ? -1 : Math.max(0, Math.floor(filter.limit));
    const rows = filter.state === undefined ? this.statements.listAll.all(limit) : this.statements.listByState.all(filter.state, limit);
    return rows.map(rowToApproval);
  }

  /**
   * Atomic compare-and-set from `pending`: the first resolver wins and later
   * ones get false, whichever process or channel they come from (R-D-5).
   */
  resolveApproval(id: string, resolution: ApprovalResolution): boolean {
    const info = this.statements.resolveApproval.run({
      id,
      state: resolution.state,
      channel: resolution.channel ?? null,
      reason: resolution.reason ?? null,
      scope: resolution.scope ?? null,
      decided_at: resolution.decidedAt,
    });
    return info.changes === 1;
  }

  /** Appends to the event log and returns its sequence number, which only ever grows. */
  appendEvent(event: { kind: string; ts: number; sessionId?: string; data: Record<string, unknown> }): number {
    const info = this.statements.appendEvent.run(event.kind, event.ts, event.sessionId ?? null, JSON.stringify(event.data));
    return Number(info.lastInsertRowid);
  }

  /** Events with seq greater than `cursor`, oldest first, at most `limit`. */
  eventsSince(cursor: number, limit: number): EventRecord[] {
    return this.statements.eventsSince.all(cursor, Math.max(0, Math.floor(limit))).map(rowToEvent);
  }

  /** Stores a rule. Throws `conflict` when the id is taken. */
  insertRule(rule: Rule): void {
    try {
      this.statements.insertRule.run(
        rule.id,
        rule.version,
        rule.tool,
        JSON.stringify(rule.args),
        rule.createdAt,
        rule.expiresAt ?? null,
        rule.revokedAt ?? null,
      );
    } catch (error) {
      if (isConstraintError(error)) {
        throw new AssentError('conflict', `rule id ${rule.id} already exists in the journal; draw a new id and retry`, {
          cause: error,
          details: { id: rule.id },
        });
      }
      throw error;
    }
  }

  getRule(id: string): Rule | undefined {
    const row = this.statements.getRule.get(id);
    return row === undefined ? undefined : rowToRule(row);
  }

  /** Active rules (not revoked, not expired at the clock's now) unless includeInactive. Oldest first. */
  listRules(options: { includeInactive?: boolean } = {}): Rule[] {
    if (options.includeInactive) return this.statements.listAllRules.all().map(rowToRule);
    const now = this.clock.now();
    return this.statements.listActiveRules.all(now, now).map(rowToRule);
  }

  /** Marks a rule revoked at `at`; false when it does not exist or was already revoked. */
  revokeRule(id: string, at: number): boolean {
    return this.statements.revokeRule.run(at, id).changes === 1;
  }

  /** Records an admitted call before the caller may run it; it stays until `endCallInProgress`. */
  recordCallInProgress(record: CallInProgressRecord): void {
    this.statements.insertCallInProgress.run({
      call_id: record.callId,
      session_id: record.sessionId,
      server: record.server,
      tool: record.tool,
      args_sha256: record.argsSha256,
      caller: JSON.stringify(record.caller),
      channel: record.channel ?? null,
      approval_id: record.approvalId ?? null,
      rule_id: record.ruleId ?? null,
      waited_ms: Math.round(record.waitedForConsentMs),
      authorized_at: record.authorizedAt,
    });
  }

  /** The call's end was recorded; false when it was not (or no longer) in progress. */
  endCallInProgress(callId: string): boolean {
    return this.statements.deleteCallInProgress.run(callId).changes === 1;
  }

  /** Admitted calls whose end was never recorded, oldest first. */
  listCallsInProgress(): CallInProgressRecord[] {
    return this.statements.listCallsInProgress.all().map(rowToCallInProgress);
  }

  /** A daemon setting kept across restarts (e.g. the confirmed config), or undefined. */
  readMeta(key: string): string | undefined {
    return this.db.prepare<[string], { value: string }>('SELECT value FROM daemon_meta WHERE key = ?').get(key)?.value;
  }

  writeMeta(key: string, value: string): void {
    this.db.prepare('INSERT INTO daemon_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  /** This journal's random instance id, drawn once at creation: the audience bearer tokens are bound to (R-WEB-4). */
  instanceId(): string {
    const row = this.db.prepare<[], { value: string }>("SELECT value FROM daemon_meta WHERE key = 'instance_id'").get();
    if (row === undefined) throw new AssentError('state_insecure', `the journal ${this.path} has no instance id; move it aside so assent creates a new one`);
    return row.value;
  }

  /** Stores a bearer token's metadata and hash (never the token). Throws `conflict` when the id is taken. */
  insertToken(token: TokenRecord): void {
    try {
      this.db
        .prepare('INSERT INTO tokens (id, name, token_sha256, audience, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(token.id, token.name, token.tokenSha256, token.audience, token.createdAt, token.expiresAt, token.revokedAt ?? null);
    } catch (error) {
      if (isConstraintError(error)) {
        throw new AssentError('conflict', `token id ${token.id} already exists in the journal; draw a new id and retry`, { cause: error, details: { id: token.id } });
      }
      throw error;
    }
  }

  /** The token whose SHA-256 is `tokenSha256`, whatever its state; the caller checks audience, expiry and revocation. */
  findTokenByHash(tokenSha256: string): TokenRecord | undefined {
    const row = this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE token_sha256 = ?').get(tokenSha256);
    return row === undefined ? undefined : rowToToken(row);
  }

  getToken(id: string): TokenRecord | undefined {
    const row = this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?').get(id);
    return row === undefined ? undefined : rowToToken(row);
  }

  /** Every token, oldest first. */
  listTokens(): TokenRecord[] {
    return this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id').all().map(rowToToken);
  }

  /** Marks a token revoked at `at`; false when it does not exist or was already revoked. */
  revokeToken(id: string, at: number): boolean {
    return this.db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes === 1;
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
    return db.prepare<[string], { value: string }>('SELECT value FROM daemon_meta WHERE key = ?').get(key)?.value;
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

/** A bearer token as stored: metadata and the SHA-256 of the secret (R-WEB-4). */
export interface TokenRecord {
  id: string;
  name: string;
  tokenSha256: string;
  audience: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

interface TokenRow {
  id: string;
  name: string;
  token_sha256: string;
  audience: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

function rowToToken(row: TokenRow): TokenRecord {
  const token: TokenRecord = {
    id: row.id,
    name: row.name,
    tokenSha256: row.token_sha256,
    audience: row.audience,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
  if (row.revoked_at !== null) token.revokedAt = row.revoked_at;
  return token;
}

function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const row = db.prepare<[], { version: number }>('SELECT version FROM schema_version').get();
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new AssentError(
        'version_mismatch',
        `the journal ${path} has schema version ${current}, newer than this assent understands (${MIGRATIONS.length}); upgrade assent or point ASSENT_HOME elsewhere`,
        { details: { path, version: current, supported: MIGRATIONS.length } },
      );
    }
    for (let version = current; version < MIGRATIONS.length; version += 1) db.exec(MIGRATIONS[version] ?? '');
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
    else db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
  }).immediate();
}
