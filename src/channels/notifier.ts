// Best-effort OS notifications for new approvals (R-D-10). They name the tool
// and the approval id, never an argument or any authority. A notifier never
// blocks the call path and never throws; failures are only counted.
import { spawn as nodeSpawn } from 'node:child_process';

export interface Notification {
  title: string;
  body: string;
}

export interface Notifier {
  notify(notification: Notification): void;
  readonly sent: number;
  readonly failures: number;
}

export type SpawnLike = typeof nodeSpawn;

export interface OsNotifierOptions {
  platform?: NodeJS.Platform;
  spawn?: SpawnLike;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
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
  let sent = 0;
  let failures = 0;
  return {
    notify(notification) {
      const command = commandFor(platform, notification);
      if (command === undefined) {
        failures += 1;
        return;
      }
      try {
        const child = spawn(command.file, command.args, {
          stdio: 'ignore',
          env: options.env ?? process.env,
          timeout: timeoutMs,
        });
        child.once('error', () => {
          failures += 1;
        });
        child.once('exit', (code) => {
          if (code === 0) sent += 1;
          else failures += 1;
        });
        child.unref();
      } catch {
        failures += 1;
      }
    },
    get sent() {
      return sent;
    },
    get failures() {
      return failures;
    },
  };
}

/** A notifier that does nothing; `notifications: false`. */
export const disabledNotifier: Notifier = { notify: () => undefined, sent: 0, failures: 0 };
