// Approvals and their lifecycle: filing (durable, then announced), deadlines,
// the parties waiting on each, and resolution as a compare-and-set in the
// store, where the first resolver wins and every channel is told (R-D-6).
// It also answers what is pending, as views or as ready JSON text (SPEC §14).
// In a store shared by several hosts (R-TEAM-2) it also holds the other hosts'
// pending approvals, taken up and settled as their events arrive.
import { AssentError } from '../core/errors.js';
import { newApprovalId } from '../core/ids.js';
import { JsonText } from '../core/jsonText.js';
import type { ApprovalRecord } from '../journal/journal.js';
import type { RemoteEvent } from '../journal/store.js';
import { matchesSelector, toApprovalView, type ApprovalView, type DecisionPeer } from './approvalViews.js';
import { Deadlines } from './deadlines.js';
import { PendingApproval, type DecidedBy, type RequestEnd, type Resolution, type Waiter, type WatchRequest } from './pendingApproval.js';
import type { ServiceContext } from './serviceContext.js';

export interface DecideParams {
  id: string;
  behavior: 'allow' | 'deny';
  scope?: 'call' | 'session';
  reason?: string;
  /** Stamped by the head the decision came through (`cli` for the socket, `web` for HTTP); never taken from params. */
  channel: string;
  /** What the deciding client said it was (e.g. `tty`, `watch`): recorded beside `channel` as a hint only. */
  claimedChannel?: string;
  /** The deciding process, found by the head (socket peer lookup). */
  peer?: DecisionPeer;
  /** Who decided (the call context's principal); a shared store records it, so a later decision is told who won. */
  principal?: string;
}

/** A resolution as it is written: the journal's fields and who decided. */
export type ResolutionInput = {
  state: 'approved' | 'denied' | 'expired';
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt: number;
  decidedBy?: string;
} & DecidedBy;

/** What a filed approval carries; the queue adds its id, times and state. */
export type ApprovalFiling = Omit<ApprovalRecord, 'id' | 'requestedAt' | 'expiresAt' | 'state' | 'handoff' | 'hostId' | 'decidedBy'> & { handoff?: boolean };

export interface ListOptions {
  selector?: string;
  state?: ApprovalRecord['state'];
  limit?: number;
}

/** What a person reads when a waiting call or command was not approved, by denial reason. */
export const DENIAL_HELP: Record<string, string> = {
  consent_denied: 'The operator denied this call.',
  consent_timeout: 'No one answered before the approval expired.',
  session_ended: 'The session ended while the call was waiting.',
  shutdown: 'The assent daemon shut down while the call was waiting.',
  cancelled: 'The caller withdrew the call before anyone decided.',
};

/** About how long one piece of a serialized pending list is (see listAsJson). */
const LIST_PIECE_CHARS = 32 * 1024;

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

  constructor(
    private readonly ctx: ServiceContext,
    options: ApprovalQueueOptions = {},
  ) {
    this.reattachGraceMs = options.reattachGraceMs ?? 5_000;
    this.deadlines = new Deadlines(ctx.timers, () => ctx.clock.now(), (id) => this.expire(id));
  }

  /**
   * Takes up the pending approvals in the store (those that survived a restart,
   * and in a shared store every host's) and re-arms their deadlines; stale ones
   * expire at once (R-D-7). Run again after the shared store came back: entries
   * whose approval was resolved meanwhile are settled from the store (R-TEAM-2).
   */
  async restore(): Promise<void> {
    const records = await this.ctx.store.listApprovals({ state: 'pending' });
    const stillPending = new Set<string>();
    for (const record of records) {
      stillPending.add(record.id);
      if (!this.pending.has(record.id)) this.remember(toApprovalView(record));
      this.deadlines.set(record.id, record.expiresAt);
    }
    for (const id of [...this.pending.keys()]) if (!stillPending.has(id)) await this.settleFromStore(id);
  }

  /** A deadline passed: expire it; while the store cannot be reached the local waiters are told at once, and the store catches up later. */
  private expire(id: string): void {
    const resolution: ResolutionInput = { state: 'expired', reason: 'consent_timeout', decidedAt: this.ctx.clock.now() };
    if (this.ctx.store.shared) resolution.decidedBy = `host ${this.ctx.hostName}`;
    this.resolve(id, resolution).catch((error: unknown) => {
      this.ctx.logger.warn('could not record an expired approval; its waiting calls end as consent_timeout and it expires in the store once it is back', { approvalId: id, error });
      this.settleLocally(id, { state: 'expired', reason: 'consent_timeout' });
    });
  }

  /** Files an approval: durable first, then its deadline, the event with its arguments for live subscribers, and the notification. */
  async file(input: ApprovalFiling, timeoutMs: number = this.ctx.pinned().config.policy.consentTimeoutSeconds * 1000): Promise<ApprovalRecord> {
    const { store, clock, random } = this.ctx;
    const requestedAt = clock.now();
    let record: ApprovalRecord | undefined;
    // The store's key is the final word on a free id; a taken one (rare) draws again.
    for (let attempt = 0; record === undefined; attempt += 1) {
      let id = newApprovalId(random);
      while (this.pending.has(id)) id = newApprovalId(random);
      // Built field by field: an object spread followed by more fields gives every record its own hidden class in V8.
      const candidate: ApprovalRecord = {
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
      if (input.server !== undefined) candidate.server = input.server;
      if (input.tool !== undefined) candidate.tool = input.tool;
      if (input.args !== undefined) candidate.args = input.args;
      if (input.action !== undefined) candidate.action = input.action;
      if (store.shared) candidate.hostId = store.hostId;
      try {
        await store.insertApproval(candidate);
        record = candidate;
      } catch (error) {
        if (!(error instanceof AssentError && error.type === 'conflict') || attempt >= 50) {
          throw error instanceof AssentError && error.type === 'conflict' ? new AssentError('internal', 'could not allocate a free approval id') : error;
        }
      }
    }
    this.deadlines.set(record.id, record.expiresAt);
    const view = toApprovalView(record);
    this.remember(view);
    this.ctx.bus.publish('approval_requested', { approval: view, args: record.args, action: record.action }, record.sessionId);
    const subject = record.kind === 'tool' ? `${record.server}/${record.tool}` : 'a command';
    this.ctx.notifier.notify({ title: `assent: approval ${record.id}`, body: `${subject} is waiting for your decision. Run: assent approve ${record.id}`, approvalId: record.id });
    return record;
  }

  /**
   * Compare-and-set in the store; the first resolver wins and every channel is
   * told (R-D-6). `beforeAnnounce` runs for the winner after the store took the
   * resolution and before anyone hears of it (a proof the allow issues exists
   * before a waiter or another host could look for it).
   */
  async resolve(id: string, resolution: ResolutionInput, beforeAnnounce?: () => Promise<void>): Promise<boolean> {
    const { claimedChannel: _claimed, peer: _peer, ...stored } = resolution;
    if (!(await this.ctx.store.resolveApproval(id, stored))) {
      // Another host may have won without its event reaching us yet: settle our waiters from the store.
      if (this.ctx.store.shared && this.pending.has(id)) await this.settleFromStore(id);
      return false;
    }
    if (beforeAnnounce !== undefined) {
      try {
        await beforeAnnounce();
      } finally {
        await this.announce(id, resolution);
      }
      return true;
    }
    await this.announce(id, resolution);
    return true;
  }

  private async announce(id: string, resolution: ResolutionInput): Promise<void> {
    const { claimedChannel, peer } = resolution;
    const entry = this.pending.get(id);
    const sessionId = entry?.sessionId ?? (await this.ctx.store.getApproval(id))?.sessionId;
    const data: Record<string, unknown> = { id, state: resolution.state };
    if (resolution.channel !== undefined) data['channel'] = resolution.channel;
    if (resolution.reason !== undefined) data['reason'] = resolution.reason;
    if (resolution.scope !== undefined) data['scope'] = resolution.scope;
    if (resolution.decidedBy !== undefined) data['decidedBy'] = resolution.decidedBy;
    if (claimedChannel !== undefined) data['claimedChannel'] = claimedChannel;
    if (peer !== undefined) data['peer'] = peer;
    void this.ctx.bus.publish('approval_resolved', data, sessionId);
    this.settleLocally(id, resolutionOf(data));
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
    this.settleLocally(id, resolutionOf(current as unknown as Record<string, unknown>));
  }

  /**
   * Another host filed an approval or resolved one (R-TEAM-2): it is listed
   * here too (with its arguments, read from the store, so an approver sees what
   * it approves), or leaves the list and wakes what waits on it here. Returns
   * the event data as local subscribers get it, or undefined when there is
   * nothing to tell them.
   */
  async applyRemote(event: RemoteEvent): Promise<Record<string, unknown> | undefined> {
    if (event.kind === 'approval_requested') {
      const approval = event.data['approval'] as { id?: unknown } | undefined;
      const id = typeof approval?.id === 'string' ? approval.id : undefined;
      if (id === undefined) return undefined;
      const record = await this.ctx.store.getApproval(id);
      if (record === undefined || record.state !== 'pending') return undefined;
      const view = toApprovalView(record);
      if (!this.pending.has(id)) this.remember(view);
      this.deadlines.set(id, record.expiresAt);
      return { ...event.data, approval: view, args: record.args, action: record.action };
    }
    if (event.kind === 'approval_resolved') {
      const id = event.data['id'];
      if (typeof id === 'string') this.settleLocally(id, resolutionOf(event.data));
      return event.data;
    }
    return event.data;
  }

  /**
   * A person's decision (R-D-5): refused once the approval is resolved or past
   * its deadline. Returns the record as it was before (with its arguments, which
   * a shared store drops on resolution). `onDecided` gets that record as decided,
   * before the decision is announced.
   */
  async decide(params: DecideParams, onDecided?: (decided: ApprovalRecord) => Promise<void>): Promise<ApprovalRecord> {
    const { store, clock } = this.ctx;
    const record = await store.getApproval(params.id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
    if (record.state !== 'pending') throw alreadyDecided(record);
    if (record.expiresAt <= clock.now()) {
      await this.resolve(params.id, { state: 'expired', reason: 'consent_timeout', decidedAt: clock.now() });
      throw new AssentError('conflict', `approval ${params.id} expired before the decision arrived`, { details: { state: 'expired' } });
    }
    const resolution: ResolutionInput = {
      state: params.behavior === 'allow' ? 'approved' : 'denied',
      channel: params.channel,
      decidedAt: clock.now(),
    };
    if (params.claimedChannel !== undefined) resolution.claimedChannel = params.claimedChannel;
    if (params.peer !== undefined) resolution.peer = params.peer;
    if (params.principal !== undefined) resolution.decidedBy = params.principal;
    if (params.behavior === 'deny') resolution.reason = params.reason ?? 'consent_denied';
    if (params.behavior === 'allow') resolution.scope = params.scope ?? 'call';
    const decided: ApprovalRecord = { ...record, state: resolution.state as ApprovalRecord['state'], channel: params.channel, decidedAt: resolution.decidedAt };
    if (resolution.scope !== undefined) decided.scope = resolution.scope;
    if (resolution.reason !== undefined) decided.reason = resolution.reason;
    if (resolution.decidedBy !== undefined) decided.decidedBy = resolution.decidedBy;
    if (!(await this.resolve(params.id, resolution, onDecided === undefined ? undefined : () => onDecided(decided)))) {
      const now = await store.getApproval(params.id);
      throw now === undefined ? new AssentError('conflict', `approval ${params.id} was already resolved`) : alreadyDecided(now);
    }
    this.ctx.logger.info('approval decided', {
      approvalId: params.id,
      behavior: params.behavior,
      channel: params.channel,
      ...(params.claimedChannel === undefined ? {} : { claimedChannel: params.claimedChannel }),
      ...(params.peer === undefined ? {} : { peer: params.peer }),
    });
    return record;
  }

  /** The approval's pending entry (from memory when it is there), or its resolution when it is resolved already. */
  async pendingOrResolved(id: string): Promise<PendingApproval | Resolution> {
    const entry = this.pending.get(id);
    if (entry !== undefined) return entry;
    const current = await this.ctx.store.getApproval(id);
    if (current === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    if (current.state === 'pending') return this.pending.get(id) ?? this.remember(toApprovalView(current));
    const done: Resolution = { state: current.state };
    if (current.channel !== undefined) done.channel = current.channel;
    if (current.reason !== undefined) done.reason = current.reason;
    if (current.scope !== undefined) done.scope = current.scope;
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

  /** The caller withdrew a waiting call: its approval is resolved as cancelled. */
  withdraw(entry: PendingApproval, waiter: Waiter): void {
    // Only a call still waiting can be withdrawn.
    if (!entry.isWaiting(waiter)) return;
    this.resolveQuietly(entry.id, { state: 'denied', reason: 'cancelled', decidedAt: this.ctx.clock.now() });
  }

  /** A lifecycle resolution from a callback or timer: never throws; one the store refused settles the local waiters anyway. */
  private resolveQuietly(id: string, resolution: ResolutionInput): void {
    this.resolve(id, resolution).catch((error: unknown) => {
      this.ctx.logger.warn('could not record the resolution of an approval; its waiting calls are told anyway', { approvalId: id, reason: resolution.reason, error });
      this.settleLocally(id, resolutionOf(resolution as unknown as Record<string, unknown>));
    });
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

  /** `approvals.list` for the heads: pending approvals come back as ready JSON text, from memory. */
  listAsJson(options: ListOptions = {}): JsonText | Promise<ApprovalView[]> {
    if ((options.state ?? 'pending') !== 'pending') return this.list(options);
    // Joined in batches of about 32 KiB: each piece stays an ordinary young object
    // instead of one large copy of the whole list (SPEC §14).
    const pieces: string[] = ['['];
    let batch: string[] = [];
    let batchChars = 0;
    let count = 0;
    const flush = (): void => {
      if (batch.length === 0) return;
      if (pieces.length > 1) pieces.push(',');
      pieces.push(batch.join(','));
      batch = [];
      batchChars = 0;
    };
    for (const entry of this.pending.values()) {
      if (options.limit !== undefined && count >= options.limit) break;
      if (!matchesSelector(entry, options.selector)) continue;
      batch.push(entry.json);
      batchChars += entry.json.length + 1;
      count += 1;
      if (batchChars >= LIST_PIECE_CHARS) flush();
    }
    flush();
    pieces.push(']');
    return new JsonText(pieces);
  }

  /** Pending approvals from memory; those in another state from the store. */
  async list(options: ListOptions = {}): Promise<ApprovalView[]> {
    if ((options.state ?? 'pending') === 'pending') {
      const selected: ApprovalView[] = [];
      for (const entry of this.pending.values()) {
        if (matchesSelector(entry, options.selector)) selected.push(JSON.parse(entry.json) as ApprovalView);
        if (options.limit !== undefined && selected.length >= options.limit) break;
      }
      return selected;
    }
    const filter: { state?: ApprovalRecord['state']; limit?: number } = { state: options.state ?? 'pending' };
    if (options.limit !== undefined && options.selector === undefined) filter.limit = options.limit;
    const views = (await this.ctx.store.listApprovals(filter)).map(toApprovalView);
    const selected = views.filter((view) => matchesSelector(view, options.selector));
    return options.limit === undefined ? selected : selected.slice(0, options.limit);
  }

  async get(id: string): Promise<ApprovalView> {
    const record = await this.ctx.store.getApproval(id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    return toApprovalView(record);
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
    return entry.hostId === undefined || entry.hostId === this.ctx.store.hostId;
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

/** A resolution as its waiters hear it, from an event's data or a stored record. */
function resolutionOf(data: Record<string, unknown>): Resolution {
  const result: Resolution = { state: data['state'] as Resolution['state'] };
  for (const key of ['channel', 'reason', 'claimedChannel', 'decidedBy'] as const) {
    const value = data[key];
    if (typeof value === 'string') result[key] = value;
  }
  if (data['scope'] === 'call' || data['scope'] === 'session') result.scope = data['scope'];
  if (typeof data['peer'] === 'object' && data['peer'] !== null) result.peer = data['peer'] as NonNullable<Resolution['peer']>;
  return result;
}

/** The refusal of a decision that came too late: says how the approval ended, and in a shared store who decided it. */
function alreadyDecided(record: ApprovalRecord): AssentError {
  const by = record.decidedBy !== undefined ? ` by ${record.decidedBy}` : '';
  const via = record.channel !== undefined ? ` (via ${record.channel})` : '';
  return new AssentError('conflict', `approval ${record.id} was already ${record.state}${by}${via}; nothing was changed`, {
    details: record.decidedBy === undefined ? { state: record.state } : { state: record.state, decidedBy: record.decidedBy },
  });
}
