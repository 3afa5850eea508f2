// The lines the reload diff (R-CFG-4) writes for values taken from config.json:
// every value is escaped JSON (R-TTY-3), since an agent may have written the file.
import { escapedJson, escapeText } from '../base/escape.js';

/** A value from the file, rendered terminal-safe; `(unset)` when absent. */
export function shownValue(value: unknown): string {
  return value === undefined ? '(unset)' : escapedJson(value);
}

/** One line per key of a keyed map (tool ids, quorum entries) that was added, removed or changed, in key order. */
export function keyedChanges(prefix: string, a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): string[] {
  const lines: string[] = [];
  for (const id of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const before = a[id];
    const after = b[id];
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    const key = `${prefix}.${escapeText(id)}`;
    if (before === undefined) lines.push(`${key}: added ${shownValue(after)}`);
    else if (after === undefined) lines.push(`${key}: removed (was ${shownValue(before)})`);
    else lines.push(`${key}: ${shownValue(before)} → ${shownValue(after)}`);
  }
  return lines;
}
