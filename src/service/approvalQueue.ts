// Approvals and their lifecycle: filing (durable, then announced), deadlines,
// the parties waiting on each, and resolution as a compare-and-set in the
// store, where the first resolver wins and every channel is told (R-D-6).
// The decision itself is judged in approvalDecision.ts, and what is pending is
// listed, as views or as ready JSON text, by approvalLists.ts (SPEC §14).
// In a store shared by several hosts (R-TEAM-2) it also holds the other hosts'
// pending approvals, taken up and settled as their events arrive.
import type { Notification } from '../channels/notifier.js';
import { pushRisk, readApprovalRisk } from '../core/approval/approvalRisk.js';
import { AssentError } from '../core/base/errors.js';
import { newApprovalId } from '../core/base/ids.js';
import type { JsonText } from '../core/base/jsonText.js';
import { presenceFor } from '../core/policy/presencePolicy.js';
import { quorumFor } from '../core/config/teamConfig.js';
import type { ApprovalRecord } from '../journal/journal.js';
import type { RemoteEvent } from '../journal/store.js';
import { auditRefusal, decisionLog, fourEyesRefusal, judgeInTransaction, outcomeOf, resolutionEventData, resolutionForWaiters, resolutionOfData } from './approvalDecision.js';
import { resolutionOfRecord, storedResolution, type DecideOutcome, type DecideParams, type ResolutionInput } from './approvalDecision.js';
import { pendingAsJson, pendingAsViews, selectViews, storedListFilter, type ListOptions } from './approvalLists.js';
import { toApprovalView, type ApprovalView } from './approvalViews.js';
import { Deadlines } from './deadlines.js';
import { PendingApproval, type RequestEnd, type Resolution, type Waiter, type WatchRequest } from './pendingApproval.js';
import type { ServiceContext } from './serviceContext.js';

export type { DecideOutcome, DecideParams, DecisionResult, PresenceConfirmation, ResolutionInput } from './approvalDecision.js';
export type { ListOptions } from './approvalLists.js';
export { DENIAL_HELP } from './approvalDecision.js';

/** What a filed approval carries; the queue adds its id, times and state. */
/** How long an expiry waits for the store before its waiting calls are told anyway. */
export const EXPIRY_STORE_WAIT_MS = 2_000;

export type ApprovalFiling = Omit<ApprovalRecord, 'id' | 'requestedAt' | 'expiresAt' | 'state' | 'handoff'> & { handoff?: boolean };

/** `approvals.wait` and exec requests: they want the resolution itself; a cancel leaves the approval alone. */
class ResolutionWaiter implements Waiter {
  constructor(
    private readonly queue: ApprovalQueue,
    private readonly entry: PendingApproval,
    private readonly resolvePromise: (resolution: Resolution) => void,
  ) {}

  wake(resolution: Resolution): void {
    this.resolvePromise(resolution);
  }

  requestEnded(how: RequestEnd): void {
    if (how === 'disconnected') this.queue.detach(this.entry, this);
  }
}

export interface ApprovalQueueOptions {
  /** How long an approval waits for a waiter to come back after its connection dropped (R-D-7). */
  reattachGraceMs?: number;
}

export class ApprovalQueue {
  /** Pending approvals in filing order: a read view of the journal, kept in step by file/resolve. */
  private readonly pending = new Map<string, PendingApproval>();
  private readonly deadlines: Deadlines;
  private readonly reattachGraceMs: number;
  /** When this daemon's queue was made: approvals filed before it are a previous run's. */
  private readonly createdAt: number;

  constructor(
    private readonly ctx: ServiceContext,
    options: ApprovalQueueOptions = {},
  ) {
    this.reattachGraceMs = options.reattachGraceMs ?? 5_000;
    this.createdAt = ctx.clock.now();
    this.deadlines = new Deadlines(ctx.timers, ctx.clock, (id) => this.expire(id));
  }

  /**
   * Takes up the pending approvals in the store (those that survived a restart,
   * and in a shared store every host's) and re-arms their deadlines; stale ones
   * expire at once (R-D-7). Run again after the shared store came back: entries
   * whose approval was resolved meanwhile are settled from the store (R-TEAM-2).
   */
  async restore(): Promise<void> {
    const approvedBy = new Map<string, string[]>();
    for (const vote of await this.ctx.store.listPendingApprovalVotes()) {
      const list = approvedBy.get(vote.approvalId);
      if (list === undefined) approvedBy.set(vote.approvalId, [vote.principal]);
      else list.push(vote.principal);
    }
    const stillPending = new Set<string>();
    for (const record of await this.ctx.store.listApprovals({ state: 'pending' })) {
      stillPending.add(record.id);
      const view = this.view(record, approvedBy.get(record.id));
      const known = this.pending.get(record.id);
      if (known === undefined) this.remember(view);
      else known.updateView(view);
      this.deadlines.set(record.id, record.expiresAt);
    }
    for (const id of [...this.pending.keys()]) if (!stillPending.has(id)) await this.settleFromStore(id);
  }

  /**
   * A deadline passed: expire it. While the store cannot be reached the local
   * waiters are told anyway, and the store catches up later; a store that does
   * not answer at all (a database going away mid-query) is waited for at most
   * EXPIRY_STORE_WAIT_MS, so a deadline is never held past by an outage.
   */
  private expire(id: string): void {
    const resolution: ResolutionInput = { state: 'expired', reason: 'consent_timeout', decidedAt: this.ctx.clock.now() };
    if (this.ctx.store.shared && this.ctx.hostId !== undefined) resolution.decidedHost = this.ctx.hostId;
    const tellAnyway = this.ctx.timers.setTimeout(() => {
      this.ctx.logger.warn('the store did not record an expiry in time; its waiting calls are told anyway', { approvalId: id });
      this.settleLocally(id, resolutionOfData(resolution as unknown as Record<string, unknown>));
    }, EXPIRY_STORE_WAIT_MS);
    this.resolveQuietly(id, resolution, () => this.ctx.timers.clearTimeout(tellAnyway));
  }

  /** Files an approval: durable first, then its deadline, the event with its arguments for live subscribers, and the notification. */
  async file(input: ApprovalFiling, timeoutMs: number = this.ctx.pinned().config.policy.consentTimeoutSeconds * 1000): Promise<ApprovalRecord> {
    const { store, clock } = this.ctx;
    const requestedAt = clock.now();
    for (let attempt = 0; ; attempt += 1) {
      const record = this.draft(input, requestedAt, timeoutMs);
      try {
        await store.insertApproval(record);
      } catch (error) {
        // The store's key is the final word on a free id; a taken one (rare) draws again.
        if (error instanceof AssentError && error.type === 'conflict' && attempt < 50) continue;
        throw error instanceof AssentError && error.type === 'conflict' ? new AssentError('internal', 'could not allocate a free approval id') : error;
      }
      this.announceFiled(record);
      return record;
    }
  }

  /** A new pending record with a fresh id (not one pending here already). */
  private draft(input: ApprovalFiling, requestedAt: number, timeoutMs: number): ApprovalRecord {
    let id = newApprovalId(this.ctx.random);
    while (this.pending.has(id)) id = newApprovalId(this.ctx.random);
    // Built field by field: an object spread followed by more fields gives every record its own hidden class in V8.
    const record: ApprovalRecord = {
      id,
      sessionId: input.sessionId,
      kind: input.kind,
      argsSha256: input.argsSha256,
      requestedAt,
      expiresAt: requestedAt + timeoutMs,
      caller: input.caller,
      handoff: input.handoff ?? false,
      state: 'pending',
    };
    if (input.server !== undefined) record.server = input.server;
    if (input.tool !== undefined) record.tool = input.tool;
    if (input.args !== undefined) record.args = input.args;
    if (input.action !== undefined) record.action = input.action;
    // R-TEAM-3: the session is owned by this host's principal; the rules in force travel with the approval.
    const config = this.ctx.pinned().config;
    record.owner = this.ctx.principal;
    if (this.ctx.hostId !== undefined) record.hostId = this.ctx.hostId;
    if (config.approvals.fourEyes) record.fourEyes = true;
    const quorum = quorumFor(config.policy.quorum, record.server, record.tool);
    if (quorum > 1) record.quorum = quorum;
    // R-REM-6: so is the passkey requirement, judged from the record on every host and after any reload.
    if (record.kind === 'tool' && record.server !== undefined && record.tool !== undefined) {
      const presence = presenceFor(this.ctx.presence(), `${record.server}/${record.tool}`)?.presence;
      if (presence !== undefined) record.presence = presence;
    }
    return record;
  }

  /** After the record is durable: its deadline, the pending view, the event with its arguments for live subscribers, the notification. */
  private announceFiled(record: ApprovalRecord): void {
    this.deadlines.set(record.id, record.expiresAt);
    const view = this.view(record);
    this.remember(view);
    void this.ctx.bus.publish('approval_requested', { approval: view, args: record.args, action: record.action }, record.sessionId);
    const subject = record.kind === 'tool' ? `${record.server}/${record.tool}` : 'a command';
    const risk = readApprovalRisk(record.caller['risk']);
    const title = `assent: ${risk === undefined ? '' : `risk ${risk.level}: `}approval ${record.id}`;
    const notification: Notification = { title, body: `${subject} is waiting for your decision. Run: assent approve ${record.id}`, approvalId: record.id };
    // The level first, as in every view (R-POL-10); only assent's own words, never the command's.
    if (risk !== undefined) notification.risk = pushRisk(risk);
    // Who asks, for a push: names only, never an argument (R-REM-4).
    if (record.server !== undefined) notification.server = record.server;
    if (record.tool !== undefined) notification.tool = record.tool;
    if (record.caller['head'] === 'hook' && typeof record.caller['agent'] === 'string') notification.agent = record.caller['agent'];
    this.ctx.notifier.notify(notification);
  }

  /** Compare-and-set in the store; the first resolver wins and every channel is told (R-D-6). */
  async resolve(id: string, resolution: ResolutionInput): Promise<boolean> {
    if (!(await this.ctx.store.resolveApproval(id, storedResolution(resolution)))) {
      // Another host may have won without its event reaching us yet: settle our waiters from the store.
      if (this.ctx.store.shared && this.pending.has(id)) await this.settleFromStore(id);
      return false;
    }
    await this.announce(id, resolution);
    return true;
  }

  /** A lifecycle resolution from a callback or timer: never throws; one the store refused settles the local waiters anyway (R-TEAM-7). */
  private resolveQuietly(id: string, resolution: ResolutionInput, settled?: () => void): void {
    this.resolve(id, resolution)
      .catch((error: unknown) => {
        this.ctx.logger.warn('could not record the resolution of an approval; its waiting calls are told anyway', { approvalId: id, reason: resolution.reason, error });
        this.settleLocally(id, resolutionOfData(resolution as unknown as Record<string, unknown>));
      })
      .finally(() => settled?.());
  }

  /** Ends the local life of a resolved approval: out of the pending list, no deadline, every waiter woken once. */
  private settleLocally(id: string, resolution: Resolution): void {
    const entry = this.pending.get(id);
    this.pending.delete(id);
    this.deadlines.delete(id);
    if (entry === undefined) return;
    for (const waiter of entry.settle(resolution)) waiter.wake(resolution);
  }

  /** Settles a pending entry from what the store says now, when its resolution did not reach us as an event. */
  private async settleFromStore(id: string): Promise<void> {
    const current = await this.ctx.store.getApproval(id);
    if (current === undefined || current.state === 'pending') return;
    this.settleLocally(id, resolutionOfData(current as unknown as Record<string, unknown>, await this.approvedBy(id)));
  }

  /**
   * Another host filed, voted on or resolved an approval (R-TEAM-2): it is
   * listed here too (with its arguments, read from the store, so an approver
   * sees what it approves), shows its votes, or leaves the list and wakes what
   * waits on it here. Returns the event data as local subscribers get it, or
   * undefined when there is nothing to tell them.
   */
  async applyRemote(event: RemoteEvent): Promise<Record<string, unknown> | undefined> {
    if (event.kind === 'approval_requested') {
      const approval = event.data['approval'] as { id?: unknown } | undefined;
      const id = typeof approval?.id === 'string' ? approval.id : undefined;
      if (id === undefined) return undefined;
      const record = await this.ctx.store.getApproval(id);
      if (record === undefined || record.state !== 'pending') return undefined;
      const view = this.view(record, await this.approvedBy(id));
      if (!this.pending.has(id)) this.remember(view);
      this.deadlines.set(id, record.expiresAt);
      return { ...event.data, approval: view, args: record.args, action: record.action };
    }
    const id = event.data['id'];
    if (event.kind === 'approval_voted' && typeof id === 'string') {
      const record = await this.ctx.store.getApproval(id);
      if (record !== undefined && record.state === 'pending') this.pending.get(id)?.updateView(this.view(record, await this.approvedBy(id)));
    }
    if (event.kind === 'approval_resolved' && typeof id === 'string') this.settleLocally(id, resolutionOfData(event.data));
    return event.data;
  }

  /** After a resolution committed: the approval leaves the pending view, every channel is told and its waiters wake. */
  private async announce(id: string, resolution: ResolutionInput): Promise<void> {
    const entry = this.pending.get(id);
    this.pending.delete(id);
    this.deadlines.delete(id);
    // A lifecycle end (timeout, session end) of a partly approved approval still names who had approved.
    const approvedBy = resolution.approvedBy ?? (entry !== undefined && entry.approvedBy.length > 0 ? [...entry.approvedBy] : undefined);
    const sessionId = entry?.sessionId ?? (await this.ctx.store.getApproval(id))?.sessionId;
    const data = resolutionEventData(id, resolution, approvedBy);
    void this.ctx.bus.publish('approval_resolved', data, sessionId);
    const waiting = entry?.settle(resolutionOfData(data)) ?? [];
    if (waiting.length > 0) {
      const result = resolutionForWaiters(resolution, approvedBy);
      for (const waiter of waiting) waiter.wake(result);
    }
  }

  /**
   * A person's decision (R-D-5, R-TEAM-3), judged and recorded in one journal
   * transaction: refused once the approval is resolved or past its deadline;
   * under four-eyes the session's owner may deny but not approve; under a
   * quorum each distinct principal's approval is recorded until enough have
   * approved, and a single deny denies. Side effects (events, waking the call)
   * follow the commit.
   */
  async decide(params: DecideParams, onResolved?: (decided: ApprovalRecord) => Promise<void>): Promise<DecideOutcome> {
    const { store, clock } = this.ctx;
    const principal = params.principal ?? this.ctx.principal;
    const config = this.ctx.pinned().config;
    const now = clock.now();
    const step = await store.decideApproval(params.id, judgeInTransaction(this.ctx, params, principal, config, now));

    if (step.kind === 'expired') {
      await this.resolve(params.id, { state: 'expired', reason: 'consent_timeout', decidedAt: clock.now() });
      throw new AssentError('conflict', `approval ${params.id} expired before the decision arrived`, { details: { state: 'expired' } });
    }
    const logged = decisionLog(params, principal, step.kind);
    const result = outcomeOf(step, principal);
    if (step.kind === 'refuse') {
      this.ctx.logger.info('approval refused: four-eyes', logged);
      auditRefusal(this.ctx, step.record, params, principal);
      throw fourEyesRefusal(params, principal, step.record);
    }
    if (step.kind === 'repeat') {
      this.ctx.logger.info('approval repeated by the same principal; nothing changed', logged);
      return result;
    }
    if (step.kind === 'partial') {
      const approvedBy = step.votes.map((vote) => vote.principal);
      const entry = this.pending.get(params.id);
      entry?.updateView(this.view(step.record, approvedBy));
      void this.ctx.bus.publish(
        'approval_voted',
        { id: params.id, principal, approvals: step.verdict.approvals, required: step.verdict.required, approvedBy },
        step.record.sessionId,
      );
      this.ctx.logger.info('approval recorded; quorum not met yet', { ...logged, approvals: step.verdict.approvals, required: step.verdict.required });
      return result;
    }
    // What the allow issues (a proof) exists before anyone hears of the decision.
    if (onResolved !== undefined) {
      const decided: ApprovalRecord = { ...step.record, ...storedResolution(step.resolution) };
      try {
        await onResolved(decided);
      } finally {
        await this.announce(params.id, step.resolution);
      }
    } else {
      await this.announce(params.id, step.resolution);
    }
    this.ctx.logger.info('approval decided', logged);
    return result;
  }

  /** The approval's pending entry (from memory when it is there), or its resolution when it is resolved already. */
  async pendingOrResolved(id: string): Promise<PendingApproval | Resolution> {
    const entry = this.pending.get(id);
    if (entry !== undefined) return entry;
    const current = await this.ctx.store.getApproval(id);
    if (current === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    const approvedBy = await this.approvedBy(id);
    if (current.state === 'pending') return this.pending.get(id) ?? this.remember(this.view(current, approvedBy));
    const done = resolutionOfRecord(current, approvedBy);
    return done;
  }

  /** Resolves with the approval's resolution; a dropped connection detaches the waiter (R-D-7), a cancel is ignored. */
  async waitForResolution(id: string, watch: WatchRequest | undefined): Promise<Resolution> {
    const entry = await this.pendingOrResolved(id);
    if (!(entry instanceof PendingApproval)) return entry;
    return new Promise<Resolution>((resolvePromise) => {
      this.addWaiter(entry, new ResolutionWaiter(this, entry, resolvePromise), watch);
    });
  }

  /** `approvals.wait`: re-attach to a pending approval, e.g. after a daemon restart (R-D-7). */
  async wait(id: string, watch?: WatchRequest): Promise<ApprovalView> {
    await this.waitForResolution(id, watch);
    return this.get(id);
  }

  /** Adds a waiter; one added after the approval was settled (between a lookup and here) is woken at once. */
  addWaiter(entry: PendingApproval, waiter: Waiter, watch: WatchRequest | undefined): void {
    const settled = entry.settledAs;
    if (settled !== undefined) {
      waiter.wake(settled);
      return;
    }
    entry.addWaiter(waiter);
    watch?.(waiter);
  }

  /**
   * The caller withdrew a waiting call: its approval is resolved as `cancelled`
   * (an MCP client's cancel) or `withdrawn` (an agent hook whose agent went away, R-HOOK-12).
   */
  withdraw(entry: PendingApproval, waiter: Waiter, reason: 'cancelled' | 'withdrawn' = 'cancelled'): void {
    // Only a call still waiting can be withdrawn.
    if (!entry.isWaiting(waiter)) return;
    this.resolveQuietly(entry.id, { state: 'denied', reason, decidedAt: this.ctx.clock.now() });
  }

  /** A waiter's connection dropped: it stops waiting, and the approval is denied unless someone re-attaches in time (R-D-7). */
  detach(entry: PendingApproval, waiter: Waiter): void {
    // Resolved, or detached already: nothing to do.
    if (!entry.removeWaiter(waiter)) return;
    this.ctx.timers.setTimeout(() => {
      const current = this.pending.get(entry.id);
      if (current === undefined || current.handoff || current.waitedOn) return;
      this.resolveQuietly(entry.id, { state: 'denied', reason: 'session_ended', decidedAt: this.ctx.clock.now() });
    }, this.reattachGraceMs);
  }

  /** `approvals.list` for the heads: pending approvals come back as ready JSON text. */
  listAsJson(options: ListOptions = {}): JsonText | Promise<ApprovalView[]> {
    if ((options.state ?? 'pending') !== 'pending') return this.list(options);
    return pendingAsJson(this.pending.values(), options);
  }

  async list(options: ListOptions = {}): Promise<ApprovalView[]> {
    if ((options.state ?? 'pending') === 'pending') return pendingAsViews(this.pending.values(), options);
    const views: ApprovalView[] = [];
    for (const record of await this.ctx.store.listApprovals(storedListFilter(options))) views.push(this.view(record, await this.approvedBy(record.id)));
    return selectViews(views, options);
  }

  async get(id: string): Promise<ApprovalView> {
    const record = await this.ctx.store.getApproval(id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    return this.view(record, await this.approvedBy(id));
  }

  /** The public view of a record, with who has approved so far (the presence it needs is the record's own). */
  private view(record: ApprovalRecord, approvedBy?: readonly string[]): ApprovalView {
    const view = toApprovalView(record, approvedBy);
    // R-TEAM-2: in a shared store every view says which host filed it.
    if (this.ctx.store.shared && record.hostId !== undefined) view.hostId = record.hostId;
    // Another host's approval names that host in the terminal views by its owner `<os user>@<host name>`, as the page does
    // (issue 20); this host's own leave it out, as without a shared store (SPEC §14 list budget).
    if (this.ctx.store.shared && record.owner !== undefined && record.hostId !== this.ctx.hostId) view.owner = record.owner;
    return view;
  }

  /** Principals whose approval of `id` is recorded, oldest first. */
  private async approvedBy(id: string): Promise<string[]> {
    return (await this.ctx.store.listApprovalVotes(id)).map((vote) => vote.principal);
  }

  /** A session ended: its approvals that calls wait on are denied (handoff ones stay until their deadline, R-D-6). Only this host's sessions. */
  async denySession(sessionId: string): Promise<number> {
    const doomed = [...this.pending.values()].filter((entry) => entry.sessionId === sessionId && !entry.handoff && this.isOurs(entry));
    let denied = 0;
    for (const entry of doomed) {
      if (await this.resolve(entry.id, { state: 'denied', reason: 'session_ended', decidedAt: this.ctx.clock.now() })) denied += 1;
    }
    return denied;
  }

  /**
   * At daemon start only (not when a shared store comes back): approvals that
   * an agent's hook waited on when this host's previous daemon ended without
   * settling them (kill -9, a crash, a power cut). That hook answered deny the
   * moment its connection dropped and audited it (its spool line), and a hook
   * never re-attaches, so approving one would run nothing: each is denied as
   * `shutdown`, and no one is asked to decide a call that can no longer run.
   */
  async denyOrphanedHookApprovals(): Promise<number> {
    let denied = 0;
    for (const record of await this.ctx.store.listApprovals({ state: 'pending' })) {
      if (record.caller['head'] !== 'hook') continue;
      if (record.hostId !== undefined && this.ctx.hostId !== undefined && record.hostId !== this.ctx.hostId) continue;
      // Filed by this run (a hook that came in meanwhile waits on it) is not an orphan.
      if (record.requestedAt >= this.createdAt || this.pending.get(record.id)?.waitedOn === true) continue;
      if (await this.resolve(record.id, { state: 'denied', reason: 'shutdown', decidedAt: this.ctx.clock.now() })) denied += 1;
    }
    return denied;
  }

  /** Graceful shutdown: denies what live calls wait on (reason `shutdown`) and stops every deadline. */
  async stop(): Promise<number> {
    const waitedOn = [...this.pending.values()].filter((entry) => !entry.handoff && entry.waitedOn);
    const results = await Promise.all(
      waitedOn.map(async (entry) => {
        try {
          return await this.resolve(entry.id, { state: 'denied', reason: 'shutdown', decidedAt: this.ctx.clock.now() });
        } catch (error) {
          this.ctx.logger.warn('could not record a shutdown denial; the waiting call is told anyway', { approvalId: entry.id, error });
          this.settleLocally(entry.id, { state: 'denied', reason: 'shutdown' });
          return true;
        }
      }),
    );
    this.deadlines.clear();
    return results.filter(Boolean).length;
  }

  /** Filed by this host (always, with an embedded store). */
  private isOurs(entry: PendingApproval): boolean {
    return entry.hostId === undefined || this.ctx.hostId === undefined || entry.hostId === this.ctx.hostId;
  }

  /**
   * The session's pending handoff approvals (R-MCP-8): how many there are, and the
   * one for this exact call if there is one.
   */
  findHandoff(call: { sessionId: string; server: string; tool: string; argsSha256: string }): { approvalId?: string; pendingInSession: number } {
    let pendingInSession = 0;
    for (const entry of this.pending.values()) {
      if (!entry.handoff || entry.sessionId !== call.sessionId) continue;
      pendingInSession += 1;
      if (entry.server === call.server && entry.tool === call.tool && entry.argsSha256 === call.argsSha256) return { approvalId: entry.id, pendingInSession };
    }
    return { pendingInSession };
  }

  get size(): number {
    return this.pending.size;
  }

  /** Pending approvals at least one live call waits on. */
  waitedOnCount(): number {
    let count = 0;
    for (const entry of this.pending.values()) if (entry.waitedOn) count += 1;
    return count;
  }

  private remember(view: ApprovalView): PendingApproval {
    const entry = new PendingApproval(view);
    this.pending.set(view.id, entry);
    return entry;
  }
}
