// Best-effort OS notifications for new approvals (R-D-10). They name the tool
// and the approval id, never an argument or any authority. A notifier never
// blocks the call path and never throws; failures are only counted. Bursts are
// coalesced (hardening 3): at most one notifier process runs at a time and at
// most one starts per window; requests that arrive meanwhile are announced
// together by one summary naming their count and the newest ids.
import { realTimers, type Timers } from '../core/base/timers.js';
import { spawn as nodeSpawn } from 'node:child_process';
import type { RiskFlag, RiskLevel } from '../core/approval/approvalRisk.js';

export interface Notification {
  title: string;
  body: string;
  /** The approval announced; a summary of a burst names the newest of these. */
  approvalId?: string;
  /** Who asks and for what, for a push (R-REM-4): the agent of an agent action, the server alias, the tool. */
  agent?: string;
  server?: string;
  tool?: string;
  /** The risk level and the flags that raised it (R-POL-10), for a push's title; never a detail naming the command. */
  risk?: { level: RiskLevel; flags: RiskFlag[] };
}

/** What one target (the OS notifier, ntfy, a webhook) has done since the daemon started. */
export interface NotifierTargetStatus {
  sent: number;
  failures: number;
  /** Why the newest failure happened, in a few words (never a URL, topic or token). */
  lastFailure?: string;
}

export interface Notifier {
  notify(notification: Notification): void;
  readonly sent: number;
  readonly failures: number;
  /** Why the newest failure happened, in a few words (the OS notifier: e.g. `notify-send is not installed`). */
  readonly lastFailure?: string;
  /** Counters per target, for daemon status, when the notifier fans out. */
  targets?(): Record<string, NotifierTargetStatus>;
}

export type SpawnLike = typeof nodeSpawn;

/** The timers the notifier waits with (the approval service's Timers fit). */
export type NotifierTimers = Timers;

export interface OsNotifierOptions {
  platform?: NodeJS.Platform;
  spawn?: SpawnLike;
  env?: NodeJS.ProcessEnv;
  /** A notifier process still running after this long is killed and counted as failed; 5 s. */
  timeoutMs?: number;
  /** At most one notifier process starts per window; 2 s. */
  windowMs?: number;
  timers?: NotifierTimers;
  monotonic?: () => number;
}

/** Ids a summary names, newest first; the rest are only counted, so the text stays short. */
export const SUMMARY_IDS = 5;

/** What one notifier process announces: the request itself, or a count and the newest ids. */
export function summarizeBurst(first: Notification, count: number, newestIds: readonly string[]): Notification {
  if (count === 1) return first;
  const named = newestIds.length === 0 ? '' : ` Newest: ${newestIds.join(', ')}${count > newestIds.length ? ` and ${count - newestIds.length} more` : ''}.`;
  return { title: `assent: ${count} more approvals waiting`, body: `${count} approval requests came in since the last notification.${named} Run: assent pending` };
}

function commandFor(platform: NodeJS.Platform, n: Notification): { file: string; args: string[] } | undefined {
  if (platform === 'linux' || platform === 'freebsd' || platform === 'openbsd') {
    return { file: 'notify-send', args: ['--app-name=assent', n.title, n.body] };
  }
  if (platform === 'darwin') {
    const quote = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;
    return { file: 'osascript', args: ['-e', `display notification ${quote(n.body)} with title ${quote(n.title)}`] };
  }
  if (platform === 'win32') {
    const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
    const script =
      '[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null;' +
      '$t = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02);' +
      `$x = $t.GetElementsByTagName('text'); $x.Item(0).AppendChild($t.CreateTextNode(${quote(n.title)})) > $null;` +
      `$x.Item(1).AppendChild($t.CreateTextNode(${quote(n.body)})) > $null;` +
      "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('assent').Show([Windows.UI.Notifications.ToastNotification]::new($t))";
    return { file: 'powershell.exe', args: ['-NoProfile', '-NonInteractive', '-Command', script] };
  }
  return undefined;
}

export function createOsNotifier(options: OsNotifierOptions = {}): Notifier {
  const platform = options.platform ?? process.platform;
  const spawn = options.spawn ?? nodeSpawn;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const windowMs = options.windowMs ?? 2_000;
  const timers = options.timers ?? realTimers;
  const monotonic = options.monotonic ?? (() => performance.now());
  let sent = 0;
  let failures = 0;
  let lastFailure: string | undefined;
  const fail = (why: string): void => {
    failures += 1;
    lastFailure = why;
  };
  let running = false;
  let lastStart: number | undefined;
  let wake: unknown;
  // The requests not yet announced: the oldest as it was, a count and the newest ids.
  let first: Notification | undefined;
  let count = 0;
  let newestIds: string[] = [];

  const launch = (notification: Notification): void => {
    const command = commandFor(platform, notification);
    if (command === undefined) {
      fail(`no desktop notifier is known for ${platform}`);
      return;
    }
    running = true;
    lastStart = monotonic();
    let settled = false;
    let child: ReturnType<SpawnLike> | undefined;
    const settle = (ok: boolean, why = `${command.file} failed`): void => {
      if (settled) return;
      settled = true;
      timers.clearTimeout(watchdog);
      if (ok) sent += 1;
      else fail(why);
      running = false;
      try {
        schedule();
      } catch {
        fail('internal error while scheduling the next notification');
      }
    };
    // spawn's own timeout sends SIGTERM; a child that ignores it is killed and given up here.
    const watchdog = timers.setTimeout(() => {
      try {
        child?.kill('SIGKILL');
      } catch {
        // Already gone.
      }
      settle(false, `${command.file} did not finish within ${Math.round(timeoutMs / 1000)} s`);
    }, timeoutMs + 1_000);
    const notStarted = (error: unknown): string => {
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      return code === 'ENOENT' ? `${command.file} is not installed (not found on PATH)` : `${command.file} could not be started (${code ?? String(error)})`;
    };
    try {
      child = spawn(command.file, command.args, { stdio: 'ignore', env: options.env ?? process.env, timeout: timeoutMs });
      child.once('error', (error) => settle(false, notStarted(error)));
      child.once('exit', (code, signal) => settle(code === 0, code === null ? `${command.file} was stopped by ${signal ?? 'a signal'}` : `${command.file} exited with ${code}`));
      child.unref();
    } catch (error) {
      settle(false, notStarted(error));
    }
  };

  const flush = (): void => {
    if (first === undefined) return;
    const notification = summarizeBurst(first, count, newestIds);
    first = undefined;
    count = 0;
    newestIds = [];
    launch(notification);
  };

  // Starts the next process when none runs and the window since the last start has passed.
  function schedule(): void {
    if (running || wake !== undefined || first === undefined) return;
    const waitMs = lastStart === undefined ? 0 : lastStart + windowMs - monotonic();
    if (waitMs <= 0) {
      flush();
      return;
    }
    // Nothing else starts a process while this waits, so when it fires the window is over.
    wake = timers.setTimeout(() => {
      wake = undefined;
      try {
        flush();
      } catch {
        fail('internal error while sending a notification');
      }
    }, waitMs);
  }

  return {
    notify(notification) {
      try {
        first ??= notification;
        count += 1;
        if (notification.approvalId !== undefined) newestIds = [notification.approvalId, ...newestIds].slice(0, SUMMARY_IDS);
        schedule();
      } catch {
        fail('internal error while queueing a notification');
      }
    },
    get sent() {
      return sent;
    },
    get failures() {
      return failures;
    },
    get lastFailure() {
      return lastFailure;
    },
  };
}

/** A notifier that does nothing; `notifications: false`. */
export const disabledNotifier: Notifier = { notify: () => undefined, sent: 0, failures: 0 };

/**
 * One notifier over several (the OS one and the pushes): each is told of every
 * request; the counters are their sums, and `targets` names each.
 */
export function combineNotifiers(parts: Record<string, Notifier>): Notifier {
  const entries = Object.entries(parts);
  return {
    notify(notification) {
      for (const [, part] of entries) {
        try {
          part.notify(notification);
        } catch {
          // A notifier never throws; should one, the others are still told.
        }
      }
    },
    get sent() {
      return entries.reduce((sum, [, part]) => sum + part.sent, 0);
    },
    get failures() {
      return entries.reduce((sum, [, part]) => sum + part.failures, 0);
    },
    targets() {
      const out: Record<string, NotifierTargetStatus> = {};
      for (const [name, part] of entries) {
        if (part.targets !== undefined) Object.assign(out, part.targets());
        else if (part !== disabledNotifier) out[name] = { sent: part.sent, failures: part.failures, ...(part.lastFailure === undefined ? {} : { lastFailure: part.lastFailure }) };
      }
      return out;
    },
  };
}
