// One approval between filing and resolution, as the service holds it, and the
// parties that wait on it. Ten thousand may be pending at once (SPEC §14), so
// each keeps only what selectors match on, its view as JSON text and its waiters.
import type { Presence } from '../core/policy/presencePolicy.js';
import type { ApprovalRecord } from '../journal/journal.js';
import type { ApprovalView, DecisionPeer } from './approvalViews.js';

/** How the request carrying a waiting call ended before its approval resolved: withdrawn by its caller, or its connection dropped. */
export type RequestEnd = 'cancelled' | 'disconnected';

/** Told at most once if the request carrying a waiting call ends before the approval resolves. */
export interface RequestEndListener {
  requestEnded(how: RequestEnd): void;
}

/**
 * Lets a waiting call follow the request that carries it: hands the head a
 * listener to tell if that request ends first (R-D-6, R-D-7).
 */
export type WatchRequest = (listener: RequestEndListener) => void;

/**
 * Where a head takes a request's result later, outside the promise its
 * handler returned: a call that waits for a person then holds no promise, no
 * resolving functions and no reaction while it waits (SPEC §14: ten thousand
 * may wait at once). Settled at most once.
 */
export interface DeferredReply {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** What a handler's promise resolves to when the result goes to its DeferredReply instead: the head sends nothing for it. */
export const REPLY_DEFERRED: unique symbol = Symbol('reply deferred');

/** Who decided, beyond the stamped channel: carried from the decision to the audit line of the call it decided. */
export interface DecidedBy {
  claimedChannel?: string;
  peer?: DecisionPeer;
  /** The principal whose decision resolved the approval (R-TEAM-3). */
  decidedBy?: string;
  /** Every principal whose approval is recorded, oldest first (one for a plain approval, N for a quorum). */
  approvedBy?: string[];
  /** An approval confirmed by a passkey's assertion (R-REM-6): which credential made it. */
  presence?: Presence;
  credentialId?: string;
}

/** How an approval was resolved, as its waiters hear it. */
export type Resolution = Pick<ApprovalRecord, 'state' | 'channel' | 'reason' | 'scope' | 'decidedBy'> & DecidedBy;

/** The decision attribution of a resolution, or undefined when it has none. */
export function decidedByOf(resolution: DecidedBy): DecidedBy | undefined {
  const by: DecidedBy = {};
  if (resolution.claimedChannel !== undefined) by.claimedChannel = resolution.claimedChannel;
  if (resolution.peer !== undefined) by.peer = resolution.peer;
  if (resolution.decidedBy !== undefined) by.decidedBy = resolution.decidedBy;
  if (resolution.approvedBy !== undefined) by.approvedBy = resolution.approvedBy;
  if (resolution.presence !== undefined) by.presence = resolution.presence;
  if (resolution.credentialId !== undefined) by.credentialId = resolution.credentialId;
  return Object.keys(by).length === 0 ? undefined : by;
}

/** Copies who decided onto an audit record (R-AUD-1, R-TEAM-3). */
export function recordDecidedBy(record: { claimedChannel?: string; peer?: DecisionPeer; decidedBy?: string; approvedBy?: string[]; presence?: Presence; credentialId?: string }, by: DecidedBy | undefined): void {
  if (by === undefined) return;
  if (by.claimedChannel !== undefined) record.claimedChannel = by.claimedChannel;
  if (by.peer !== undefined) record.peer = by.peer;
  if (by.decidedBy !== undefined) record.decidedBy = by.decidedBy;
  if (by.approvedBy !== undefined) record.approvedBy = by.approvedBy;
  if (by.presence !== undefined) record.presence = by.presence;
  if (by.credentialId !== undefined) record.credentialId = by.credentialId;
}

/** One party waiting on a pending approval: woken once by its resolution, unless its request ended first. */
export interface Waiter extends RequestEndListener {
  wake(resolution: Resolution): void;
}

const NO_APPROVALS: readonly string[] = Object.freeze([]);

/**
 * A pending approval: what selectors match on, its view as JSON text
 * (serialized once, when filed) and the calls waiting on it. Arguments are
 * kept only inside that text, so thousands stay cheap to hold and to list.
 */
export class PendingApproval {
  readonly id: string;
  readonly sessionId: string;
  readonly server: string | undefined;
  readonly tool: string | undefined;
  readonly argsSha256: string;
  readonly handoff: boolean;
  /** The host that filed it, when the view names it (always in a shared store, R-TEAM-2). */
  readonly hostId: string | undefined;
  /** The view as JSON text; replaced when a principal's approval is recorded (quorum) so lists show it. */
  json: string;
  /** Principals whose approval is recorded so far (R-TEAM-3). */
  approvedBy: readonly string[];
  /** Who waits on it: nobody, one waiter (the usual case, kept without an array) or several. */
  private waiting: Waiter | Waiter[] | undefined = undefined;
  /** Set once it is resolved: a waiter that arrives after that is woken at once instead of waiting forever. */
  settledAs: Resolution | undefined = undefined;

  constructor(view: ApprovalView) {
    this.id = view.id;
    this.sessionId = view.sessionId;
    this.server = view.server;
    this.tool = view.tool;
    this.argsSha256 = view.argsSha256;
    this.handoff = view.handoff === true;
    this.hostId = view.hostId;
    this.approvedBy = view.approvedBy ?? NO_APPROVALS;
    this.json = flatString(JSON.stringify(view));
  }

  /** A principal's approval was recorded and the approval stays pending: lists show the new view. */
  updateView(view: ApprovalView): void {
    this.approvedBy = view.approvedBy ?? NO_APPROVALS;
    this.json = flatString(JSON.stringify(view));
  }

  get waitedOn(): boolean {
    return this.waiting !== undefined;
  }

  addWaiter(waiter: Waiter): void {
    if (this.waiting === undefined) this.waiting = waiter;
    else if (Array.isArray(this.waiting)) this.waiting.push(waiter);
    else this.waiting = [this.waiting, waiter];
  }

  isWaiting(waiter: Waiter): boolean {
    return this.waiting === waiter || (Array.isArray(this.waiting) && this.waiting.includes(waiter));
  }

  /** Removes a waiter; false when it was not waiting (woken or removed already). */
  removeWaiter(waiter: Waiter): boolean {
    if (this.waiting === waiter) {
      this.waiting = undefined;
      return true;
    }
    if (!Array.isArray(this.waiting)) return false;
    const index = this.waiting.indexOf(waiter);
    if (index === -1) return false;
    this.waiting.splice(index, 1);
    if (this.waiting.length === 1) this.waiting = this.waiting[0];
    return true;
  }

  /** Marks it resolved and hands over every waiter, to be woken once. */
  settle(resolution: Resolution): Waiter[] {
    this.settledAs = resolution;
    return this.takeWaiters();
  }

  /** Every waiter, removed from the approval: for waking them once it resolved. */
  takeWaiters(): Waiter[] {
    const waiting = this.waiting;
    this.waiting = undefined;
    return waiting === undefined ? [] : Array.isArray(waiting) ? waiting : [waiting];
  }
}

/**
 * V8 builds a long JSON.stringify result as a tree of pieces; reading it as a
 * number makes it one flat string, which holds the same text in less memory.
 */
function flatString(text: string): string {
  void Number(text);
  return text;
}
