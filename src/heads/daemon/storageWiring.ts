// The daemon's guard over its state directory's device (issue 35), wired for
// the composition root: the audit log reports each failed and recovered write
// to it, the journal is probed with a small transaction while its writes fail,
// and `daemon status` shows it. See service/storageGuard.ts.
import type { Clock } from '../../core/base/clock.js';
import type { Timers } from '../../core/base/timers.js';
import type { AuditLog } from '../../journal/auditLog.js';
import type { Journal } from '../../journal/journal.js';
import type { DaemonContext } from '../../operations/daemonContext.js';
import { StorageGuard } from '../../service/storageGuard.js';

/** The daemon_meta key the journal probe writes: a row of its own, read by nothing. */
const PROBE_KEY = 'storage_probe';

export interface StorageWiring {
  guard: StorageGuard;
  /** The audit log's `onFailure`. */
  auditFailed(error: unknown): void;
  /** The audit log's `onRecovered`. */
  auditRecovered(info: { heldRecords: number; failedAttempts: number }): void;
}

/** The guard, with the audit log read late (it is built after the guard, and reports to it). */
export function wireStorage(ctx: DaemonContext, base: { journal: Journal; clock: Clock }, timers: Timers, audit: () => AuditLog): StorageWiring {
  const logger = ctx.logger.child({ component: 'storage' });
  const guard = new StorageGuard({
    home: ctx.paths.home,
    clock: base.clock,
    timers,
    logger,
    probes: {
      journal: () => Promise.resolve(base.journal.writeMeta(PROBE_KEY, new Date(base.clock.now()).toISOString())),
      audit: async () => {
        await audit().retry();
        if (audit().failing) throw new Error('the audit log still holds records it could not write');
      },
    },
    heldAuditRecords: () => audit().held,
  });
  /** What was said last in this spell of failures: each retry's same failure is not said again, anything new is (records lost). */
  let told: string | undefined;
  return {
    guard,
    auditFailed(error) {
      const fault = guard.noteFailure('audit', error);
      const text = error instanceof Error ? error.message : String(error);
      if (told === text) return;
      told = text;
      logger.warn(
        fault === undefined ? 'audit write failed; the records are held and written again' : 'audit write failed: the disk takes none; the records are held in memory and written once it does',
        { error, held: audit().held, failures: audit().failures },
      );
    },
    auditRecovered(info) {
      told = undefined;
      logger.info('the audit records held while writes failed are on disk; the chain continues without a gap', info);
      guard.noteRecovered('audit');
    },
  };
}
