// `assent audit --follow [--json]` (R-AUD-5): streams audit lines as they are
// written, straight from the day files (the source of truth), so it keeps going
// across a new day's file and across daemon restarts alike. NDJSON under --json
// (each line as written, with its seq and prev); a short line per record otherwise.
import { watch, type FSWatcher } from 'node:fs';
import { AuditTail } from '../../../journal/auditTail.js';
import { auditLineText } from '../auditLine.js';

export interface FollowOptions {
  dir: string;
  json: boolean;
  /** Epoch ms: start with the records at or after it; else only records written from now on. */
  since?: number;
  write?: (text: string) => boolean;
  signal?: AbortSignal;
  /** How often the files are looked at even without a change notice. */
  pollMs?: number;
}

function humanLine(record: Record<string, unknown>): string {
  return `${auditLineText(record)}\n`;
}

/** Runs until the signal aborts (SIGINT/SIGTERM in the CLI) or stdout closes. */
export async function followAudit(options: FollowOptions): Promise<void> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const tail = new AuditTail(options.dir);
  let cursor = options.since === undefined ? await tail.lastSeq() : 0;
  let wake: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  const startWatch = (): void => {
    if (watcher !== undefined) return;
    try {
      watcher = watch(options.dir, { persistent: false }, () => wake?.());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined; // No directory yet: the poll finds it.
    }
  };
  let stopped = options.signal?.aborted === true;
  let outputClosed = false;
  const onAbort = (): void => {
    stopped = true;
    wake?.();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  process.stdout.once('error', () => {
    outputClosed = true;
    wake?.();
  });
  try {
    while (!stopped && !outputClosed) {
      startWatch();
      for (;;) {
        const lines = await tail.linesAfter(cursor, 500);
        if (lines.length === 0) break;
        for (const { seq, line } of lines) {
          cursor = seq;
          let record: Record<string, unknown>;
          try {
            record = JSON.parse(line) as Record<string, unknown>;
          } catch {
            continue;
          }
          if (options.since !== undefined && !(Date.parse(String(record['ts'])) >= options.since)) continue;
          write(options.json ? `${line}\n` : humanLine(record));
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs ?? 250);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    watcher?.close();
    options.signal?.removeEventListener('abort', onAbort);
  }
}
