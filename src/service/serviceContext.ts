// What the parts of the approval service share: their injected dependencies
// (R-ARCH-2), the configuration in force, and the one way they write an audit
// line. The facade (approvalService.ts) builds it once and owns what it reads.
import type { Notifier } from '../channels/notifier.js';
import type { Clock } from '../core/base/clock.js';
import type { Config } from '../core/config/config.js';
import { AssentError } from '../core/base/errors.js';
import type { RandomBytes } from '../core/base/ids.js';
import type { CompiledPresence } from '../core/policy/presencePolicy.js';
import type { PolicySnapshot } from '../core/policy/toolPolicy.js';
import type { AuditLog } from '../journal/auditLog.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { ApprovalStore, CallsInProgressStore, RuleStore, StoreInfo } from '../journal/store.js';
import type { EventBus } from './eventBus.js';
import type { Logger } from './logger.js';
import type { ProofService } from './proofService.js';
import type { StorageGuard } from './storageGuard.js';
import type { Timers } from '../core/base/timers.js';

/** The configuration the daemon loaded and pinned (R-CFG-4). */
export interface PinnedConfig {
  config: Config;
  revision: string;
  path: string;
}

/** The stores the approval service uses: approvals and votes, rules, calls in progress, and whether (and how) the store is shared. */
export type ServiceStores = Pick<StoreInfo, 'shared' | 'available' | 'watch'> & ApprovalStore & RuleStore & CallsInProgressStore;

export interface ServiceContext {
  /** Where approvals, events, rules and calls live: the embedded journal or a team database (R-TEAM-1). */
  readonly store: ServiceStores;
  readonly audit: AuditLog;
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly random: RandomBytes;
  readonly timers: Timers;
  readonly notifier: Notifier;
  readonly logger: Logger;
  /** This host's principal, `<os user>@<host name>`: the owner of the agent sessions it files approvals for (R-TEAM-3). */
  readonly principal: string;
  /** This host's id (identity.json), recorded on what it files and decides; undefined in a service built without one. */
  readonly hostId: string | undefined;
  /** Proofs and effects (R-J-*); undefined in a daemon started without them. */
  readonly proofs: ProofService | undefined;
  /** Whether the state directory's device takes writes (issue 35): no call runs that could not be recorded. Undefined in a service built without one. */
  readonly storage: StorageGuard | undefined;
  /** The configuration in force (R-CFG-4). A confirmed reload replaces it, so it is read each time. */
  pinned(): PinnedConfig;
  /** The compiled policy and rules of that configuration. */
  snapshot(): PolicySnapshot;
  /** Its `policy.presence`, compiled (R-REM-6). */
  presence(): CompiledPresence;
  /** True once shutdown began: nothing new is filed or admitted. */
  stopping(): boolean;
}

/** Appends one audit line, stamped with the time and the principal (R-AUD-1). */
export function writeAudit(ctx: ServiceContext, record: Omit<AuditRecord, 'ts' | 'principal'>): void {
  ctx.audit.append({ ts: new Date(ctx.clock.now()).toISOString(), principal: ctx.principal, ...record } as AuditRecord);
}

/** Throws the refusal a caller gets once the daemon began shutting down. */
export function refuseWhileStopping(ctx: ServiceContext, what: 'call' | 'command'): void {
  if (ctx.stopping()) throw new AssentError('unavailable', `the assent daemon is shutting down; retry the ${what} in a moment`);
}

/** The proof service, or the refusal of a daemon started without one. */
export function requireProofs(ctx: ServiceContext): ProofService {
  if (ctx.proofs === undefined) throw new AssentError('unavailable', 'this daemon was started without proof support; restart it with `assent daemon run`');
  return ctx.proofs;
}
