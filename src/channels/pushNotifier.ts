// Push notifications for new approvals (R-REM-4, R-REM-7): an ntfy publish and
// a webhook post naming who asks, the tool, the approval id, the host and a
// link to the page — never an argument, preview or credential (core/approval/pushMessage.ts
// builds the bodies from those fields alone). Best-effort like the OS notifier:
// notify() only queues; sending happens later on a timer, each request is
// aborted after 5 s, and per target at most one request is in flight and at most
// one starts per 2 s, so a burst becomes one push naming every id. Failures are
// counted per target for daemon status; nothing here throws.
import { realTimers } from '../core/base/timers.js';
import { readFile as fsReadFile } from 'node:fs/promises';
import type { NtfyTarget, WebhookTarget } from '../core/config/notificationsConfig.js';
import { ntfyPublishBody, slackWebhookBody, webhookJsonBody, type PushItem } from '../core/approval/pushMessage.js';
import type { Notifier, NotifierTargetStatus, NotifierTimers } from './notifier.js';

export type PushTargetName = 'ntfy' | 'webhook';

export interface PushTargets {
  ntfy?: NtfyTarget;
  webhook?: WebhookTarget;
}

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal; redirect: 'error' }) => Promise<{ ok: boolean; status: number; body?: { cancel(): Promise<void> } | null }>;

export interface PushNotifierOptions {
  /** The targets in force, read at each push, so a confirmed reload applies to the next one. */
  targets: () => PushTargets;
  /** "The host" a push names: `host.name`, else the OS host name. */
  host: () => string;
  /** The page's root URL links point into: `web.publicUrl`, else the listen URL. */
  pageUrl: () => string;
  fetch?: FetchLike;
  readFile?: (path: string) => Promise<string>;
  timers?: NotifierTimers;
  monotonic?: () => number;
  /** A request still unanswered after this long is aborted and counted as failed; 5 s. */
  timeoutMs?: number;
  /** At most one push starts per target per window; 2 s. */
  windowMs?: number;
  /** Told when a target starts failing (its first failure, or the first after a success), with a short reason. */
  onFailure?: (target: PushTargetName, reason: string) => void;
}

/** Approvals a queued push names; more in one burst are counted, not named, so a push stays small. */
export const MAX_NAMED = 100;

const realFetch: FetchLike = (url, init) => fetch(url, init);

/** Why a request failed, in a few words: never the error's message, which may quote the URL. */
function failureReason(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause !== undefined && typeof cause.code === 'string' && /^[A-Z_]{2,40}$/.test(cause.code)) return `connection failed (${cause.code})`;
  return 'request failed';
}

interface TargetState {
  status: NotifierTargetStatus;
  failing: boolean;
  running: boolean;
  lastStart: number | undefined;
  wake: unknown;
  queued: PushItem[];
  unnamed: number;
}

/** The request one target sends for a burst, or the reason it cannot be sent. */
type PreparedRequest = { url: string; headers: Record<string, string>; body: string } | { error: string };

export function createPushNotifier(options: PushNotifierOptions): Notifier {
  const fetchImpl = options.fetch ?? realFetch;
  const readFile = options.readFile ?? ((path: string) => fsReadFile(path, 'utf8'));
  const timers = options.timers ?? realTimers;
  const monotonic = options.monotonic ?? (() => performance.now());
  const timeoutMs = options.timeoutMs ?? 5_000;
  const windowMs = options.windowMs ?? 2_000;
  const states = new Map<PushTargetName, TargetState>();

  const stateOf = (name: PushTargetName): TargetState => {
    let state = states.get(name);
    if (state === undefined) {
      state = { status: { sent: 0, failures: 0 }, failing: false, running: false, lastStart: undefined, wake: undefined, queued: [], unnamed: 0 };
      states.set(name, state);
    }
    return state;
  };

  const fail = (name: PushTargetName, state: TargetState, reason: string): void => {
    state.status.failures += 1;
    state.status.lastFailure = reason;
    if (!state.failing) {
      state.failing = true;
      try {
        options.onFailure?.(name, reason);
      } catch {
        // A logging hook never breaks a push.
      }
    }
  };

  const prepare = async (name: PushTargetName, items: PushItem[], unnamed: number): Promise<PreparedRequest | undefined> => {
    const targets = options.targets();
    const ctx = { host: options.host(), pageUrl: options.pageUrl(), unnamed };
    if (name === 'ntfy') {
      const target = targets.ntfy;
      if (target === undefined) return undefined;
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (target.tokenFile !== undefined) {
        let token: string;
        try {
          token = (await readFile(target.tokenFile)).trim();
        } catch {
          return { error: 'notifications.ntfy.tokenFile could not be read' };
        }
        if (!/^[\x21-\x7e]{1,4096}$/.test(token)) return { error: 'notifications.ntfy.tokenFile does not hold one token on one line' };
        headers['Authorization'] = `Bearer ${token}`;
      }
      return { url: target.url, headers, body: JSON.stringify(ntfyPublishBody(target.topic, items, ctx)) };
    }
    const target = targets.webhook;
    if (target === undefined) return undefined;
    const body = target.format === 'slack' ? slackWebhookBody(items, ctx) : webhookJsonBody(items, ctx);
    return { url: target.url, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  };

  const send = async (name: PushTargetName, state: TargetState, items: PushItem[], unnamed: number): Promise<void> => {
    const prepared = await prepare(name, items, unnamed);
    if (prepared === undefined) return; // The target was removed by a reload; nothing to send.
    if ('error' in prepared) {
      fail(name, state, prepared.error);
      return;
    }
    const abort = new AbortController();
    let timedOut = false;
    const watchdog = timers.setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    try {
      const response = await fetchImpl(prepared.url, { method: 'POST', headers: prepared.headers, body: prepared.body, signal: abort.signal, redirect: 'error' });
      // The answer's body is not needed; dropping it frees the connection.
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) {
        state.status.sent += 1;
        state.failing = false;
      } else {
        fail(name, state, `HTTP ${response.status}`);
      }
    } catch (error) {
      fail(name, state, failureReason(error, timedOut, timeoutMs));
    } finally {
      timers.clearTimeout(watchdog);
    }
  };

  const launch = (name: PushTargetName, state: TargetState): void => {
    const items = state.queued;
    const unnamed = state.unnamed;
    state.queued = [];
    state.unnamed = 0;
    state.running = true;
    state.lastStart = monotonic();
    send(name, state, items, unnamed)
      .catch(() => fail(name, state, 'request failed'))
      .finally(() => {
        state.running = false;
        try {
          schedule(name, state);
        } catch {
          state.status.failures += 1;
        }
      });
  };

  // Starts the next push when none is in flight and the window since the last start has passed;
  // always on a timer, so the call that filed the approval never waits for any of it.
  function schedule(name: PushTargetName, state: TargetState): void {
    if (state.running || state.wake !== undefined || (state.queued.length === 0 && state.unnamed === 0)) return;
    const waitMs = state.lastStart === undefined ? 0 : Math.max(0, state.lastStart + windowMs - monotonic());
    state.wake = timers.setTimeout(() => {
      state.wake = undefined;
      try {
        launch(name, state);
      } catch {
        state.status.failures += 1;
      }
    }, waitMs);
  }

  const names = (): PushTargetName[] => {
    const targets = options.targets();
    return (['ntfy', 'webhook'] as const).filter((name) => targets[name] !== undefined);
  };

  return {
    notify(notification) {
      try {
        if (notification.approvalId === undefined) return;
        const item: PushItem = { approvalId: notification.approvalId };
        if (notification.agent !== undefined) item.agent = notification.agent;
        if (notification.server !== undefined) item.server = notification.server;
        if (notification.tool !== undefined) item.tool = notification.tool;
        if (notification.risk !== undefined) item.risk = notification.risk;
        for (const name of names()) {
          const state = stateOf(name);
          if (state.queued.length < MAX_NAMED) state.queued.push(item);
          else state.unnamed += 1;
          schedule(name, state);
        }
      } catch {
        // The targets could not be read (a broken config in memory): count it against each known target.
        for (const state of states.values()) state.status.failures += 1;
      }
    },
    get sent() {
      let sum = 0;
      for (const state of states.values()) sum += state.status.sent;
      return sum;
    },
    get failures() {
      let sum = 0;
      for (const state of states.values()) sum += state.status.failures;
      return sum;
    },
    targets() {
      const out: Record<string, NotifierTargetStatus> = {};
      let configured: PushTargetName[];
      try {
        configured = names();
      } catch {
        configured = [];
      }
      // A configured target shows in status from the start, with zero counts.
      for (const name of configured) stateOf(name);
      for (const [name, state] of states) out[name] = { ...state.status };
      return out;
    },
  };
}
