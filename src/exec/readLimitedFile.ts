// Reads one action file with the file-system limits of R-EXEC-1: a regular
// file reached without symlinks, at most 64 KiB, unchanged while it was read.
import { constants, promises as fsPromises } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { AssentError } from '../core/base/errors.js';
import { MAX_EXEC_FILE_BYTES } from '../core/exec/execFiles.js';
import type { ExecFileLabel } from '../core/exec/execFiles.js';

/** What identifies one version of a file; compared before/after a read and between reads. */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

export interface LimitedFile {
  bytes: Uint8Array;
  identity: FileIdentity;
}

/** The slice of node:fs/promises this module needs; tests may pass a fake. */
export interface LimitedFs {
  lstat(path: string, options: { bigint: true }): Promise<BigIntStats>;
  open(path: string, flags: number): Promise<{
    stat(options: { bigint: true }): Promise<BigIntStats>;
    read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
    close(): Promise<void>;
  }>;
}

function identityOf(stats: BigIntStats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs };
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

function fileError(file: ExecFileLabel, reason: string, problem: string, cause?: unknown): AssentError {
  return new AssentError('invalid_input', `The ${file} file ${problem} (${reason}). Check the path given on the command line and try again.`, {
    details: { reason, field: '(file)', file },
    cause,
  });
}

/** Codes meaning the file could not be read at all, as opposed to a file that breaks a rule. */
export const UNREADABLE = 'unreadable';

/**
 * Reads `path` once. Refuses symlinks and non-regular files before opening,
 * opens with O_NOFOLLOW, and compares dev/inode/size/mtime/ctime of the path
 * and the open descriptor before and after, so a swap during the read is seen.
 */
export async function readLimitedFile(path: string, file: ExecFileLabel, fs: LimitedFs = fsPromises): Promise<LimitedFile> {
  let before: BigIntStats;
  try {
    before = await fs.lstat(path, { bigint: true });
  } catch (error) {
    throw fileError(file, UNREADABLE, 'cannot be read', error);
  }
  if (before.isSymbolicLink()) throw fileError(file, 'symlink', 'is a symbolic link; give the path of the regular file itself');
  if (!before.isFile()) throw fileError(file, 'not-regular-file', 'is not a regular file');
  if (before.size > BigInt(MAX_EXEC_FILE_BYTES)) {
    throw fileError(file, 'too-large', `is ${before.size} bytes; at most ${MAX_EXEC_FILE_BYTES} are allowed`);
  }
  let handle: Awaited<ReturnType<LimitedFs['open']>>;
  try {
    handle = await fs.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw fileError(file, UNREADABLE, 'cannot be opened', error);
  }
  try {
    const opened = await handle.stat({ bigint: true });
    if (!sameIdentity(identityOf(before), identityOf(opened))) throw fileError(file, 'changed-during-read', 'changed while it was opened');
    const buffer = new Uint8Array(MAX_EXEC_FILE_BYTES + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, total, buffer.byteLength - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_EXEC_FILE_BYTES) throw fileError(file, 'too-large', `is larger than ${MAX_EXEC_FILE_BYTES} bytes`);
    }
    const after = await handle.stat({ bigint: true });
    const afterPath = await fs.lstat(path, { bigint: true });
    if (
      !sameIdentity(identityOf(opened), identityOf(after)) ||
      !sameIdentity(identityOf(after), identityOf(afterPath)) ||
      BigInt(total) !== after.size
    ) {
      throw fileError(file, 'changed-during-read', 'changed while it was read');
    }
    return { bytes: buffer.slice(0, total), identity: identityOf(after) };
  } catch (error) {
    if (error instanceof AssentError) throw error;
    throw fileError(file, UNREADABLE, 'cannot be read', error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
