// Approvals and their lifecycle: filing (durable, then announced), deadlines,
// the parties waiting on each, and resolution as a compare-and-set in the
// journal, where the first resolver wins and every channel is told (R-D-6).
// It also answers what is pending, as views or as ready JSON text (SPEC §14).
import type { Notification } from '../channels/notifier.js';
import { AssentError } from '../core/errors.js';
import { newApprovalId } from '../core/ids.js';
import { JsonText } from '../core/jsonText.js';
import type { ApprovalRecord } from '../journal/journal.js';
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
}

/** A resolution as it is written: the journal's fields and who decided. */
export type ResolutionInput = { state: 'approved' | 'denied' | 'expired'; channel?: string; reason?: string; scope?: 'call' | 'session'; decidedAt: number } & DecidedBy;

/** What a filed approval carries; the queue adds its id, times and state. */
export type ApprovalFiling = Omit<ApprovalRecord, 'id' | 'requestedAt' | 'expiresAt' | 'state' | 'handoff'> & { handoff?: boolean };

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
    this.deadlines = new Deadlines(ctx.timers, () => ctx.clock.now(), (id) =>
      this.resolve(id, { state: 'expired', reason: 'consent_timeout', decidedAt: ctx.clock.now() }),
    );
  }

  /** Takes up the approvals that survived a restart and re-arms their deadlines; stale ones expire at once (R-D-7). */
  restore(): void {
    for (const record of this.ctx.journal.listApprovals({ state: 'pending' })) {
      this.remember(toApprovalView(record));
      this.deadlines.set(record.id, record.expiresAt);
    }
  }

  /** Files an approval: durable first, then its deadline, the event with its arguments for live subscribers, and the notification. */
  file(input: ApprovalFiling, timeoutMs: number = this.ctx.pinned().config.policy.consentTimeoutSeconds * 1000): ApprovalRecord {
    const { journal, clock, random } = this.ctx;
    const requestedAt = clock.now();
    let id = newApprovalId(random);
    for (let attempt = 0; journal.getApproval(id) !== undefined; attempt += 1) {
      if (attempt > 50) throw new AssentError('internal', 'could not allocate a free approval id');
      id = newApprovalId(random);
    }
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
    journal.insertApproval(record);
    this.deadlines.set(record.id, record.expiresAt);
    const view = toApprovalView(record);
    this.remember(view);
    this.ctx.bus.publish('approval_requested', { approval: view, args: record.args, action: record.action }, record.sessionId);
    const subject = record.kind === 'tool' ? `${record.server}/${record.tool}` : 'a command';
    const notification: Notification = { title: `assent: approval ${id}`, body: `${subject} is waiting for your decision. Run: assent approve ${id}`, approvalId: id };
    // Who asks, for a push: names only, never an argument (R-REM-4).
    if (record.server !== undefined) notification.server = record.server;
    if (record.tool !== undefined) notification.tool = record.tool;
    if (record.caller['head'] === 'hook' && typeof record.caller['agent'] === 'string') notification.agent = record.caller['agent'];
    this.ctx.notifier.notify(notification);
    return record;
  }

  /** Compare-and-set in the journal; the first resolver wins and every channel is told (R-D-6). */
  resolve(id: string, resolution: ResolutionInput): boolean {
    const { claimedChannel, peer, ...stored } = resolution;
    if (!this.ctx.journal.resolveApproval(id, stored)) return false;
    const entry = this.pending.get(id);
    this.pending.delete(id);
    this.deadlines.delete(id);
    const sessionId = entry?.sessionId ?? this.ctx.journal.getApproval(id)?.sessionId;
    const data: Record<string, unknown> = { id, state: resolution.state };
    if (resolution.channel !== undefined) data['channel'] = resolution.channel;
    if (resolution.reason !== undefined) data['reason'] = resolution.reason;
    if (resolution.scope !== undefined) data['scope'] = resolution.scope;
    if (claimedChannel !== undefined) data['claimedChannel'] = claimedChannel;
    if (peer !== undefined) data['peer'] = peer;
    this.ctx.bus.publish('approval_resolved', data, sessionId);
    const waiting = entry?.takeWaiters() ?? [];
    if (waiting.length > 0) {
      const result: Resolution = { state: resolution.state };
      if (resolution.channel !== undefined) result.channel = resolution.channel;
      if (resolution.reason !== undefined) result.reason = resolution.reason;
      if (resolution.scope !== undefined) result.scope = resolution.scope;
      if (claimedChannel !== undefined) result.claimedChannel = claimedChannel;
      if (peer !== undefined) result.peer = peer;
      for (const waiter of waiting) waiter.wake(result);
    }
    return true;
  }

  /** A person's decision (R-D-5): refused once the approval is resolved or past its deadline. Returns the record as it was before. */
  decide(params: DecideParams): ApprovalRecord {
    const { journal, clock } = this.ctx;
    const record = journal.getApproval(params.id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
    if (record.state !== 'pending') {
      throw new AssentError('conflict', `approval ${params.id} was already ${record.state}${record.channel ? ` (via ${record.channel})` : ''}`, {
        details: { state: record.state },
      });
    }
    if (record.expiresAt <= clock.now()) {
      this.resolve(params.id, { state: 'expired', reason: 'consent_timeout', decidedAt: clock.now() });
      throw new AssentError('conflict', `approval ${params.id} expired before the decision arrived`, { details: { state: 'expired' } });
    }
    const resolution: { state: 'approved' | 'denied'; channel: string; reason?: string; scope?: 'call' | 'session'; decidedAt: number } & DecidedBy = {
      state: params.behavior === 'allow' ? 'approved' : 'denied',
      channel: params.channel,
      decidedAt: clock.now(),
    };
    if (params.claimedChannel !== undefined) resolution.claimedChannel = params.claimedChannel;
    if (params.peer !== undefined) resolution.peer = params.peer;
    if (params.behavior === 'deny') resolution.reason = params.reason ?? 'consent_denied';
    if (params.behavior === 'allow') resolution.scope = params.scope ?? 'call';
    if (!this.resolve(params.id, resolution)) {
      const now = journal.getApproval(params.id);
      throw new AssentError('conflict', `approval ${params.id} was already ${now?.state ?? 'resolved'}`, { details: { state: now?.state } });
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

  /** The approval's pending entry, or its resolution when it is resolved already. */
  pendingOrResolved(id: string): PendingApproval | Resolution {
    const entry = this.pending.get(id);
    if (entry !== undefined) return entry;
    const current = this.ctx.journal.getApproval(id);
    if (current === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    if (current.state === 'pending') return this.remember(toApprovalView(current));
    const done: Resolution = { state: current.state };
    if (current.channel !== undefined) done.channel = current.channel;
    if (current.reason !== undefined) done.reason = current.reason;
    if (current.scope !== undefined) done.scope = current.scope;
    return done;
  }

  /** Resolves with the approval's resolution; a dropped connection detaches the waiter (R-D-7), a cancel is ignored. */
  waitForResolution(id: string, watch: WatchRequest | undefined): Promise<Resolution> {
    let entry: PendingApproval | Resolution;
    try {
      entry = this.pendingOrResolved(id);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (!(entry instanceof PendingApproval)) return Promise.resolve(entry);
    const pending = entry;
    return new Promise<Resolution>((resolvePromise) => {
      this.addWaiter(pending, new ResolutionWaiter(this, pending, resolvePromise), watch);
    });
  }

  /** `approvals.wait`: re-attach to a pending approval, e.g. after a daemon restart (R-D-7). */
  async wait(id: string, watch?: WatchRequest): Promise<ApprovalView> {
    await this.waitForResolution(id, watch);
    return this.get(id);
  }

  addWaiter(entry: PendingApproval, waiter: Waiter, watch: WatchRequest | undefined): void {
    entry.addWaiter(waiter);
    watch?.(waiter);
  }

  /** The caller withdrew a waiting call: its approval is resolved as cancelled. */
  withdraw(entry: PendingApproval, waiter: Waiter): void {
    // Only a call still waiting can be withdrawn.
    if (!entry.isWaiting(waiter)) return;
    this.resolve(entry.id, { state: 'denied', reason: 'cancelled', decidedAt: this.ctx.clock.now() });
  }

  /** A waiter's connection dropped: it stops waiting, and the approval is denied unless someone re-attaches in time (R-D-7). */
  detach(entry: PendingApproval, waiter: Waiter): void {
    // Resolved, or detached already: nothing to do.
    if (!entry.removeWaiter(waiter)) return;
    this.ctx.timers.setTimeout(() => {
      const current = this.pending.get(entry.id);
      if (current === undefined || current.handoff || current.waitedOn) return;
      this.resolve(entry.id, { state: 'denied', reason: 'session_ended', decidedAt: this.ctx.clock.now() });
    }, this.reattachGraceMs);
  }

  /** `approvals.list` for the heads: pending approvals come back as ready JSON text. */
  listAsJson(options: ListOptions = {}): JsonText | ApprovalView[] {
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

  list(options: ListOptions = {}): ApprovalView[] {
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
    const views = this.ctx.journal.listApprovals(filter).map(toApprovalView);
    const selected = views.filter((view) => matchesSelector(view, options.selector));
    return options.limit === undefined ? selected : selected.slice(0, options.limit);
  }

  get(id: string): ApprovalView {
    const record = this.ctx.journal.getApproval(id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    return toApprovalView(record);
  }

  /** A session ended: its approvals that calls wait on are denied (handoff ones stay until their deadline, R-D-6). */
  denySession(sessionId: string): number {
    let denied = 0;
    for (const record of this.ctx.journal.listApprovals({ state: 'pending' })) {
      if (record.sessionId === sessionId && !record.handoff) {
        if (this.resolve(record.id, { state: 'denied', reason: 'session_ended', decidedAt: this.ctx.clock.now() })) denied += 1;
      }
    }
    return denied;
  }

  /** Graceful shutdown: denies what live calls wait on (reason `shutdown`) and stops every deadline. */
  stop(): number {
    let denied = 0;
    const waitedOn = [...this.pending.values()].filter((entry) => !entry.handoff && entry.waitedOn);
    for (const entry of waitedOn) {
      if (this.resolve(entry.id, { state: 'denied', reason: 'shutdown', decidedAt: this.ctx.clock.now() })) denied += 1;
    }
    this.deadlines.clear();
    return denied;
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
