// The team store's connection (R-TEAM-1, R-TEAM-2): one PostgreSQL database
// shared by the daemons of several hosts; each concern's statements are in the
// file named for it (postgresApprovals.ts, postgresEvents.ts, …), and
// `openPostgresStoreParts` hands them to the composition root. The first resolver wins by a conditional UPDATE;
// proof consumption is one transaction holding the proof's row lock; each event
// is pushed to the other hosts by a trigger's NOTIFY, heard here on a dedicated
// LISTEN connection that reconnects with backoff. While that connection is down
// the store reports itself unavailable, so no new prompt call is filed (R-TEAM-7).
// Nothing it logs, reports or throws contains the database password.
import pg from 'pg';
import { AssentError } from '../../core/base/errors.js';
import * as eventsCalls from '../eventsCalls.js';
import { rowToEvent, type EventRow } from '../journalRecords.js';
import { composeStore, type RemoteEvent, type Store, type StoreChange, type StoreInfo, type StoreParts } from '../store.js';
import { maskSecrets, type DatabaseUrl } from './databaseUrl.js';
import { postgresApprovals } from './postgresApprovals.js';
import { postgresAudit } from './postgresAudit.js';
import { postgresCalls } from './postgresCalls.js';
import { postgresEvents } from './postgresEvents.js';
import { postgresHosts } from './postgresHosts.js';
import { postgresProofs } from './postgresProofs.js';
import { clientQuery, isConnectionError, isUniqueViolation, PG_TYPES, runPgSteps, type PgContext } from './postgresQuery.js';
import { postgresRules } from './postgresRules.js';
import { migratePostgres } from './postgresSchema.js';
import { postgresTokens } from './postgresTokens.js';

export interface PostgresStoreOptions {
  database: DatabaseUrl;
  hostId: string;
  /** Wall-clock ms for "active now" (rules); the service's clock. */
  now?: () => number;
  /** The clock the team shares, for proofs' expiry (postgresProofs.ts); default the database server's own. Tests with a fake clock give theirs. */
  teamClock?: () => number;
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

interface NotifiedEvent {
  seq: number;
  host: string;
  kind?: string;
  ts?: number;
  session?: string | null;
  data?: string;
}

/** The pool, the LISTEN feed and the error mapping every concern's statements run through. */
export class PostgresConnection implements StoreInfo {
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
  /** What the statement modules (approvals, events, rules, proofs, …) run through. */
  readonly db: PgContext;

  private constructor(private readonly options: PostgresStoreOptions) {
    this.hostId = options.hostId;
    this.db = {
      hostId: options.hostId,
      query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => this.query<R>(text, values),
      transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => this.transaction(work),
    };
    this.pool = new pg.Pool({ ...this.clientConfig(), max: options.poolSize ?? 8, idleTimeoutMillis: 30_000 });
    // An idle connection the server dropped (restart, outage) is reported here; the next query connects anew.
    this.pool.on('error', (error) => this.note('warn', 'an idle team database connection was closed', error));
  }

  /** Connects, migrates (versioned, one transaction each) and starts listening; throws `unavailable` naming the database without its password. */
  static async open(options: PostgresStoreOptions): Promise<PostgresConnection> {
    const store = new PostgresConnection(options);
    try {
      const client = await store.pool.connect();
      try {
        await migratePostgres(client, options.database.display);
        const settings: eventsCalls.EventCallContext = { q: eventsCalls.EVENT_CALL_QUERIES.postgres, hostId: options.hostId };
        store.instance = (await runPgSteps(clientQuery(client), eventsCalls.readMeta(settings, 'instance_id'))) ?? '';
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
      types: PG_TYPES,
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

/** Connects (see `PostgresConnection.open`) and returns each concern of the team store over that one connection. */
export async function openPostgresStoreParts(options: PostgresStoreOptions): Promise<StoreParts> {
  const connection = await PostgresConnection.open(options);
  const db = connection.db;
  return {
    info: connection,
    approvals: postgresApprovals(db),
    events: postgresEvents(db),
    proofs: postgresProofs(db, options.teamClock),
    rules: postgresRules(db, options.now ?? Date.now),
    tokens: postgresTokens(db),
    calls: postgresCalls(db),
    hosts: postgresHosts(db),
    audit: postgresAudit(db),
  };
}

/** A composed store of this engine (the name tests and tools know). */
export type PostgresStore = Store;

export const PostgresStore = {
  /** The team store composed at once (tests and tools; the daemon composes its parts in its composition root). */
  async open(options: PostgresStoreOptions): Promise<Store> {
    return composeStore(await openPostgresStoreParts(options));
  },
};
