// The audit chain on disk (R-AUD-2): day files, the anchor pruning leaves, each
// line's digest, and where the chain continues after the last line written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nativeSha256Hex } from './nativeHash.js';

/** `prev` of the very first line of a log. */
export const AUDIT_GENESIS = `v1:sha256:${'0'.repeat(64)}`;

/** Written by pruning: where the retained chain starts once older files are gone. */
const ANCHOR_FILE = 'anchor.json';
const FILE_PATTERN = /^\d{4}-\d{2}-\d{2}\.jsonl$/;
export const NEWLINE = 0x0a;

/**
 * A point in the chain: the last line's `seq` and the digest its successor names
 * as `prev`; in the anchor, the first kept line's own `seq` and `prev`.
 */
export interface ChainState {
  seq: number;
  prev: string;
}

/** The digest a line's successor names as `prev`: over the exact text of the line, without its newline. */
export function lineDigest(line: string): string {
  return `v1:sha256:${nativeSha256Hex(line)}`;
}

/** The UTC day a time falls on, as a day file names it (`YYYY-MM-DD`). */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The day files in `dir`, oldest first. */
export function listLogFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => FILE_PATTERN.test(name))
    .sort();
}

/** A file's lines, without the empty string after a final newline. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Where a pruned chain starts, or undefined when nothing was pruned. */
export function readAnchor(dir: string): ChainState | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(dir, ANCHOR_FILE), 'utf8')) as Partial<ChainState>;
    if (typeof value.seq === 'number' && typeof value.prev === 'string') return { seq: value.seq, prev: value.prev };
  } catch {
    // No anchor: the chain starts at genesis.
  }
  return undefined;
}

/** How much of a day file is read at a time when only its first or last lines are needed. */
const EDGE_CHUNK = 64 * 1024;

/**
 * The last two lines of a file (`last` may be torn) and whether it ends with a
 * newline, read from the end in growing chunks: a day file can be large, and
 * this runs on start and after a failed write, on the daemon's event loop.
 */
function readLastLines(file: string): { last?: string; before?: string; endsWithNewline: boolean } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    for (let length = Math.min(size, EDGE_CHUNK); ; length = Math.min(size, length * 2)) {
      const buffer = Buffer.alloc(length);
      const read = fs.readSync(fd, buffer, 0, length, size - length);
      // A chunk that starts inside a character garbles only its first, partial line, which is never used.
      const text = buffer.subarray(0, read).toString('utf8');
      const lines = splitLines(text);
      const whole = length >= size;
      if (whole || lines.length >= 3) {
        const last = lines[lines.length - 1];
        const before = lines.length >= 2 ? lines[lines.length - 2] : undefined;
        const result: { last?: string; before?: string; endsWithNewline: boolean } = { endsWithNewline: text.endsWith('\n') };
        if (last !== undefined) result.last = last;
        if (before !== undefined) result.before = before;
        return result;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The first line of a file (undefined when empty), read from the start in growing chunks. */
export function readFirstLine(file: string): string | undefined {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    for (let length = Math.min(size, EDGE_CHUNK); ; length = Math.min(size, length * 2)) {
      const buffer = Buffer.alloc(length);
      const read = fs.readSync(fd, buffer, 0, length, 0);
      const newline = buffer.subarray(0, read).indexOf(NEWLINE);
      if (newline !== -1 || length >= size) return read === 0 ? undefined : buffer.subarray(0, newline === -1 ? read : newline).toString('utf8');
    }
  } finally {
    fs.closeSync(fd);
  }
}

function seqOf(line: string | undefined): number | undefined {
  if (line === undefined) return undefined;
  try {
    const parsed = JSON.parse(line) as { seq?: unknown };
    return typeof parsed.seq === 'number' ? parsed.seq : undefined;
  } catch {
    return undefined;
  }
}

/** The seq of a day file's last line, or undefined when it has none readable. */
export function lastSeqOfFile(file: string): number | undefined {
  const tail = readLastLines(file);
  return seqOf(tail.last) ?? seqOf(tail.before);
}

/** Reads where the chain continues: the last line of the newest file, else the anchor, else genesis. */
export function loadChainState(dir: string): { state: ChainState; lastDay: string; tornTail: boolean } {
  const files = listLogFiles(dir);
  for (let i = files.length - 1; i >= 0; i -= 1) {
    const name = files[i] ?? '';
    const file = path.join(dir, name);
    const tail = readLastLines(file);
    const last = tail.last;
    if (last === undefined) continue;
    // A torn or edited last line still anchors the chain (verify reports it); its seq follows the line before.
    const before = seqOf(tail.before);
    const seq = seqOf(last) ?? (before !== undefined ? before + 1 : splitLines(fs.readFileSync(file, 'utf8')).length);
    return { state: { seq, prev: lineDigest(last) }, lastDay: name.slice(0, 10), tornTail: !tail.endsWithNewline };
  }
  const anchor = readAnchor(dir);
  const state = anchor === undefined ? { seq: 0, prev: AUDIT_GENESIS } : { seq: anchor.seq - 1, prev: anchor.prev };
  return { state, lastDay: '', tornTail: false };
}

/** Records where the retained chain starts (written whole, then renamed over the old anchor). */
export function writeAnchor(dir: string, anchor: ChainState): void {
  const tmp = path.join(dir, `${ANCHOR_FILE}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(anchor)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, path.join(dir, ANCHOR_FILE));
}
