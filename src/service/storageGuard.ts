// The daemon's guard over the device holding its state directory (issue 35,
// disk full and I/O errors). A call may run only once its record can be kept
// there (the journal's row, its audit line), so every call path asks `fault()`
// first: a write that failed (the journal's SQLITE_FULL, the audit writer's
// ENOSPC or EIO) holds until that writer takes writes again, and a device
// measured below the reserve holds until it has room. Meanwhile every call is
// refused, naming the device, the cause and the fix; once the writes succeed
// again calls are served without a restart. The log says when it began and ended.
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import type { Timers } from '../core/base/timers.js';
import {
  DISK_RESERVE_BYTES,
  describeStorageFault,
  FreeSpaceProbe,
  storageFaultOf,
  storageReasonOf,
  storageRefusalHint,
  storageUnavailable,
  type StatFs,
  type StorageFault,
} from '../state/diskSpace.js';
import type { Logger } from './logger.js';

/** The writers whose failures hold calls: the journal (journal.db) and the audit log (audit/*.jsonl). */
export type StorageWriter = 'journal' | 'audit';

export interface StorageGuardOptions {
  /** The state directory (ASSENT_HOME). */
  home: string;
  clock: Pick<Clock, 'now'>;
  timers: Timers;
  logger: Logger;
  /**
   * For each writer, a write that succeeds only when the writer takes writes
   * again (the journal: a small transaction; the audit log: its held records).
   * Tried every `retryMs` while that writer's failure holds.
   */
  probes: Partial<Record<StorageWriter, () => Promise<void>>>;
  /** Audit records held in memory until the disk takes them (AuditLog.held), for status. */
  heldAuditRecords?: () => number;
  reserveBytes?: number;
  statfs?: StatFs;
  retryMs?: number;
}

interface Held {
  fault: StorageFault;
  since: number;
}

export class StorageGuard {
  private readonly failed = new Map<StorageWriter, Held>();
  /** The current spell of refusals: when it began, why, and how many calls it refused. */
  private spell: { since: number; fault: StorageFault; refused: number } | undefined;
  private timer: unknown;
  private probing = false;

  private readonly freeSpace: FreeSpaceProbe;

  constructor(private readonly options: StorageGuardOptions) {
    this.freeSpace = new FreeSpaceProbe(options.home, options.reserveBytes ?? DISK_RESERVE_BYTES, options.statfs);
  }

  /**
   * Why no call may run now, or undefined. A recorded write failure first, then
   * the device's free space (FreeSpaceProbe: one statfs, reused briefly while roomy): checked on every
   * call path before anything is allowed or filed.
   */
  fault(): StorageFault | undefined {
    const held = this.failed.values().next();
    const fault = held.done === true ? this.freeSpace.fault() : held.value.fault;
    if (fault !== undefined && this.spell === undefined) this.begin(fault);
    else if (fault === undefined && this.spell !== undefined) this.end();
    return fault;
  }

  /**
   * A write of `writer` failed. Returns the fault when it is the device's (no
   * space, an I/O error), which then holds every call until that writer takes
   * writes again; undefined for any other failure, which changes nothing here.
   */
  noteFailure(writer: StorageWriter, error: unknown, file?: string): StorageFault | undefined {
    const fault = storageFaultOf(error, this.options.home, file);
    if (fault === undefined) return undefined;
    if (!this.failed.has(writer)) this.failed.set(writer, { fault, since: this.options.clock.now() });
    if (this.spell === undefined) this.begin(fault);
    this.scheduleProbe();
    return fault;
  }

  /** The writer took writes again (the audit log wrote what it held). */
  noteRecovered(writer: StorageWriter): void {
    if (!this.failed.delete(writer)) return;
    this.fault();
  }

  /**
   * The refusal of one call (`subject`, e.g. `fs/write_file`), or undefined when
   * it may go on. With `error` (a step of the call failed), only a storage fault
   * refuses. A `policy_denied` whose details carry `reason: unavailable`, the
   * stable `detail` (`disk_full`, `disk_error`) and the `hint` the agent reads.
   */
  callRefusal(subject: string, error?: unknown): AssentError | undefined {
    const fault = error === undefined ? this.fault() : error instanceof AssentError ? this.faultOfError(error) : this.noteFailure('journal', error);
    if (fault === undefined) return undefined;
    if (this.spell !== undefined) this.spell.refused += 1;
    const hint = storageRefusalHint(fault);
    return new AssentError('policy_denied', `assent did not allow ${subject}: ${hint}.`, {
      details: { reason: 'unavailable', detail: storageReasonOf(fault), hint, code: fault.code, home: fault.home },
      ...(error === undefined ? {} : { cause: error }),
    });
  }

  /** For an operation that is no call (deciding an approval, adding a rule): `unavailable` naming the device, or undefined. */
  refusal(error?: unknown): AssentError | undefined {
    if (error instanceof AssentError) return undefined;
    const fault = error === undefined ? this.fault() : this.noteFailure('journal', error);
    return fault === undefined ? undefined : storageUnavailable(fault, error);
  }

  /** `daemon status`: whether calls are served, and if not why, since when and what to do. */
  status(): Record<string, unknown> {
    const fault = this.fault();
    const held = this.options.heldAuditRecords?.() ?? 0;
    if (fault === undefined || this.spell === undefined) return { ok: true, heldAuditRecords: held };
    const writer = [...this.failed.entries()][0];
    return {
      ok: false,
      cause: describeStorageFault(fault),
      code: fault.code,
      source: writer === undefined ? 'free space' : writer[0],
      since: new Date(this.spell.since).toISOString(),
      refusedCalls: this.spell.refused,
      heldAuditRecords: held,
    };
  }

  /** An error a store step already translated (storageUnavailable), as the fault it names. */
  private faultOfError(error: AssentError): StorageFault | undefined {
    const reason = error.details?.['reason'];
    if (reason !== 'disk_full' && reason !== 'disk_error') return undefined;
    const code = String(error.details?.['code'] ?? (reason === 'disk_full' ? 'ENOSPC' : 'EIO'));
    return this.noteFailure('journal', { code }) ?? undefined;
  }

  private begin(fault: StorageFault): void {
    this.spell = { since: this.options.clock.now(), fault, refused: 0 };
    this.options.logger.error('assent cannot write to its state directory; every call is refused until it can', { cause: describeStorageFault(fault), code: fault.code });
    this.scheduleProbe();
  }

  private end(): void {
    const spell = this.spell;
    this.spell = undefined;
    if (spell === undefined) return;
    this.options.logger.info('assent writes to its state directory again; calls are served', {
      was: spell.fault.code,
      lastedMs: this.options.clock.now() - spell.since,
      refusedCalls: spell.refused,
    });
  }

  /** While a spell lasts, the failed writers are tried again and the free space measured, so it ends without a call having to come. */
  private scheduleProbe(): void {
    if (this.timer !== undefined) return;
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined;
      void this.probe();
    }, this.options.retryMs ?? 1000);
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      for (const writer of [...this.failed.keys()]) {
        const probe = this.options.probes[writer];
        try {
          if (probe !== undefined) await probe();
          this.failed.delete(writer);
        } catch {
          // Still failing: held.
        }
      }
    } finally {
      this.probing = false;
    }
    this.fault();
    if (this.spell !== undefined) this.scheduleProbe();
  }
}
