// Reading the audit files forward from a seq (R-AUD-5): what export sinks and
// `assent audit --follow` use. The files are the source of truth, so a reader
// keeps only a hint of where it stopped (file, byte offset, seq) and falls back
// to finding the file by its first line's seq whenever the hint does not fit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lineDigest, listLogFiles, readFirstLine } from './auditChain.js';

/** One complete line of a day file (a torn last line is not returned until its newline is written). */
export interface TailLine {
  seq: number;
  line: string;
  /** The digest the next line names as `prev`. */
  digest: string;
  file: string;
}

interface Hint {
  file: string;
  ino: number;
  offset: number;
  seq: number;
}

const CHUNK = 256 * 1024;
/**
 * How much of a file one read takes: a sink that is far behind (a receiver down for
 * an hour) reads its backlog a window at a time, not the whole rest of the file for
 * every batch, which made catching up quadratic and held the event loop and the heap
 * for the size of the backlog (issue 35's soak: 170 ms per batch of 100 lines with
 * 100,000 lines behind).
 */
const WINDOW = 256 * 1024;

/**
 * The whole lines of `file` from byte `offset`: at most `maxBytes` of them, or the
 * first line alone when it is longer; '' when no newline follows `offset` yet.
 */
async function readFrom(file: string, offset: number, maxBytes: number): Promise<{ text: string; ino: number } | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = await handle.stat();
    if (stat.size <= offset) return { text: '', ino: stat.ino };
    for (let window = maxBytes; ; window *= 2) {
      const length = Math.min(stat.size - offset, window);
      const buffer = Buffer.allocUnsafe(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, Math.min(CHUNK, length - read), offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      // Only whole lines: the bytes after the last newline may be a write still in progress.
      const end = buffer.subarray(0, read).lastIndexOf(0x0a);
      if (end === -1 && read === window) continue; // a line longer than the window: read more of it
      return { text: end === -1 ? '' : buffer.subarray(0, end + 1).toString('utf8'), ino: stat.ino };
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The seq of the last complete line of `file` that has one, read from the end in growing chunks (a day file can be large). */
async function lastSeqOfFile(file: string): Promise<number | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    for (let length = Math.min(size, WINDOW); length > 0; length = Math.min(size, length * 2)) {
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(buffer, 0, length, size - length);
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      // Complete lines end with a newline; the chunk's first line may be cut short unless the chunk starts the file.
      const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n');
      const first = length >= size ? 0 : 1;
      for (let i = lines.length - 1; i >= first; i -= 1) {
        const seq = seqOf(lines[i] ?? '');
        if (seq !== undefined) return seq;
      }
      if (length >= size) return undefined;
    }
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function seqOf(line: string): number | undefined {
  try {
    const parsed = JSON.parse(line) as { seq?: unknown };
    return typeof parsed.seq === 'number' ? parsed.seq : undefined;
  } catch {
    return undefined;
  }
}

/** A forward reader of one audit directory. */
export class AuditTail {
  private hint: Hint | undefined;
  private readonly firstSeqs = new Map<string, { ino: number; seq: number | undefined }>();

  /**
   * `durableSeq`, when given, is the writer's word on how far the files are on
   * disk (AuditLog.durableSeq): a line beyond it may be cut back out by a failed
   * write, so no reader, and no export cursor, goes past it.
   */
  constructor(
    private readonly dir: string,
    private readonly durableSeq?: () => number,
  ) {}

  /** Up to `limit` lines whose seq is above `afterSeq` (and not beyond `durableSeq`), oldest first. Never throws for a missing directory. */
  async linesAfter(afterSeq: number, limit: number): Promise<TailLine[]> {
    const upTo = this.durableSeq?.() ?? Number.POSITIVE_INFINITY;
    if (upTo <= afterSeq) return [];
    let files: string[];
    try {
      files = listLogFiles(this.dir);
    } catch {
      return [];
    }
    const out: TailLine[] = [];
    const hint = this.hint;
    let startIndex: number;
    let offset = 0;
    if (hint !== undefined && hint.seq === afterSeq && files.includes(hint.file)) {
      startIndex = files.indexOf(hint.file);
      offset = hint.offset;
    } else {
      startIndex = await this.fileHolding(files, afterSeq + 1);
    }
    for (let index = startIndex; index < files.length && out.length < limit; index += 1) {
      const name = files[index] ?? '';
      const file = path.join(this.dir, name);
      const from = index === startIndex ? offset : 0;
      let position = from;
      // A window at a time, until the batch is full or the file has no more whole lines.
      while (out.length < limit) {
        const chunk = await readFrom(file, position, WINDOW);
        if (chunk === undefined) break;
        if (position === from && index === startIndex && hint !== undefined && from > 0 && chunk.ino !== hint.ino) {
          // The file was replaced since the hint: start over by seq.
          this.hint = undefined;
          return this.linesAfter(afterSeq, limit);
        }
        if (chunk.text === '') break;
        for (const line of chunk.text.split('\n')) {
          if (out.length >= limit) break;
          const bytes = Buffer.byteLength(line, 'utf8') + 1;
          if (line === '') {
            position += bytes - 1;
            continue;
          }
          position += bytes;
          const seq = seqOf(line);
          if (seq === undefined || seq <= afterSeq) continue;
          if (seq > upTo) return out;
          out.push({ seq, line, digest: lineDigest(line), file: name });
          this.hint = { file: name, ino: chunk.ino, offset: position, seq };
        }
      }
    }
    return out;
  }

  /** The index of the last file whose first line's seq is at most `seq` (0 when none is). */
  private async fileHolding(files: readonly string[], seq: number): Promise<number> {
    let chosen = 0;
    for (let index = 0; index < files.length; index += 1) {
      const first = await this.firstSeq(files[index] ?? '');
      if (first !== undefined && first <= seq) chosen = index;
      if (first !== undefined && first > seq) break;
    }
    return chosen;
  }

  private async firstSeq(name: string): Promise<number | undefined> {
    const file = path.join(this.dir, name);
    let ino: number;
    try {
      ino = (await fs.promises.stat(file)).ino;
    } catch {
      return undefined;
    }
    const cached = this.firstSeqs.get(name);
    if (cached !== undefined && cached.ino === ino && cached.seq !== undefined) return cached.seq;
    let firstLine: string | undefined;
    try {
      firstLine = readFirstLine(file);
    } catch {
      firstLine = undefined;
    }
    const seq = firstLine === undefined ? undefined : seqOf(firstLine);
    this.firstSeqs.set(name, { ino, seq });
    return seq;
  }

  /** The seq of the newest complete line (0 when there is none; never beyond `durableSeq`): how far the files go, for lag. */
  async lastSeq(): Promise<number> {
    return Math.min(await this.lastSeqInFiles(), this.durableSeq?.() ?? Number.POSITIVE_INFINITY);
  }

  private async lastSeqInFiles(): Promise<number> {
    let files: string[];
    try {
      files = listLogFiles(this.dir);
    } catch {
      return 0;
    }
    for (let index = files.length - 1; index >= 0; index -= 1) {
      const seq = await lastSeqOfFile(path.join(this.dir, files[index] ?? ''));
      if (seq !== undefined) return seq;
    }
    return 0;
  }
}
