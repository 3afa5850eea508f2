// Reading the audit log back: verifying its chain link by link (R-AUD-2),
// exporting its records oldest first, and rendering them as CSV.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AUDIT_GENESIS, dayOf, lineDigest, listLogFiles, readAnchor, splitLines, type ChainState } from './auditChain.js';
import { AUDIT_FIELDS, sanitizeAuditRecord, type AuditRecord } from './auditRecords.js';

export interface AuditVerification {
  ok: boolean;
  /** Lines verified intact (before the first broken one). */
  lines: number;
  /** `fix` says what to do: `assent audit repair` for a torn last line, else how to investigate. */
  firstBroken?: { file: string; line: number; reason: string; fix?: string };
}

/** What to do about a break that is not a torn last line: nothing assent can repair without hiding it. */
const INVESTIGATE =
  'this is not a write torn by a crash, and `assent audit repair` does not touch it: keep the files as they are, compare them with an exported copy (audit.export, docs/audit.md) and find out who changed them';
const REPAIR_TORN = 'run `assent audit repair` in your terminal: it keeps a copy of the file, cuts the torn line and records the cut in the chain';

/** Whether a line parses as a JSON object whose prev is `digest`: the writer chained it over the line before. */
function namesAsPrev(line: string | undefined, digest: string): boolean {
  if (line === undefined) return false;
  try {
    return (JSON.parse(line) as { prev?: unknown } | null)?.prev === digest;
  } catch {
    return false;
  }
}

/**
 * Checks every link of the chain in file order (R-AUD-2): each line parses,
 * its seq follows the previous one and its prev is the digest of the previous
 * line's exact text. Reports the first broken line (file name and 1-based line):
 * when only a `prev` link fails, that is the line before it, whose text changed.
 */
export function verifyAudit(dir: string): AuditVerification {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return { ok: true, lines: 0 };
  }
  // `expected` is what the next line must carry; the anchor says where a pruned log starts.
  let expected: ChainState = readAnchor(dir) ?? { seq: 1, prev: AUDIT_GENESIS };
  let count = 0;
  let last: { file: string; line: number } | undefined;
  for (const [fileIndex, file] of files.entries()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const lines = splitLines(text);
    for (let index = 0; index < lines.length; index += 1) {
      const line = lines[index] ?? '';
      const here = { file, line: index + 1 };
      const broken = (at: { file: string; line: number }, reason: string, fix = INVESTIGATE): AuditVerification => ({
        ok: false,
        lines: count,
        firstBroken: { ...at, reason, fix },
      });
      let parsed: { seq?: unknown; prev?: unknown };
      try {
        parsed = JSON.parse(line) as { seq?: unknown; prev?: unknown };
      } catch {
        const bytes = Buffer.byteLength(line);
        if (fileIndex === files.length - 1 && index === lines.length - 1) {
          const shape = text.endsWith('\n') ? 'it ends in a newline but is no whole record' : 'no newline, its JSON cut short';
          return broken(here, `torn last line: not valid JSON (${bytes} bytes, ${shape}), as a write interrupted by a crash or power loss leaves it`, REPAIR_TORN);
        }
        if (namesAsPrev(lines[index + 1], lineDigest(line))) {
          return broken(
            here,
            `not valid JSON (${bytes} bytes), and the next line names its digest as prev: a write torn by a crash that the writer then chained over`,
            'it cannot be cut out without breaking the next link, and `assent audit repair` leaves it; keep the files as they are (an exported copy, audit.export, holds the lines after it)',
          );
        }
        return broken(here, 'not valid JSON (edited or torn write)');
      }
      if (parsed === null || typeof parsed !== 'object') return broken(here, 'not a JSON object');
      if (parsed.seq !== expected.seq) {
        return broken(here, `seq is ${String(parsed.seq)}, expected ${expected.seq}: a line before it was removed or one was inserted here`);
      }
      if (parsed.prev !== expected.prev) {
        // Sequence numbers run on, so nothing was removed: the line before was edited after it was written.
        if (last !== undefined) {
          count -= 1;
          return broken(last, `changed after it was written: its digest no longer matches the prev recorded by the next line (${file}:${index + 1})`);
        }
        return broken(here, `prev does not match the start of the retained chain (${expected.prev}); earlier lines were removed or this line was changed`);
      }
      count += 1;
      last = here;
      expected = { seq: expected.seq + 1, prev: lineDigest(line) };
    }
  }
  return { ok: true, lines: count };
}

/** Reads records back (without seq/prev), oldest first; `since` is epoch ms compared with each record's ts. */
export function exportAudit(dir: string, options: { since?: number } = {}): AuditRecord[] {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return [];
  }
  const since = options.since;
  if (since !== undefined) {
    const firstDay = dayOf(since);
    files = files.filter((name) => name.slice(0, 10) >= firstDay);
  }
  const out: AuditRecord[] = [];
  for (const file of files) {
    for (const line of splitLines(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      if (parsed === null || typeof parsed !== 'object') continue;
      const record = sanitizeAuditRecord(parsed as AuditRecord);
      if (since !== undefined && !(Date.parse(record.ts) >= since)) continue;
      out.push(record);
    }
  }
  return out;
}

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // A spreadsheet would run a cell starting with = + - @ as a formula.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** CSV with a header row of the R-AUD-1 field names; `caller` is a JSON cell. */
export function auditToCsv(records: readonly AuditRecord[]): string {
  const rows = [AUDIT_FIELDS.join(',')];
  for (const record of records) {
    const source = record as unknown as Record<string, unknown>;
    rows.push(AUDIT_FIELDS.map((field) => csvCell(source[field])).join(','));
  }
  return `${rows.join('\n')}\n`;
}

/** The lines of the log whose seq is above `afterSeq`, oldest first, exactly as written (team mode copies them to the database). */
export function readAuditLines(dir: string, afterSeq: number): { seq: number; ts: string; line: string }[] {
  let files: string[];
  try {
    files = listLogFiles(dir);
  } catch {
    return [];
  }
  const out: { seq: number; ts: string; line: string }[] = [];
  for (const file of files) {
    for (const line of splitLines(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      let parsed: { seq?: unknown; ts?: unknown };
      try {
        parsed = JSON.parse(line) as { seq?: unknown; ts?: unknown };
      } catch {
        continue;
      }
      if (typeof parsed.seq === 'number' && parsed.seq > afterSeq) out.push({ seq: parsed.seq, ts: typeof parsed.ts === 'string' ? parsed.ts : '', line });
    }
  }
  return out;
}

export interface HostChainVerification {
  hostId: string;
  ok: boolean;
  lines: number;
  firstBroken?: { seq: number; reason: string };
}

/**
 * R-TEAM-4: recomputes one host's chain from its rows in the team database,
 * in seq order: the rows start at seq 1 with the genesis prev (a host copies
 * its whole file when it joins the team), every seq follows the one before, and
 * every prev is the digest of the exact text of the row before it. Reports the
 * first broken link.
 */
export function verifyAuditRows(hostId: string, rows: readonly { seq: number; line: string }[]): HostChainVerification {
  let previous: { seq: number; line: string } | undefined;
  let count = 0;
  const broken = (seq: number, reason: string): HostChainVerification => ({ hostId, ok: false, lines: count, firstBroken: { seq, reason } });
  for (const row of rows) {
    let parsed: { seq?: unknown; prev?: unknown };
    try {
      parsed = JSON.parse(row.line) as { seq?: unknown; prev?: unknown };
    } catch {
      return broken(row.seq, 'not valid JSON (the row was edited)');
    }
    if (parsed === null || typeof parsed !== 'object' || parsed.seq !== row.seq) return broken(row.seq, `the line's seq is ${String((parsed as { seq?: unknown } | null)?.seq)}, not the row's ${row.seq}`);
    if (previous === undefined) {
      if (row.seq !== 1) return broken(row.seq, `seq 1 to ${row.seq - 1} are missing: a host's rows start at seq 1, so rows were removed`);
      if (parsed.prev !== AUDIT_GENESIS) return broken(row.seq, 'the first line does not start the chain at genesis');
    } else if (row.seq !== previous.seq + 1) {
      return broken(row.seq, `seq ${previous.seq + 1} to ${row.seq - 1} are missing: rows were removed`);
    } else if (parsed.prev !== lineDigest(previous.line)) {
      count -= 1;
      return broken(previous.seq, `changed after it was written: its digest no longer matches the prev recorded by seq ${row.seq}`);
    }
    count += 1;
    previous = row;
  }
  return { hostId, ok: true, lines: count };
}
