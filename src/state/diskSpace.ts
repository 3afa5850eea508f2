// Whether the device holding the state directory can take assent's records
// (issue 35, disk full and I/O errors): the journal, the audit files and the
// spool all live there, and a call may run only once its record can be kept.
// What a failed write means (no space, or the device failing), read from its
// error code, and the words that tell the operator the cause and the fix.
import { AssentError } from '../core/base/errors.js';

// As statePaths.ts does: the builtin without its ESM facade.
const fs = process.getBuiltinModule('node:fs');

/**
 * The free space below which no call is allowed: room for the audit lines of
 * the calls already running and for the journal's next transactions, so a call
 * is never let through onto a disk that cannot keep its record.
 */
export const DISK_RESERVE_BYTES = 1024 * 1024;

/** Free inodes below which a new day file, journal page file or spool could not be created. */
const INODE_RESERVE = 8;

export type StorageFaultKind = 'full' | 'io';

/** Why the state directory cannot take a write now. */
export interface StorageFault {
  kind: StorageFaultKind;
  /** The error code: ENOSPC, EDQUOT, EIO, EROFS, or SQLite's SQLITE_FULL, SQLITE_IOERR_*. */
  code: string;
  /** The state directory (ASSENT_HOME), whose device it is. */
  home: string;
  /** The file a failed write was for, when known. */
  file?: string;
  /** Free bytes on the device when the fault came from measuring it. */
  freeBytes?: number;
  /** Set when the device has no free inodes left (it may still have bytes). */
  inodes?: boolean;
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
const IO_CODES = new Set(['EIO', 'EROFS', 'SQLITE_IOERR']);

/** The code of a Node.js or SQLite error, as classified here (SQLITE_IOERR_WRITE reads as SQLITE_IOERR), or undefined. */
function codeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  return code.startsWith('SQLITE_IOERR') ? 'SQLITE_IOERR' : code;
}

/** The storage fault a failed write reports, or undefined when it failed for another reason. */
export function storageFaultOf(error: unknown, home: string, file?: string): StorageFault | undefined {
  const classified = codeOf(error);
  if (classified === undefined) return undefined;
  const kind: StorageFaultKind | undefined = FULL_CODES.has(classified) ? 'full' : IO_CODES.has(classified) ? 'io' : undefined;
  if (kind === undefined) return undefined;
  const code = String((error as { code: string }).code);
  const path = file ?? (error as { path?: unknown }).path;
  return typeof path === 'string' ? { kind, code, home, file: path } : { kind, code, home };
}

export type StatFs = (path: string) => { bsize: number; bavail: number; bfree: number; files: number; ffree: number };

interface Measured {
  fault: StorageFault | undefined;
  /** Bytes this user may still write, and whether the device has inodes to spare beyond doubt. */
  freeBytes: number;
  manyInodes: boolean;
}

function measure(home: string, reserveBytes: number, statfs: StatFs): Measured | undefined {
  let stats: ReturnType<StatFs>;
  try {
    stats = statfs(home);
  } catch {
    return undefined;
  }
  const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
  const freeBytes = blocks * stats.bsize;
  // A file system that reports no inode count (files 0) allocates them as it goes.
  const manyInodes = stats.files === 0 || stats.ffree >= ROOMY_INODES;
  if (freeBytes < reserveBytes) return { fault: { kind: 'full', code: 'ENOSPC', home, freeBytes }, freeBytes, manyInodes };
  if (stats.files > 0 && stats.ffree < INODE_RESERVE) return { fault: { kind: 'full', code: 'ENOSPC', home, freeBytes, inodes: true }, freeBytes, manyInodes };
  return { fault: undefined, freeBytes, manyInodes };
}

/**
 * A measured shortage: fewer than `reserveBytes` free for this user (root may
 * also use the blocks kept for it) or no inodes left on the device holding
 * `home`. Undefined when there is room, and when the device cannot be measured
 * (the writes themselves then say whether it takes them). About a microsecond.
 */
export function freeSpaceFault(home: string, reserveBytes = DISK_RESERVE_BYTES, statfs: StatFs = fs.statfsSync): StorageFault | undefined {
  return measure(home, reserveBytes, statfs)?.fault;
}

/**
 * Room so far above the reserve that one measurement may stand for ROOMY_REUSE_MS:
 * filling 1 GiB in 50 ms takes 20 GiB/s of writes, beyond any one disk. Nearer
 * the reserve every call measures again.
 */
export const ROOMY_BYTES = 1024 * 1024 * 1024;
export const ROOMY_REUSE_MS = 50;
const ROOMY_INODES = 10_000;

/**
 * The free-space check of every call path (the gateway's and the daemon's): a
 * statfs per call costs a gateway at 32 calls in flight about a sixth of its
 * CPU, so while the device is roomy (ROOMY_BYTES above the reserve and inodes
 * to spare) a measurement is reused for ROOMY_REUSE_MS of the monotonic clock.
 * A shortage, an unmeasurable device, or room below that margin is never reused.
 */
export class FreeSpaceProbe {
  private roomyUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly home: string,
    private readonly reserveBytes: number = DISK_RESERVE_BYTES,
    private readonly statfs: StatFs = fs.statfsSync,
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  fault(): StorageFault | undefined {
    const now = this.monotonicNow();
    if (now < this.roomyUntil) return undefined;
    const measured = measure(this.home, this.reserveBytes, this.statfs);
    const roomy = measured !== undefined && measured.fault === undefined && measured.manyInodes && measured.freeBytes - this.reserveBytes >= ROOMY_BYTES;
    this.roomyUntil = roomy ? now + ROOMY_REUSE_MS : Number.NEGATIVE_INFINITY;
    return measured?.fault;
  }
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/** The cause (what happened, on which device) and the fix, each a clause without a final stop. */
export function storageFaultText(fault: StorageFault): { cause: string; fix: string } {
  if (fault.kind === 'full') {
    const measured =
      fault.inodes === true
        ? ', no free inodes'
        : fault.freeBytes === undefined
          ? ''
          : `, ${mebibytes(fault.freeBytes)} free where assent needs ${mebibytes(DISK_RESERVE_BYTES)}`;
    return {
      cause: `no space left on the device holding ${fault.home} (${fault.code}${measured})`,
      fix: `free space on that device (\`df -h ${fault.home}\` shows it) and assent resumes by itself, no restart needed`,
    };
  }
  return {
    cause: `the device holding ${fault.home} failed a write (${fault.code}${fault.file === undefined ? '' : ` on ${fault.file}`})`,
    fix: 'check that device (`dmesg`, its file system, a read-only remount) and assent resumes by itself once its writes succeed, no restart needed',
  };
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** What happened, where, why it refuses, and what the operator does: for logs, errors, status and doctor. */
export function describeStorageFault(fault: StorageFault): string {
  const { cause, fix } = storageFaultText(fault);
  return `${capitalized(cause)}, where assent keeps its journal and audit log, so it allows no call it could not record. ${capitalized(fix)}.`;
}

/** The same as one clause, for the reason a refused call is given (the agent's words, R-HOOK-1, R-MCP-3). */
export function storageRefusalHint(fault: StorageFault): string {
  const { cause, fix } = storageFaultText(fault);
  return `${cause}, where assent keeps its journal and audit log, so it allows no call it could not record; ${fix}`;
}

/** Why no call may run now for want of room on the probe's device (the gateway's check), or undefined. */
export function freeSpaceRefusal(probe: FreeSpaceProbe): string | undefined {
  const fault = probe.fault();
  return fault === undefined ? undefined : storageRefusalHint(fault);
}

/** The stable reason code a refusal for this fault is audited and answered with. */
export function storageReasonOf(fault: StorageFault): 'disk_full' | 'disk_error' {
  return fault.kind === 'full' ? 'disk_full' : 'disk_error';
}

/** The error an operation fails with when its write could not be made: `unavailable`, naming the device, the cause and the fix. */
export function storageUnavailable(fault: StorageFault, cause?: unknown): AssentError {
  return new AssentError('unavailable', describeStorageFault(fault), {
    details: { reason: storageReasonOf(fault), code: fault.code, home: fault.home, ...(fault.file === undefined ? {} : { file: fault.file }) },
    ...(cause === undefined ? {} : { cause }),
  });
}
