// The team store (R-TEAM-1, R-TEAM-2): one PostgreSQL database shared by the
// daemons of several hosts. The first resolver wins by a conditional UPDATE;
// proof consumption is one transaction holding the proof's row lock; each event
// is pushed to the other hosts by a trigger's NOTIFY, heard here on a dedicated
// LISTEN connection that reconnects with backoff. While that connection is down
// the store reports itself unavailable, so no new prompt call is filed (R-TEAM-7).
// Nothing it logs, reports or throws contains the database password.
import pg from 'pg';
import { AssentError } from '../../core/errors.js';
import { decideConsumption, PROOF_REFUSAL_HELP, type ConsumptionRequest, type EffectRecord, type ProofAudience, type ProofRecord } from '../../core/proof.js';
import type { Rule } from '../../core/toolPolicy.js';
import {
  rowToApprovalVote,
  rowToCallInProgress,
  rowToEvent,
  rowToRule,
  rowToToken,
  ruleForm,
  type ApprovalRecord,
  type ApprovalResolution,
  type ApprovalState,
  type ApprovalVote,
  type ApprovalVoteRow,
  type CallInProgressRecord,
  type CallInProgressRow,
  type EventRecord,
  type EventRow,
  type RuleRow,
  type TokenRecord,
  type TokenRow,
} from '../journalRecords.js';
import { rowToEffect, rowToProof, type ConsumptionOutcome, type EffectRow, type ProofRow } from '../proofs.js';
import type { AuditRow, DecisionJudge, EventInput, HostRecord, RemoteEvent, Store, StoreChange } from '../store.js';
import { maskSecrets, type DatabaseUrl } from './databaseUrl.js';
import { migratePostgres } from './postgresSchema.js';

export interface PostgresStoreOptions {
  database: DatabaseUrl;
  hostId: string;
  /** Wall-clock ms for "active now" (rules); the service's clock. */
  now?: () => number;
  /** Told when the connection goes and comes back, and of what could not be applied; never given the URL or password. */
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
  /** Connections for queries (the LISTEN connection comes on top). */
  poolSize?: number;
  /** How long connecting may take before the call fails closed; with the query timeout this keeps a refusal within 5 s (R-TEAM-7). */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** First and longest wait between reconnect attempts of the LISTEN connection. */
  reconnectMs?: { first: number; max: number };
}

/** BIGINT columns (times, seq) come back as numbers: every value we store fits a double exactly. */
const INT8_OID = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (value: string) => Number(value) : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format)) as never,
};

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED']);
const CONNECTION_TEXT = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|not queryable|Connection ended|terminating connection|the database system is (shutting down|starting up)/i;

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return error instanceof Error && CONNECTION_TEXT.test(error.message);
}

interface ApprovalRow {
  id: string;
  host_id: string;
  session_id: string;
  kind: string;
  server: string | null;
  tool: string | null;
  args: string | null;
  action: string | null;
  args_sha256: string;
  requested_at: number;
  expires_at: number;
  caller: string;
  handoff: boolean;
  state: string;
  channel: string | null;
  reason: string | null;
  scope: string | null;
  decided_at: number | null;
  owner: string | null;
  four_eyes: boolean;
  quorum: number;
  decided_by: string | null;
  decided_host: string | null;
}

function rowToApproval(row: ApprovalRow): ApprovalRecord {
  const record: ApprovalRecord = {
    id: row.id,
    sessionId: row.session_id,
    kind: row.kind as ApprovalRecord['kind'],
    argsSha256: row.args_sha256,
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    caller: JSON.parse(row.caller) as Record<string, unknown>,
    handoff: row.handoff,
    state: row.state as ApprovalState,
    hostId: row.host_id,
  };
  if (row.server !== null) record.server = row.server;
  if (row.tool !== null) record.tool = row.tool;
  if (row.args !== null) record.args = JSON.parse(row.args) as Record<string, unknown>;
  if (row.action !== null) record.action = JSON.parse(row.action) as unknown;
  if (row.channel !== null) record.channel = row.channel;
  if (row.reason !== null) record.reason = row.reason;
  if (row.scope !== null) record.scope = row.scope as 'call' | 'session';
  if (row.decided_at !== null) record.decidedAt = row.decided_at;
  if (row.owner !== null) record.owner = row.owner;
  if (row.four_eyes) record.fourEyes = true;
  if (row.quorum > 1) record.quorum = row.quorum;
  if (row.decided_by !== null) record.decidedBy = row.decided_by;
  if (row.decided_host !== null) record.decidedHost = row.decided_host;
  return record;
}

interface NotifiedEvent {
  seq: number;
  host: string;
  kind?: string;
  ts?: number;
  session?: string | null;
  data?: string;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly shared = true;
  readonly hostId: string;
  private instance = '';
  private readonly pool: pg.Pool;
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private listener: pg.Client | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Notifications are applied one after another, in the order the database sent them. */
  private feed: Promise<void> = Promise.resolve();
  private lastError: string | undefined;

  private constructor(private readonly options: PostgresStoreOptions) {
    this.hostId = options.hostId;
    this.pool = new pg.Pool({ ...this.clientConfig(), max: options.poolSize ?? 8, idleTimeoutMillis: 30_000 });
    // An idle connection the server dropped (restart, outage) is reported here; the next query connects anew.
    this.pool.on('error', (error) => this.note('warn', 'an idle team database connection was closed', error));
  }

  /** Connects, migrates (versioned, one transaction each) and starts listening; throws `unavailable` naming the database without its password. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      const client = await store.pool.connect();
      try {
        await migratePostgres(client, options.database.display);
        store.instance = (await client.query<{ value: string }>("SELECT value FROM team_meta WHERE key = 'instance_id'")).rows[0]?.value ?? '';
      } finally {
        client.release();
      }
      await store.connectListener();
    } catch (error) {
      await store.pool.end().catch(() => undefined);
      throw store.failure(error);
    }
    return store;
  }

  get instanceId(): string {
    return this.instance;
  }

  describe(): Record<string, unknown> {
    const description: Record<string, unknown> = { kind: 'postgres', database: this.options.database.display, listening: this.listener !== undefined };
    if (this.lastError !== undefined) description['lastError'] = this.lastError;
    return description;
  }

  available(): boolean {
    return !this.closed && this.listener !== undefined;
  }

  private clientConfig(): pg.ClientConfig {
    const timeout = this.options.queryTimeoutMs ?? 4000;
    return {
      connectionString: this.options.database.url,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 3000,
      query_timeout: timeout,
      statement_timeout: timeout,
      keepAlive: true,
      application_name: `assent ${this.hostId.slice(0, 8)}`,
      types: TYPES,
    };
  }

  // ------------------------------------------------------------ connection, feed, errors

  private async connectListener(): Promise<void> {
    const client = new pg.Client(this.clientConfig());
    client.on('error', (error) => this.listenerLost(client, error));
    client.on('end', () => this.listenerLost(client));
    client.on('notification', (message) => {
      if (message.channel !== 'assent_events' || message.payload === undefined) return;
      const payload = message.payload;
      this.feed = this.feed.then(() => this.onNotification(payload)).catch((error: unknown) => this.note('warn', 'a team event could not be read', error));
    });
    try {
      await client.connect();
      await client.query('LISTEN assent_events');
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    this.listener = client;
    this.lastError = undefined;
  }

  private listenerLost(client: pg.Client, error?: unknown): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    client.end().catch(() => undefined);
    if (this.closed) return;
    const reason = error === undefined ? 'the connection ended' : this.maskedText(error);
    this.lastError = reason;
    this.note('warn', 'lost the team database; prompt calls are refused until it is back', undefined, { reason });
    this.emit({ kind: 'connection', state: 'lost', reason });
    this.scheduleReconnect(this.options.reconnectMs?.first ?? 100);
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closed || this.reconnectTimer !== undefined) return;
    const max = this.options.reconnectMs?.max ?? 2000;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connectListener().then(
        () => {
          this.note('info', 'the team database is reachable again');
          this.emit({ kind: 'connection', state: 'restored' });
        },
        (error: unknown) => {
          this.lastError = this.maskedText(error);
          this.scheduleReconnect(Math.min(max, delayMs * 2));
        },
      );
    }, delayMs);
    this.reconnectTimer.unref?.();
  }

  private async onNotification(payload: string): Promise<void> {
    const notified = JSON.parse(payload) as NotifiedEvent;
    if (notified.host === this.hostId) return;
    let event: RemoteEvent;
    if (notified.kind === undefined || notified.data === undefined || notified.ts === undefined) {
      // Too big for a notification: read it.
      const row = (await this.query<EventRow & { host_id: string }>('SELECT seq, kind, ts, session_id, data, host_id FROM events WHERE seq = $1', [notified.seq])).rows[0];
      if (row === undefined) return;
      event = { ...rowToEvent(row), hostId: row.host_id };
    } else {
      event = { seq: notified.seq, kind: notified.kind, ts: notified.ts, data: JSON.parse(notified.data) as Record<string, unknown>, hostId: notified.host };
      if (typeof notified.session === 'string') event.sessionId = notified.session;
    }
    this.emit({ kind: 'event', event });
  }

  private emit(change: StoreChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch {
        // One listener's failure never reaches the feed or the others.
      }
    }
  }

  private note(level: 'info' | 'warn', message: string, error?: unknown, fields: Record<string, unknown> = {}): void {
    try {
      this.options.log?.(level, message, error === undefined ? fields : { ...fields, error: this.maskedText(error) });
    } catch {
      // Logging never reaches the store's callers.
    }
  }

  private maskedText(error: unknown): string {
    const text = error instanceof Error ? error.message : String(error);
    return maskSecrets(text.split(this.options.database.url).join(this.options.database.display), this.options.database.secrets);
  }

  /** Any failure as an AssentError: a lost connection is `unavailable` (fail closed), the rest `internal`; never with the password. */
  private failure(error: unknown): AssentError {
    if (error instanceof AssentError) return error;
    const reason = this.maskedText(error);
    if (isConnectionError(error)) {
      this.lastError = reason;
      return new AssentError('unavailable', `the team database ${this.options.database.display} cannot be reached (${reason}); nothing was filed or run, retry once it is back`, {
        details: { reason: 'database', database: this.options.database.display },
      });
    }
    const code = (error as { code?: unknown }).code;
    return new AssentError('internal', `the team database ${this.options.database.display} refused a statement (${reason}); the daemon log has details`, {
      details: typeof code === 'string' ? { code } : {},
    });
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw isUniqueViolation(error) ? error : this.failure(error);
    }
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failure(error);
    }
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(isConnectionError(error) ? (error as Error) : undefined);
      throw this.failure(error);
    }
  }

  // ------------------------------------------------------------ approvals

  async insertApproval(record: ApprovalRecord): Promise<void> {
    try {
      await this.query(
        `INSERT INTO approvals (id, host_id, session_id, kind, server, tool, args, action, args_sha256, requested_at, expires_at, caller, handoff, state, channel, reason, scope, decided_at,
                                decided_by, owner, four_eyes, quorum, decided_host)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
        [
          record.id,
          record.hostId ?? this.hostId,
          record.sessionId,
          record.kind,
          record.server ?? null,
          record.tool ?? null,
          record.args === undefined ? null : JSON.stringify(record.args),
          record.action === undefined ? null : JSON.stringify(record.action),
          record.argsSha256,
          record.requestedAt,
          record.expiresAt,
          JSON.stringify(record.caller),
          record.handoff,
          record.state,
          record.channel ?? null,
          record.reason ?? null,
          record.scope ?? null,
          record.decidedAt ?? null,
          record.decidedBy ?? null,
          record.owner ?? null,
          record.fourEyes === true,
          record.quorum ?? 1,
          record.decidedHost ?? null,
        ],
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AssentError('conflict', `approval id ${record.id} already exists in the journal; draw a new id and retry`, { details: { id: record.id } });
      }
      throw error;
    }
  }

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    const row = (await this.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1', [id])).rows[0];
    return row === undefined ? undefined : rowToApproval(row);
  }

  async listApprovals(filter: { state?: ApprovalState; limit?: number } = {}): Promise<ApprovalRecord[]> {
    const limit = filter.limit === undefined ? null : Math.max(0, Math.floor(filter.limit));
    const result =
      filter.state === undefined
        ? await this.query<ApprovalRow>('SELECT * FROM approvals ORDER BY requested_at, id LIMIT $1', [limit])
        : await this.query<ApprovalRow>('SELECT * FROM approvals WHERE state = $1 ORDER BY requested_at, id LIMIT $2', [filter.state, limit]);
    return result.rows.map(rowToApproval);
  }

  /** The conditional UPDATE is the compare-and-set; the raw arguments go in the same statement (R-TEAM-6). */
  async resolveApproval(id: string, resolution: ApprovalResolution): Promise<boolean> {
    return resolveIn(this.pool, id, resolution).catch((error: unknown) => {
      throw this.failure(error);
    });
  }

  /**
   * The deciding transaction across hosts: the approval's row is locked
   * (SELECT … FOR UPDATE) while its votes are read, the judge decides and the
   * vote and resolution are written; a racing decider on any host waits on the
   * lock, then reads the outcome.
   */
  decideApproval<T>(id: string, judge: DecisionJudge<T>): Promise<T> {
    return this.transaction(async (client) => {
      const row = (await client.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1 FOR UPDATE', [id])).rows[0];
      const record = row === undefined ? undefined : rowToApproval(row);
      const votes =
        record === undefined
          ? []
          : (await client.query<ApprovalVoteRow>('SELECT * FROM approval_votes WHERE approval_id = $1 ORDER BY voted_at, principal', [id])).rows.map(rowToApprovalVote);
      const { writes, result } = judge({ record, votes });
      if (writes.vote !== undefined) await insertVote(client, writes.vote);
      if (writes.resolution !== undefined && !(await resolveIn(client, id, writes.resolution))) {
        throw new AssentError('conflict', `approval ${id} was already resolved`);
      }
      return result;
    });
  }

  async listApprovalVotes(approvalId: string): Promise<ApprovalVote[]> {
    const result = await this.query<ApprovalVoteRow>('SELECT * FROM approval_votes WHERE approval_id = $1 ORDER BY voted_at, principal', [approvalId]);
    return result.rows.map(rowToApprovalVote);
  }

  async listPendingApprovalVotes(): Promise<ApprovalVote[]> {
    const result = await this.query<ApprovalVoteRow>(
      "SELECT v.* FROM approval_votes v JOIN approvals a ON a.id = v.approval_id WHERE a.state = 'pending' ORDER BY v.voted_at, v.principal",
    );
    return result.rows.map(rowToApprovalVote);
  }

  // ------------------------------------------------------------ events

  async appendEvent(event: EventInput): Promise<number> {
    const result = await this.query<{ seq: number }>('INSERT INTO events (host_id, kind, ts, session_id, data) VALUES ($1, $2, $3, $4, $5) RETURNING seq', [
      this.hostId,
      event.kind,
      event.ts,
      event.sessionId ?? null,
      JSON.stringify(event.data),
    ]);
    return result.rows[0]?.seq ?? 0;
  }

  async eventsSince(cursor: number, limit: number): Promise<EventRecord[]> {
    const result = await this.query<EventRow>('SELECT seq, kind, ts, session_id, data FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', [cursor, Math.max(0, Math.floor(limit))]);
    return result.rows.map(rowToEvent);
  }

  // ------------------------------------------------------------ rules

  async insertRule(rule: Rule): Promise<void> {
    try {
      const { form, pattern } = ruleForm(rule);
      await this.query(
        'INSERT INTO rules (id, version, tool, args, created_at, expires_at, revoked_at, form, pattern, access, agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
        [rule.id, rule.version, rule.tool ?? '', JSON.stringify(rule.args), rule.createdAt, rule.expiresAt ?? null, rule.revokedAt ?? null, form, pattern, rule.access ?? null, rule.agent ?? null],
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw new AssentError('conflict', `rule id ${rule.id} already exists in the journal; draw a new id and retry`, { details: { id: rule.id } });
      throw error;
    }
  }

  async getRule(id: string): Promise<Rule | undefined> {
    const row = (await this.query<RuleRow>('SELECT * FROM rules WHERE id = $1', [id])).rows[0];
    return row === undefined ? undefined : rowToRule(row);
  }

  async listRules(options: { includeInactive?: boolean; now?: number } = {}): Promise<Rule[]> {
    if (options.includeInactive === true) return (await this.query<RuleRow>('SELECT * FROM rules ORDER BY created_at, id')).rows.map(rowToRule);
    const now = options.now ?? (this.options.now ?? Date.now)();
    const result = await this.query<RuleRow>(
      'SELECT * FROM rules WHERE (revoked_at IS NULL OR revoked_at > $1) AND (expires_at IS NULL OR expires_at > $1) ORDER BY created_at, id',
      [now],
    );
    return result.rows.map(rowToRule);
  }

  async revokeRule(id: string, at: number): Promise<boolean> {
    return (await this.query('UPDATE rules SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
  }

  // ------------------------------------------------------------ calls in progress (this host's)

  async recordCallInProgress(record: CallInProgressRecord): Promise<void> {
    await this.query(
      `INSERT INTO calls_in_progress (host_id, call_id, session_id, server, tool, args_sha256, caller, channel, approval_id, rule_id, waited_ms, authorized_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        this.hostId,
        record.callId,
        record.sessionId,
        record.server,
        record.tool,
        record.argsSha256,
        JSON.stringify(record.caller),
        record.channel ?? null,
        record.approvalId ?? null,
        record.ruleId ?? null,
        Math.round(record.waitedForConsentMs),
        record.authorizedAt,
      ],
    );
  }

  async endCallInProgress(callId: string): Promise<boolean> {
    return (await this.query('DELETE FROM calls_in_progress WHERE host_id = $1 AND call_id = $2', [this.hostId, callId])).rowCount === 1;
  }

  async listCallsInProgress(): Promise<CallInProgressRecord[]> {
    const result = await this.query<CallInProgressRow>('SELECT * FROM calls_in_progress WHERE host_id = $1 ORDER BY authorized_at, call_id', [this.hostId]);
    return result.rows.map(rowToCallInProgress);
  }

  // ------------------------------------------------------------ tokens

  async insertToken(token: TokenRecord): Promise<void> {
    try {
      await this.query('INSERT INTO tokens (id, name, token_sha256, audience, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        token.id,
        token.name,
        token.tokenSha256,
        token.audience,
        token.createdAt,
        token.expiresAt,
        token.revokedAt ?? null,
      ]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AssentError('conflict', `token id ${token.id} already exists in the journal; draw a new id and retry`, { details: { id: token.id } });
      throw error;
    }
  }

  async findTokenByHash(tokenSha256: string): Promise<TokenRecord | undefined> {
    const row = (await this.query<TokenRow>('SELECT * FROM tokens WHERE token_sha256 = $1', [tokenSha256])).rows[0];
    return row === undefined ? undefined : rowToToken(row);
  }

  async getToken(id: string): Promise<TokenRecord | undefined> {
    const row = (await this.query<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id])).rows[0];
    return row === undefined ? undefined : rowToToken(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (await this.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id')).rows.map(rowToToken);
  }

  async revokeToken(id: string, at: number): Promise<boolean> {
    return (await this.query('UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
  }

  // ------------------------------------------------------------ proofs and effects

  async insertProof(proof: ProofRecord): Promise<void> {
    try {
      await this.query(
        `INSERT INTO proofs (id, hash, approval_id, principal, session_id, action_kind, action_digest, revision, decision, channel, audience, issued_at, expires_at, state, host_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'allow', $9, $10, $11, $12, 'issued', $13)`,
        [
          proof.id,
          proof.hash,
          proof.approvalId,
          proof.principal,
          proof.sessionId,
          proof.actionKind,
          proof.actionDigest,
          proof.revision,
          proof.channel,
          proof.audience,
          proof.issuedAt,
          proof.expiresAt,
          proof.hostId ?? this.hostId,
        ],
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AssentError('conflict', `approval ${proof.approvalId} has already produced its one proof; ask for a new approval to run the action again`, {
          details: { approvalId: proof.approvalId },
        });
      }
      throw error;
    }
  }

  async getProofByHash(hash: string): Promise<ProofRecord | undefined> {
    const row = (await this.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE hash = $1', [hash])).rows[0];
    return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
  }

  async getProof(id: string): Promise<ProofRecord | undefined> {
    const row = (await this.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE id = $1', [id])).rows[0];
    return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
  }

  async getProofForApproval(approvalId: string): Promise<ProofRecord | undefined> {
    const row = (await this.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE approval_id = $1', [approvalId])).rows[0];
    return row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
  }

  async proofsForAction(principal: string, audience: ProofAudience, actionDigest: string): Promise<ProofRecord[]> {
    const result = await this.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE principal = $1 AND audience = $2 AND action_digest = $3 ORDER BY issued_at DESC, id', [
      principal,
      audience,
      actionDigest,
    ]);
    return result.rows.map((row) => withHost(rowToProof(row), row.host_id));
  }

  async listProofs(limit = 1000): Promise<ProofRecord[]> {
    const result = await this.query<ProofRow & { host_id: string }>('SELECT * FROM proofs ORDER BY issued_at DESC, id LIMIT $1', [limit]);
    return result.rows.map((row) => withHost(rowToProof(row), row.host_id));
  }

  /**
   * R-J-3 across hosts: the proof's row is locked (SELECT … FOR UPDATE) for the
   * whole transaction, so racing consumers on any host wait for the first, then
   * find it consumed and get its effect (R-J-4). The intent is committed before
   * this returns, and carries this host's id (R-TEAM-6).
   */
  consume(hash: string, request: ConsumptionRequest, effectId: string): Promise<ConsumptionOutcome> {
    return this.transaction(async (client): Promise<ConsumptionOutcome> => {
      const row = (await client.query<ProofRow & { host_id: string }>('SELECT * FROM proofs WHERE hash = $1 FOR UPDATE', [hash])).rows[0];
      const proof = row === undefined ? undefined : withHost(rowToProof(row), row.host_id);
      // A tool proof another host issued binds that host's configuration: it holds while that host still runs the revision
      // it approved under (R-TEAM-6). An exec proof binds the policy file's own digest, which any host can present.
      let checked = request;
      if (proof !== undefined && proof.actionKind === 'tool' && proof.hostId !== this.hostId) {
        const issuer = (await client.query<{ revision: string }>('SELECT revision FROM hosts WHERE host_id = $1', [proof.hostId])).rows[0];
        checked = { ...request, revision: issuer?.revision ?? '' };
      }
      const verdict = decideConsumption(proof, checked);
      if (verdict.kind === 'refuse' || proof === undefined) {
        const reason = verdict.kind === 'refuse' ? verdict.reason : 'unknown';
        throw new AssentError('proof_invalid', `the approval proof was refused (${reason}): ${PROOF_REFUSAL_HELP[reason]}; nothing was run`, {
          details: proof === undefined ? { reason } : { reason, proofId: proof.id, approvalId: proof.approvalId },
        });
      }
      if (verdict.kind === 'replay') {
        const effectRow = (await client.query<EffectRow>('SELECT * FROM effects WHERE proof_hash = $1', [hash])).rows[0];
        if (effectRow === undefined) {
          throw new AssentError('internal', `proof ${proof.id} is consumed but has no effect record; inspect the journal`, { details: { proofId: proof.id } });
        }
        const replay: ConsumptionOutcome = { kind: 'replay', proof, effect: rowToEffect(effectRow) };
        if (effectRow.result !== null) replay.result = JSON.parse(effectRow.result) as unknown;
        return replay;
      }
      await client.query("UPDATE proofs SET state = 'consumed', consumed_at = $1, effect_id = $2 WHERE hash = $3 AND state = 'issued'", [request.now, effectId, hash]);
      await client.query(
        "INSERT INTO effects (id, host_id, proof_hash, proof_id, approval_id, action_digest, state, started_at) VALUES ($1, $2, $3, $4, $5, $6, 'intent', $7)",
        [effectId, this.hostId, hash, proof.id, proof.approvalId, proof.actionDigest, request.now],
      );
      const effect: EffectRecord = {
        id: effectId,
        proofHash: hash,
        proofId: proof.id,
        approvalId: proof.approvalId,
        actionDigest: proof.actionDigest,
        state: 'intent',
        startedAt: request.now,
      };
      return { kind: 'consumed', proof: { ...proof, state: 'consumed', consumedAt: request.now, effectId }, effect };
    });
  }

  async finishEffect(id: string, outcome: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown }): Promise<boolean> {
    const result = outcome.result === undefined ? null : JSON.stringify(outcome.result);
    const updated = await this.query("UPDATE effects SET state = $1, finished_at = $2, result_digest = $3, result = $4 WHERE id = $5 AND state = 'intent'", [
      outcome.state,
      outcome.at,
      outcome.resultDigest ?? null,
      result,
      id,
    ]);
    return updated.rowCount === 1;
  }

  async getEffect(id: string): Promise<EffectRecord | undefined> {
    const row = (await this.query<EffectRow>('SELECT * FROM effects WHERE id = $1', [id])).rows[0];
    return row === undefined ? undefined : rowToEffect(row);
  }

  async getEffectResult(id: string): Promise<unknown> {
    const row = (await this.query<{ result: string | null }>('SELECT result FROM effects WHERE id = $1', [id])).rows[0];
    return row?.result === null || row === undefined ? undefined : (JSON.parse(row.result) as unknown);
  }

  /** R-J-5 for one host: only `hostId`'s open intents (this host's unless named), in one statement. */
  async reconcileIntents(at: number, hostId: string = this.hostId): Promise<EffectRecord[]> {
    const result = await this.query<EffectRow>(
      "UPDATE effects SET state = 'uncertain', finished_at = $1 WHERE host_id = $2 AND state = 'intent' RETURNING *",
      [at, hostId],
    );
    return result.rows.map(rowToEffect).sort((a, b) => a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1));
  }

  async revokeProof(id: string, at: number): Promise<boolean> {
    return (await this.query("UPDATE proofs SET state = 'revoked', revoked_at = $1 WHERE id = $2 AND state = 'issued'", [at, id])).rowCount === 1;
  }

  // ------------------------------------------------------------ hosts (R-TEAM-6)

  async announceHost(host: { name: string; revision: string; at: number }): Promise<void> {
    await this.query(
      `INSERT INTO hosts (host_id, name, revision, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (host_id) DO UPDATE SET name = excluded.name, revision = excluded.revision, updated_at = excluded.updated_at`,
      [this.hostId, host.name, host.revision, host.at],
    );
  }

  async listHosts(): Promise<HostRecord[]> {
    const result = await this.query<{ host_id: string; name: string; revision: string; updated_at: number }>('SELECT * FROM hosts ORDER BY name, host_id');
    return result.rows.map((row) => ({ hostId: row.host_id, name: row.name, revision: row.revision, updatedAt: row.updated_at }));
  }

  // ------------------------------------------------------------ audit rows (R-TEAM-4)

  /** Idempotent: a row already stored (a retry after an outage) is kept as it is. */
  async appendAuditRows(rows: readonly AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.query(
      'INSERT INTO audit (host_id, seq, ts, line) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (host_id, seq) DO NOTHING',
      [rows.map((row) => row.hostId), rows.map((row) => row.seq), rows.map((row) => row.ts), rows.map((row) => row.line)],
    );
  }

  async lastAuditSeq(): Promise<number> {
    return (await this.query<{ seq: number }>('SELECT COALESCE(max(seq), 0)::bigint AS seq FROM audit WHERE host_id = $1', [this.hostId])).rows[0]?.seq ?? 0;
  }

  async listAuditRows(filter: { hostId?: string } = {}): Promise<AuditRow[]> {
    const result =
      filter.hostId === undefined
        ? await this.query<{ host_id: string; seq: number; ts: string; line: string }>('SELECT host_id, seq, ts, line FROM audit ORDER BY host_id, seq')
        : await this.query<{ host_id: string; seq: number; ts: string; line: string }>('SELECT host_id, seq, ts, line FROM audit WHERE host_id = $1 ORDER BY seq', [filter.hostId]);
    return result.rows.map((row) => ({ hostId: row.host_id, seq: row.seq, ts: row.ts, line: row.line }));
  }

  // ------------------------------------------------------------ lifecycle

  watch(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    await this.feed.catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

/** The compare-and-set from pending; the raw arguments go in the same statement (R-TEAM-6). */
async function resolveIn(client: pg.Pool | pg.PoolClient, id: string, resolution: ApprovalResolution): Promise<boolean> {
  const result = await client.query(
    `UPDATE approvals SET state = $2, channel = $3, reason = $4, scope = $5, decided_at = $6, decided_by = $7, decided_host = $8, args = NULL, action = NULL
     WHERE id = $1 AND state = 'pending'`,
    [id, resolution.state, resolution.channel ?? null, resolution.reason ?? null, resolution.scope ?? null, resolution.decidedAt, resolution.decidedBy ?? null, resolution.decidedHost ?? null],
  );
  return result.rowCount === 1;
}

/** Records one principal's approval; a repeat by the same principal changes nothing. */
async function insertVote(client: pg.PoolClient, vote: ApprovalVote): Promise<void> {
  await client.query(
    'INSERT INTO approval_votes (approval_id, principal, host_id, channel, scope, voted_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (approval_id, principal) DO NOTHING',
    [vote.approvalId, vote.principal, vote.hostId ?? null, vote.channel, vote.scope, vote.votedAt],
  );
}

function withHost(proof: ProofRecord, hostId: string): ProofRecord {
  proof.hostId = hostId;
  return proof;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505';
}
