// The gateway's side of the audit spool (SPEC §14 audit durability; the daemon's
// side, which reads it, is operations/auditSpool.ts): an append-only file of its
// own under <ASSENT_HOME>/spool (folder 700, file 600, created new, never through
// a link) that the audit queue writes its records to every few milliseconds. The
// writes go in order through libuv's threads, so a busy disk never stalls a call;
// a line written is in the kernel's hands: a gateway killed -9 right after loses
// none of it, and the daemon audits it when the connection closes. Each write
// is followed by an fdatasync in the background (one at a time, at most once a
// second, none for lines the daemon has read by then), so a machine that loses
// power loses at most about its last second of calls, as before the spool. A file grown past
// ROTATE_BYTES is left for the daemon to read and remove, and a new one begun.
import { randomBytes } from 'node:crypto';
import { errorText } from '../../core/base/errors.js';
import { spoolDirOf } from '../../state/statePaths.js';
import type { Logger } from '../../service/logger.js';

const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

/**
 * The spool is fdatasync'd at most this often, and only while it holds lines the
 * daemon has not read: what a machine that loses power may lose of it (as much as
 * the gateway kept in memory before the spool). Measured: an fdatasync every
 * 50 ms during a burst cost the gateway 5-20 % of its throughput at 32 in flight.
 */
const SYNC_EVERY_MS = 1000;
/** Past this size the file is handed to the daemon to read and remove, and a new one is begun. */
const ROTATE_BYTES = 4 * 1024 * 1024;

/** One spool file and what was written to it: the end of each write and how many lines it held. */
export interface SpoolFile {
  readonly path: string;
  /** Bytes written so far. */
  size: number;
  /** Each write's end offset and line count, oldest first; those the daemon has read are let go. */
  writes: Array<{ end: number; lines: number }>;
}

export interface AuditSpool {
  /** Files the daemon still has to read, oldest first; the last is the one written now. */
  readonly files: readonly SpoolFile[];
  /** Appends lines (each ending in a newline), written in order off the main thread; throws once a write has failed. */
  append(text: string, lines: number): void;
  /** The daemon read `file` up to `offset`; with `removed`, it read all of it and removed it. Returns the lines still unread in all files. */
  read(file: string, offset: number, removed: boolean): number;
  /** Lines written but not read by the daemon yet. */
  readonly unread: number;
  /** Resolves once everything appended so far is in the file (with `synced`, also fdatasync'd). */
  written(synced?: boolean): Promise<void>;
  /** Waits for the last fdatasync, then closes the file. The file stays for the daemon to read. */
  close(): Promise<void>;
}

/**
 * Opens a new spool file in `home`'s spool folder, creating the folder (700)
 * if needed. Returns undefined, and says why on the log, when the folder is
 * not private to this user or the file cannot be made: the gateway then keeps
 * its records in memory until a daemon takes them, as without a spool.
 */
export function openAuditSpool(home: string, logger: Logger, pid: number = process.pid): AuditSpool | undefined {
  const dir = spoolDirOf(home);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
      logger.warn(
        `the audit spool folder ${dir} is not a directory private to this user (mode ${(stat.mode & 0o777).toString(8)}); audit records are kept in memory until the daemon takes them. ` +
          `Fix it with: chmod 700 ${dir}`,
      );
      return undefined;
    }
    return new FileSpool(dir, pid, logger);
  } catch (error) {
    logger.warn(`could not open an audit spool in ${dir}; audit records are kept in memory until the daemon takes them`, { error: errorText(error) });
    return undefined;
  }
}

/** Bytes waiting to be written, to one file descriptor. */
interface PendingWrite {
  fd: number;
  chunks: Buffer[];
}

/** Someone waiting until the appends made so far are written. */
interface WrittenWaiter {
  through: number;
  /** Also wait for the fdatasync of what was written. */
  synced: boolean;
  resolve: () => void;
}

class FileSpool implements AuditSpool {
  readonly files: SpoolFile[] = [];
  private fd: number;
  /** Writes in order, one at a time, off the main thread: a busy disk never stalls the calls. */
  private readonly pending: PendingWrite[] = [];
  private writing = false;
  /** The descriptor of the write in progress. */
  private writingFd: number | undefined;
  private syncing = false;
  private syncTimer: ReturnType<typeof setTimeout> | undefined;
  /** A sync timer ran out: the next sync() syncs (or finds nothing left unread). */
  private syncDue = false;
  private closing = false;
  /** Appends made, and appends whose bytes the kernel has (or whose write failed). */
  private appended = 0;
  private done = 0;
  private waiters: WrittenWaiter[] = [];
  /** File descriptors written since their last fdatasync began. */
  private readonly dirty = new Set<number>();
  /** File descriptors rotated away from, closed once written and synced. */
  private readonly retired = new Set<number>();
  private failure: unknown;
  private unreadLines = 0;

  constructor(
    private readonly dir: string,
    private readonly pid: number,
    private readonly logger: Logger,
  ) {
    this.fd = this.create();
  }

  get unread(): number {
    return this.unreadLines;
  }

  private create(): number {
    const file = path.join(this.dir, `mcp-${this.pid}-${randomBytes(8).toString('hex')}.jsonl`);
    const { O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW } = fs.constants;
    const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW, 0o600);
    this.files.push({ path: file, size: 0, writes: [] });
    return fd;
  }

  append(text: string, lines: number): void {
    if (this.failure !== undefined) throw this.failure;
    const current = this.files[this.files.length - 1] as SpoolFile;
    const bytes = Buffer.from(text, 'utf8');
    current.size += bytes.length;
    current.writes.push({ end: current.size, lines });
    this.unreadLines += lines;
    this.appended += 1;
    const last = this.pending[this.pending.length - 1];
    if (last !== undefined && last.fd === this.fd) last.chunks.push(bytes);
    else this.pending.push({ fd: this.fd, chunks: [bytes] });
    this.pump();
    if (current.size >= ROTATE_BYTES) this.rotate();
  }

  private pump(): void {
    if (this.writing) return;
    const next = this.pending.shift();
    if (next === undefined) return;
    this.writing = true;
    this.writingFd = next.fd;
    const bytes = next.chunks.length === 1 ? (next.chunks[0] as Buffer) : Buffer.concat(next.chunks);
    const write = (offset: number): void => {
      fs.write(next.fd, bytes, offset, bytes.length - offset, null, (error, written) => {
        if (error === null && offset + written < bytes.length) {
          write(offset + written);
          return;
        }
        this.writing = false;
        this.writingFd = undefined;
        this.done += next.chunks.length;
        this.wake();
        if (error !== null) {
          // The lines of this write are lost to the spool; later records stay in memory (append throws from now on).
          this.failure = error;
          this.logger.error('could not write to the audit spool; the calls of the last milliseconds may go unaudited, later ones wait in memory', {
            error: errorText(error),
          });
        } else {
          this.dirty.add(next.fd);
          this.sync();
        }
        this.pump();
      });
    };
    write(0);
  }

  /** One fdatasync at a time, in the background; writes meanwhile are covered by the next one. */
  private sync(): void {
    if (this.syncing || this.syncTimer !== undefined) return;
    const fd = this.dirty.values().next().value;
    if (fd === undefined) {
      this.wake();
      return;
    }
    // Unless closing, an fdatasync comes SYNC_EVERY_MS after the write that needs it (a kill -9 needs none: the kernel
    // has the bytes), and none at all when the daemon has read every line by then: they are in its audit log, which it fsyncs.
    if (!this.closing) {
      if (!this.syncDue) {
        this.syncDue = true;
        this.syncTimer = setTimeout(() => {
          this.syncTimer = undefined;
          this.sync();
        }, SYNC_EVERY_MS);
        this.syncTimer.unref();
        return;
      }
      this.syncDue = false;
      if (this.unreadLines === 0 && this.retired.size === 0) {
        this.dirty.clear();
        this.wake();
        return;
      }
    }
    this.dirty.delete(fd);
    this.syncing = true;
    fs.fdatasync(fd, (error) => {
      if (error) this.logger.debug('fdatasync of the audit spool failed', { error: errorText(error) });
      this.syncing = false;
      if (this.retired.has(fd) && !this.dirty.has(fd) && this.writingFd !== fd && !this.pending.some((write) => write.fd === fd)) {
        this.retired.delete(fd);
        fs.close(fd, () => undefined);
      }
      this.sync();
    });
  }

  /** Wakes who waits for appends now written; with `synced`, only once no fdatasync is left to run either. */
  private wake(): void {
    const settled = !this.syncing && this.dirty.size === 0;
    this.waiters = this.waiters.filter((waiter) => {
      if (this.done < waiter.through || (waiter.synced && !settled)) return true;
      waiter.resolve();
      return false;
    });
  }

  private rotate(): void {
    try {
      const old = this.fd;
      this.fd = this.create();
      this.retired.add(old);
      this.dirty.add(old);
      this.sync();
    } catch (error) {
      this.logger.warn('could not begin a new audit spool file; the current one keeps growing', { error: errorText(error) });
    }
  }

  read(file: string, offset: number, removed: boolean): number {
    const index = this.files.findIndex((spooled) => spooled.path === file);
    if (index === -1) return this.unreadLines;
    const spooled = this.files[index] as SpoolFile;
    while (spooled.writes.length > 0 && (removed || (spooled.writes[0] as { end: number }).end <= offset)) {
      this.unreadLines -= (spooled.writes.shift() as { lines: number }).lines;
    }
    if (removed && index < this.files.length - 1) this.files.splice(index, 1);
    return this.unreadLines;
  }

  written(synced = false): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ through: this.appended, synced, resolve });
      this.wake();
    });
  }

  async close(): Promise<void> {
    await this.written();
    this.closing = true;
    if (this.syncTimer !== undefined) clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    this.dirty.add(this.fd);
    this.sync();
    await this.written(true);
    for (const fd of [...this.retired, this.fd]) {
      try {
        fs.closeSync(fd);
      } catch {
        // Closed already.
      }
    }
    this.retired.clear();
  }
}
