// The gateway's side of the audit spool (SPEC §14 audit durability; the daemon's
// side, which reads it, is operations/auditSpool.ts): an append-only file of its
// own under <ASSENT_HOME>/spool (folder 700, file 600, created new, never through
// a link) that the audit queue writes its records to every few milliseconds. A
// line written is in the kernel's hands: a gateway killed -9 right after loses
// none of it, and the daemon audits it when the connection closes. Each write
// is followed by an fdatasync in the background (at most one at a time), so a
// machine that loses power loses at most the last batches. A file grown past
// ROTATE_BYTES is left for the daemon to read and remove, and a new one begun.
import { randomBytes } from 'node:crypto';
import { errorText } from '../../core/base/errors.js';
import { spoolDirOf } from '../../operations/auditSpool.js';
import type { Logger } from '../../service/logger.js';

const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

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
  /** Appends lines (each ending in a newline) in one write; throws when the file cannot be written. */
  append(text: string, lines: number): void;
  /** The daemon read `file` up to `offset`; with `removed`, it read all of it and removed it. Returns the lines still unread in all files. */
  read(file: string, offset: number, removed: boolean): number;
  /** Lines written but not read by the daemon yet. */
  readonly unread: number;
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

class FileSpool implements AuditSpool {
  readonly files: SpoolFile[] = [];
  private fd: number;
  private syncing: Promise<void> | undefined;
  private dirty = false;
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
    const current = this.files[this.files.length - 1] as SpoolFile;
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < bytes.length) written += fs.writeSync(this.fd, bytes, written, bytes.length - written);
    current.size += bytes.length;
    current.writes.push({ end: current.size, lines });
    this.unreadLines += lines;
    this.sync();
    if (current.size >= ROTATE_BYTES) this.rotate();
  }

  /** One fdatasync at a time in the background; writes meanwhile are covered by the next one. */
  private sync(): void {
    if (this.syncing !== undefined) {
      this.dirty = true;
      return;
    }
    const fd = this.fd;
    this.syncing = new Promise<void>((resolve) => {
      fs.fdatasync(fd, (error) => {
        if (error) this.logger.debug('fdatasync of the audit spool failed', { error: errorText(error) });
        resolve();
      });
    }).then(() => {
      this.syncing = undefined;
      if (this.dirty && fd === this.fd) {
        this.dirty = false;
        this.sync();
      }
    });
  }

  private rotate(): void {
    const old = this.fd;
    try {
      this.fd = this.create();
    } catch (error) {
      this.logger.warn('could not begin a new audit spool file; the current one keeps growing', { error: errorText(error) });
      return;
    }
    const closing = this.syncing ?? Promise.resolve();
    void closing.then(() => {
      try {
        fs.fdatasyncSync(old);
      } catch {
        // Already on disk or the disk failed; the lines were written either way.
      }
      fs.close(old, () => undefined);
    });
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

  async close(): Promise<void> {
    await this.syncing;
    try {
      fs.fdatasyncSync(this.fd);
    } catch {
      // Nothing more can be done for the last lines; they were written.
    }
    fs.closeSync(this.fd);
  }
}
