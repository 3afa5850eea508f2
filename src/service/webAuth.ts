// Who may use the HTTP head (R-WEB-2, R-WEB-4, R-REM-3): one-time pairing codes
// that a browser exchanges for a session cookie (sessions: webSessions.ts), and
// bearer tokens for scripts. Only SHA-256 hashes of cookies and tokens are kept;
// pairing codes live in memory.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import { ID_ALPHABET, newApprovalId, randomString, type RandomBytes } from '../core/base/ids.js';
import type { TokenRecord, WebDeviceRecord } from '../journal/journal.js';
import { WebSessions, type DeviceInfo, type DeviceStore, type WebSession } from './webSessions.js';

export type { DeviceInfo, DeviceStore, WebSession } from './webSessions.js';

/** The part of the store tokens need (the store answers asynchronously; a test's may answer at once). */
export interface TokenStore {
  instanceId(): string;
  insertToken(token: TokenRecord): void | Promise<void>;
  findTokenByHash(tokenSha256: string): TokenRecord | undefined | Promise<TokenRecord | undefined>;
  getToken(id: string): TokenRecord | undefined | Promise<TokenRecord | undefined>;
  listTokens(): TokenRecord[] | Promise<TokenRecord[]>;
  revokeToken(id: string, at: number): boolean | Promise<boolean>;
}

export interface WebAuthOptions {
  tokens: TokenStore;
  /** Where remembered devices are kept (the journal); in memory only when left out. */
  devices?: DeviceStore;
  clock: Clock;
  random: RandomBytes;
  /** Lifetime of a pairing code; 120 s (R-WEB-2). */
  pairingTtlMs?: number;
  /** Wrong codes tolerated before the code is burnt; 5 (R-WEB-2). */
  maxPairingFailures?: number;
  /** Wait after the n-th wrong code before the next try is looked at; 1 s doubling (1, 2, 4, 8 s). */
  pairingBackoffMs?: (failures: number) => number;
  /** Absolute lifetime of a browser session. */
  sessionTtlMs?: number;
  /** Absolute lifetime of a remembered device (web.deviceTtlDays), read at pairing time; 30 days. */
  deviceTtlMs?: () => number;
}

export interface PairingCode {
  code: string;
  expiresAt: number;
}

/** The public view of a token: never its secret or hash. */
export interface TokenInfo {
  id: string;
  name: string;
  audience: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
  state: 'active' | 'expired' | 'revoked';
}

export const PAIRING_CODE_LENGTH = 8;
export const TOKEN_PREFIX = 'ast1_';
export const SESSION_COOKIE = 'assent_session';
const DEFAULT_SESSION_TTL_MS = 12 * 3_600_000;
/** Longest token lifetime `assent token create` accepts. */
export const MAX_TOKEN_TTL_MS = 90 * 86_400_000;

const DEFAULT_DEVICE_TTL_MS = 30 * 86_400_000;

/** A device store that forgets everything at exit, for a WebAuth without a journal. */
function memoryDeviceStore(): DeviceStore {
  const rows: WebDeviceRecord[] = [];
  return {
    insertWebDevice: (device) => void rows.push({ ...device }),
    listWebDevices: (now) => rows.filter((row) => row.revokedAt === undefined && row.expiresAt > now),
    touchWebDevice: () => undefined,
    revokeWebDevice: (id, at) => {
      const row = rows.find((candidate) => candidate.id === id && candidate.revokedAt === undefined);
      if (row !== undefined) row.revokedAt = at;
      return row !== undefined;
    },
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** 1 s after the first wrong code, doubling: burning a code takes at least 15 s of waits. */
export function defaultPairingBackoffMs(failures: number): number {
  return 1000 * 2 ** Math.max(0, failures - 1);
}

interface ActivePairing {
  hash: Buffer;
  expiresAt: number;
  failures: number;
  /** Monotonic time before which no try is looked at. */
  nextTryAt: number;
}

export class WebAuth {
  private pairing: ActivePairing | undefined;
  private readonly sessions: WebSessions;
  private readonly tokenListeners = new Set<(id: string) => void>();
  private readonly pairingTtlMs: number;
  private readonly maxPairingFailures: number;
  private readonly pairingBackoffMs: (failures: number) => number;
  private readonly sessionTtlMs: number;
  readonly audience: string;

  constructor(private readonly options: WebAuthOptions) {
    this.pairingTtlMs = options.pairingTtlMs ?? 120_000;
    this.maxPairingFailures = options.maxPairingFailures ?? 5;
    this.pairingBackoffMs = options.pairingBackoffMs ?? defaultPairingBackoffMs;
    this.sessionTtlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
    this.audience = options.tokens.instanceId();
    this.sessions = new WebSessions({
      store: options.devices ?? memoryDeviceStore(),
      clock: options.clock,
      random: options.random,
      sessionTtlMs: this.sessionTtlMs,
      deviceTtlMs: options.deviceTtlMs ?? (() => DEFAULT_DEVICE_TTL_MS),
    });
  }

  /** A fresh one-time code; it replaces any earlier one, so only the newest printed code works. */
  issuePairingCode(): PairingCode {
    const code = randomString(this.options.random, ID_ALPHABET, PAIRING_CODE_LENGTH);
    const expiresAt = this.options.clock.now() + this.pairingTtlMs;
    this.pairing = { hash: sha256(code), expiresAt, failures: 0, nextTryAt: this.options.clock.monotonic() };
    return { code, expiresAt };
  }

  /**
   * Exchanges the pairing code for a session cookie value. A wrong guess is
   * `unauthorized` and counts; after it, every try is `rate_limited` without the
   * code being looked at until a wait that doubles with each wrong guess has
   * passed, so a burst of guesses counts once and burning the operator's code
   * takes seconds, not milliseconds. The try after the last tolerated failure
   * finds the code burnt even when it is right.
   */
  redeemPairingCode(candidate: string, device: { remember?: boolean; userAgent?: string | undefined } = {}): { cookie: string; session: WebSession } {
    const pairing = this.pairing;
    const refuse = (why: string): AssentError =>
      new AssentError('unauthorized', `The pairing code was not accepted (${why}). Run \`assent web\` in your terminal for a new code and enter it within 120 s.`);
    if (pairing === undefined) throw refuse('no code is active');
    if (this.options.clock.now() >= pairing.expiresAt) {
      this.pairing = undefined;
      throw refuse('the code expired');
    }
    if (pairing.failures >= this.maxPairingFailures) {
      this.pairing = undefined;
      throw refuse('too many wrong codes; the code is burnt');
    }
    const waitMs = pairing.nextTryAt - this.options.clock.monotonic();
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw new AssentError(
        'rate_limited',
        `A wrong pairing code was entered moments ago, so this try was not checked. Wait ${seconds} s, then enter the code again (each wrong code doubles the wait; ${this.maxPairingFailures} wrong codes burn it).`,
        { details: { retryAfterMs: waitMs } },
      );
    }
    const matches = timingSafeEqual(sha256(candidate.trim().toLowerCase()), pairing.hash);
    if (!matches) {
      pairing.failures += 1;
      if (pairing.failures >= this.maxPairingFailures) throw refuse('wrong code; that was the last try, the code is burnt');
      const backoffMs = this.pairingBackoffMs(pairing.failures);
      pairing.nextTryAt = this.options.clock.monotonic() + backoffMs;
      throw refuse(`wrong code; the next try is checked after ${Math.ceil(backoffMs / 1000)} s`);
    }
    this.pairing = undefined;
    return this.sessions.create({ remember: device.remember === true, userAgent: device.userAgent });
  }

  /** The live session a cookie value names, or undefined. */
  sessionFor(cookie: string | undefined): WebSession | undefined {
    return this.sessions.find(cookie);
  }

  endSession(cookie: string | undefined): void {
    this.sessions.end(cookie);
  }

  /** Signed-in browsers (`assent web devices`). */
  listDevices(): DeviceInfo[] {
    return this.sessions.list();
  }

  /** Signs a browser out at once (`assent web revoke`, R-REM-3). */
  revokeDevice(id: string): DeviceInfo {
    return this.sessions.revoke(id);
  }

  /**
   * Calls `listener` with `session:<id>` when a browser session ends early
   * (revoked or signed out) and with `token:<id>` when a token is revoked, so
   * the HTTP head can end that caller's open event streams at once.
   */
  onCredentialEnded(listener: (key: string) => void): () => void {
    const onSession = this.sessions.onEnded((id) => listener(`session:${id}`));
    const onToken = (id: string): void => listener(`token:${id}`);
    this.tokenListeners.add(onToken);
    return () => {
      onSession();
      this.tokenListeners.delete(onToken);
    };
  }

  get rememberedDeviceCount(): number {
    return this.sessions.rememberedCount;
  }

  get sessionCount(): number {
    return this.sessions.count;
  }

  /** Whether a pairing code is waiting to be redeemed (for status and tests). */
  get pairingActive(): boolean {
    return this.pairing !== undefined && this.options.clock.now() < this.pairing.expiresAt && this.pairing.failures < this.maxPairingFailures;
  }

  /** Mints a bearer token bound to this daemon's audience; the secret is returned once and only its hash is stored. */
  async createToken(params: { name: string; ttlMs: number }): Promise<{ token: string; info: TokenInfo }> {
    if (!(params.ttlMs > 0 && params.ttlMs <= MAX_TOKEN_TTL_MS)) {
      throw new AssentError('invalid_params', `token ttl must be between 1 s and 90 d; got ${params.ttlMs} ms`);
    }
    const token = `${TOKEN_PREFIX}${base64url(this.options.random(32))}`;
    const now = this.options.clock.now();
    const record: TokenRecord = {
      id: `t${newApprovalId(this.options.random)}`,
      name: params.name,
      tokenSha256: sha256(token).toString('hex'),
      audience: this.audience,
      createdAt: now,
      expiresAt: now + params.ttlMs,
    };
    await this.options.tokens.insertToken(record);
    return { token, info: this.describe(record) };
  }

  /** The token's record when it is ours (audience), unexpired and unrevoked; otherwise undefined. */
  async authenticateToken(token: string): Promise<TokenRecord | undefined> {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    const record = await this.options.tokens.findTokenByHash(sha256(token).toString('hex'));
    if (record === undefined) return undefined;
    if (record.audience !== this.audience) return undefined;
    if (record.revokedAt !== undefined) return undefined;
    if (this.options.clock.now() >= record.expiresAt) return undefined;
    return record;
  }

  async listTokens(): Promise<TokenInfo[]> {
    return (await this.options.tokens.listTokens()).map((record) => this.describe(record));
  }

  async revokeToken(id: string): Promise<TokenInfo> {
    const now = this.options.clock.now();
    if (!(await this.options.tokens.revokeToken(id, now))) {
      const existing = await this.options.tokens.getToken(id);
      if (existing === undefined) throw new AssentError('not_found', `no token with id ${id}; list them with \`assent token list\``, { details: { id } });
      throw new AssentError('conflict', `token ${id} was already revoked`, { details: { id } });
    }
    const record = await this.options.tokens.getToken(id);
    if (record === undefined) throw new AssentError('not_found', `no token with id ${id}; list them with \`assent token list\``, { details: { id } });
    for (const listener of [...this.tokenListeners]) {
      try {
        listener(id);
      } catch {
        // Ending one stream must not keep the revocation from being reported.
      }
    }
    return this.describe(record);
  }

  private describe(record: TokenRecord): TokenInfo {
    const state = record.revokedAt !== undefined ? 'revoked' : this.options.clock.now() >= record.expiresAt ? 'expired' : 'active';
    const info: TokenInfo = { id: record.id, name: record.name, audience: record.audience, createdAt: record.createdAt, expiresAt: record.expiresAt, state };
    if (record.revokedAt !== undefined) info.revokedAt = record.revokedAt;
    return info;
  }
}
