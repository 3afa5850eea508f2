// Settings a running daemon fixes when it starts (R-CFG-4): where its store
// lives, this host's name, the OS notifier and the audit retention. A confirmed
// reload records them, but they are used from the next daemon start; the
// reload diff says so on each line, and `daemon status` lists what waits.
import type { Config } from './config.js';

/** The words the reload diff appends to a line about such a setting. */
export const FROM_NEXT_START = '(from the next daemon start)';

const FIXED_AT_START: readonly { key: string; of: (config: Config) => unknown }[] = [
  { key: 'journal', of: (config) => config.journal },
  { key: 'host.name', of: (config) => config.host.name },
  { key: 'notifications.os', of: (config) => config.notifications.os },
  { key: 'auditRetentionDays', of: (config) => config.auditRetentionDays },
];

/** The keys of settings that differ between what the daemon started with and the configuration now confirmed. */
export function settingsFromNextStart(running: Config, confirmed: Config): string[] {
  return FIXED_AT_START.filter(({ of }) => JSON.stringify(of(running)) !== JSON.stringify(of(confirmed))).map(({ key }) => key);
}

/** A reload diff line marked when it is about a setting fixed at start. */
export function markFromNextStart(line: string): string {
  const fixed = FIXED_AT_START.some(({ key }) => line.startsWith(`${key}:`));
  return fixed && !line.endsWith(FROM_NEXT_START) ? `${line} ${FROM_NEXT_START}` : line;
}
