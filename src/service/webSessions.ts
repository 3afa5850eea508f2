// Signed-in browsers (R-WEB-2, R-REM-3): one session per paired page, kept in
// memory for 12 hours, or — paired with "remember this device" — kept as the
// SHA-256 of its cookie in the journal for web.deviceTtlDays, across restarts.
// Revoking one ends it at once and tells listeners (the HTTP head closes its
// open event streams); the cookie itself is never stored.
import { createHash } from 'node:crypto';
import type { Clock } from '../core/base/clock.js';
import { deviceNameFrom } from '../core/approval/deviceName.js';
import { AssentError } from '../core/base/errors.js';
import { newApprovalId, type RandomBytes } from '../core/base/ids.js';
import type { WebDeviceStore } from '../journal/store.js';

/** The part of the journal remembered devices need (this host's journal satisfies it). */
export type DeviceStore = WebDeviceStore;

/** A signed-in browser. */
export interface WebSession {
  /** `d` + 5 id letters: names the browser in `assent web devices`, in `assent web revoke` and in its principal `web:<id>`. */
  id: string;
  /** The same as `id`; the non-secret name logs and the principal use. */
  label: string;
  createdAt: number;
  expiresAt: number;
  /** Paired with "remember this device": kept in the journal and valid across restarts. */
  remembered: boolean;
  /** Guessed from the User-Agent ("Chrome on Android"). */
  name: string;
  userAgent: string;
  lastSeenAt: number;
}

/** What `assent web devices` shows of a session: never its cookie or hash. */
export interface DeviceInfo {
  id: string;
  name: string;
  userAgent: string;
  pairedAt: number;
  lastSeenAt: number;
  expiresAt: number;
  remembered: boolean;
}

export interface WebSessionsOptions {
  store: DeviceStore;
  clock: Clock;
  random: RandomBytes;
  /** Lifetime of a session that is not remembered; 12 h. */
  sessionTtlMs: number;
  /** Lifetime of a remembered device, read at pairing time (web.deviceTtlDays). */
  deviceTtlMs: () => number;
  /** How often a remembered device's last-seen time is written to the journal; 60 s. */
  touchIntervalMs?: number;
}

/** Longest User-Agent kept; the rest is dropped. */
const MAX_USER_AGENT = 400;

export function cookieHash(cookie: string): string {
  return createHash('sha256').update(cookie, 'utf8').digest('hex');
}

function infoOf(session: WebSession): DeviceInfo {
  return {
    id: session.id,
    name: session.name,
    userAgent: session.userAgent,
    pairedAt: session.createdAt,
    lastSeenAt: session.lastSeenAt,
    expiresAt: session.expiresAt,
    remembered: session.remembered,
  };
}

export class WebSessions {
  private readonly byHash = new Map<string, WebSession>();
  /** When each remembered device's last-seen time was last written. */
  private readonly persistedSeenAt = new Map<string, number>();
  private readonly listeners = new Set<(id: string) => void>();
  private readonly touchIntervalMs: number;

  constructor(private readonly options: WebSessionsOptions) {
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
    for (const device of options.store.listWebDevices(options.clock.now())) {
      this.byHash.set(device.cookieSha256, {
        id: device.id,
        label: device.id,
        createdAt: device.pairedAt,
        expiresAt: device.expiresAt,
        remembered: true,
        name: device.name,
        userAgent: device.userAgent,
        lastSeenAt: device.lastSeenAt,
      });
      this.persistedSeenAt.set(device.id, device.lastSeenAt);
    }
  }

  /** A new session for a browser that just redeemed a pairing code; the cookie value is returned once. */
  create(params: { remember: boolean; userAgent?: string | undefined }): { cookie: string; session: WebSession } {
    const cookie = Buffer.from(this.options.random(32)).toString('base64url');
    const hash = cookieHash(cookie);
    const now = this.options.clock.now();
    const userAgent = (params.userAgent ?? '').slice(0, MAX_USER_AGENT);
    let id = `d${newApprovalId(this.options.random)}`;
    while (this.findById(id) !== undefined) id = `d${newApprovalId(this.options.random)}`;
    const ttl = params.remember ? this.options.deviceTtlMs() : this.options.sessionTtlMs;
    const session: WebSession = {
      id,
      label: id,
      createdAt: now,
      expiresAt: now + ttl,
      remembered: params.remember,
      name: deviceNameFrom(userAgent),
      userAgent,
      lastSeenAt: now,
    };
    if (params.remember) {
      // Durable before the cookie is handed out: a remembered device the journal does not know would not survive a restart.
      this.options.store.insertWebDevice({
        id,
        cookieSha256: hash,
        name: session.name,
        userAgent,
        pairedAt: now,
        lastSeenAt: now,
        expiresAt: session.expiresAt,
      });
      this.persistedSeenAt.set(id, now);
    }
    this.byHash.set(hash, session);
    return { cookie, session };
  }

  /** The live session a cookie value names, or undefined; notes when it was last seen. */
  find(cookie: string | undefined): WebSession | undefined {
    if (cookie === undefined || cookie === '') return undefined;
    const hash = cookieHash(cookie);
    const session = this.byHash.get(hash);
    if (session === undefined) return undefined;
    const now = this.options.clock.now();
    if (now >= session.expiresAt) {
      this.byHash.delete(hash);
      this.persistedSeenAt.delete(session.id);
      return undefined;
    }
    session.lastSeenAt = Math.max(session.lastSeenAt, now);
    if (session.remembered && now - (this.persistedSeenAt.get(session.id) ?? 0) >= this.touchIntervalMs) {
      this.persistedSeenAt.set(session.id, now);
      try {
        this.options.store.touchWebDevice(session.id, now);
      } catch {
        // Last-seen is a hint for people; a failed write must not refuse the request.
      }
    }
    return session;
  }

  /** Sign-out from the page itself ("Sign out"): the session ends at once, remembered or not. */
  end(cookie: string | undefined): void {
    if (cookie === undefined || cookie === '') return;
    const session = this.byHash.get(cookieHash(cookie));
    if (session !== undefined) this.endSession(session);
  }

  /** Signed-in browsers, oldest first: remembered devices and this run's sessions alike. */
  list(): DeviceInfo[] {
    const now = this.options.clock.now();
    return [...this.byHash.values()]
      .filter((session) => now < session.expiresAt)
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
      .map(infoOf);
  }

  /** Signs one browser out at once (R-REM-3): its next request is 401 and its open event streams end. */
  revoke(id: string): DeviceInfo {
    const session = this.findById(id);
    if (session === undefined || this.options.clock.now() >= session.expiresAt) {
      throw new AssentError('not_found', `no signed-in device with id ${JSON.stringify(id)}; list them with \`assent web devices\``, { details: { id } });
    }
    this.endSession(session);
    return infoOf(session);
  }

  /** Calls `listener` with a session's id when it is revoked or signed out; returns the unsubscribe. */
  onEnded(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get count(): number {
    return this.byHash.size;
  }

  get rememberedCount(): number {
    return [...this.byHash.values()].filter((session) => session.remembered).length;
  }

  private findById(id: string): WebSession | undefined {
    for (const session of this.byHash.values()) if (session.id === id) return session;
    return undefined;
  }

  private endSession(session: WebSession): void {
    // The journal first: when it cannot record the revocation the call fails and nothing pretends
    // otherwise, since a device signed out only in memory would come back at the next restart.
    if (session.remembered) this.options.store.revokeWebDevice(session.id, this.options.clock.now());
    for (const [hash, candidate] of this.byHash) if (candidate === session) this.byHash.delete(hash);
    this.persistedSeenAt.delete(session.id);
    for (const listener of [...this.listeners]) {
      try {
        listener(session.id);
      } catch {
        // One listener failing must not keep the others from ending their streams.
      }
    }
  }
}
