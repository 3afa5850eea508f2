// Approvals and their lifecycle: filing (durable, then announced), deadlines,
// the parties waiting on each, and resolution as a compare-and-set in the
// journal, where the first resolver wins and every channel is told (R-D-6).
// It also answers what is pending, as views or as ready JSON text (SPEC §14).
import type { Notification } from '../channels/notifier.js';
import { countedApprovals, judgeDecision, type DecisionRules, type DecisionVerdict } from '../core/approvalRules.js';
import type { Config } from '../core/config.js';
import { AssentError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import { newApprovalId } from '../core/ids.js';
import { JsonText } from '../core/jsonText.js';
import { presenceFor, type Presence } from '../core/presencePolicy.js';
import { quorumFor } from '../core/teamConfig.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { ApprovalRecord, ApprovalResolution, ApprovalVote } from '../journal/journal.js';
import { matchesSelector, toApprovalView, type ApprovalView, type DecisionPeer } from './approvalViews.js';
import { Deadlines } from './deadlines.js';
import { PendingApproval, recordDecidedBy, type DecidedBy, type RequestEnd, type Resolution, type Waiter, type WatchRequest } from './pendingApproval.js';
import { writeAudit, type ServiceContext } from './serviceContext.js';

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
  /**
   * Who decides, as the head set it on the call context (R-TEAM-3): `<os user>@<host>`
   * on the socket, `web:…` or `token:…` over HTTP; never a parameter. Default: this host's principal.
   */
  principal?: string;
  /** `--export-proof`: refuse, recording nothing, unless this decision resolves the approval (a proof needs the whole quorum). */
  mustResolve?: boolean;
  /** Set only by the passkey service, after it verified an assertion bound to this approval (R-REM-6). */
  presence?: PresenceConfirmation;
}

/**
 * A verified passkey assertion for one approval. `confirm` runs inside the
 * deciding transaction, before the approval is marked approved: it re-checks
 * what the assertion's verification depended on (the credential is still
 * enrolled, its counter moved on, the action digest is the one bound) and
 * records the new counter; it throws to refuse, and then nothing changes.
 */
export interface PresenceConfirmation {
  presence: Presence;
  credentialId: string;
  confirm(record: ApprovalRecord): void;
}

/** What a decision did (R-TEAM-3). */
export interface DecisionResult {
  /** `resolved`: approved or denied now; `partial`: this approval is recorded and more are needed; `repeat`: this principal had approved already, nothing changed. */
  result: 'resolved' | 'partial' | 'repeat';
  principal: string;
  /** Approvals that count so far (after this decision), and how many the approval needs. */
  approvals: number;
  required: number;
}

/** A decision's result and the approval as it was before it. */
export type DecideOutcome = DecisionResult & { before: ApprovalRecord };

/** A resolution as it is written: the journal's fields and who decided. */
export type ResolutionInput = Omit<ApprovalResolution, 'decidedBy'> & DecidedBy;

/** What the deciding transaction found and did; side effects follow once it committed. */
type DecisionStep =
  | { kind: 'expired'; record: ApprovalRecord }
  | { kind: 'refuse'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'repeat'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'partial'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'resolved'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict; resolution: ResolutionInput };

/** How an already resolved approval is named in a refusal: its state, who resolved it and through which channel. */
function resolvedText(record: Pick<ApprovalRecord, 'state' | 'channel' | 'decidedBy'>): string {
  const by = record.decidedBy === undefined ? '' : ` by ${escapeText(record.decidedBy)}`;
  return `${record.state}${by}${record.channel ? ` (via ${record.channel})` : ''}`;
}

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
    const approvedBy = new Map<string, string[]>();
    for (const vote of this.ctx.journal.listPendingApprovalVotes()) {
      const list = approvedBy.get(vote.approvalId);
      if (list === undefined) approvedBy.set(vote.approvalId, [vote.principal]);
      else list.push(vote.principal);
    }
    for (const record of this.ctx.journal.listApprovals({ state: 'pending' })) {
      this.remember(this.view(record, approvedBy.get(record.id)));
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
    // R-TEAM-3: the session is owned by this host's principal; the rules in force travel with the approval.
    const config = this.ctx.pinned().config;
    record.owner = this.ctx.principal;
    if (this.ctx.hostId !== undefined) record.hostId = this.ctx.hostId;
    if (config.approvals.fourEyes) record.fourEyes = true;
    const quorum = quorumFor(config.policy.quorum, record.server, record.tool);
    if (quorum > 1) record.quorum = quorum;
    journal.insertApproval(record);
    this.deadlines.set(record.id, record.expiresAt);
    const view = this.view(record);
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
    if (!this.ctx.journal.resolveApproval(id, storedResolution(resolution))) return false;
    this.announce(id, resolution);
    return true;
  }

  /** After a resolution committed: the approval leaves the pending view, every channel is told and its waiters wake. */
  private announce(id: string, resolution: ResolutionInput): void {
    const { claimedChannel, peer, decidedBy, presence, credentialId } = resolution;
    const entry = this.pending.get(id);
    this.pending.delete(id);
    this.deadlines.delete(id);
    // A lifecycle end (timeout, session end) of a partly approved approval still names who had approved.
    const approvedBy = resolution.approvedBy ?? (entry !== undefined && entry.approvedBy.length > 0 ? [...entry.approvedBy] : undefined);
    const sessionId = entry?.sessionId ?? this.ctx.journal.getApproval(id)?.sessionId;
    const data: Record<string, unknown> = { id, state: resolution.state };
    if (resolution.channel !== undefined) data['channel'] = resolution.channel;
    if (resolution.reason !== undefined) data['reason'] = resolution.reason;
    if (resolution.scope !== undefined) data['scope'] = resolution.scope;
    if (claimedChannel !== undefined) data['claimedChannel'] = claimedChannel;
    if (peer !== undefined) data['peer'] = peer;
    if (decidedBy !== undefined) data['decidedBy'] = decidedBy;
    if (approvedBy !== undefined) data['approvedBy'] = approvedBy;
    if (presence !== undefined) data['presence'] = presence;
    if (credentialId !== undefined) data['credentialId'] = credentialId;
    this.ctx.bus.publish('approval_resolved', data, sessionId);
    const waiting = entry?.takeWaiters() ?? [];
    if (waiting.length > 0) {
      const result: Resolution = { state: resolution.state };
      if (resolution.channel !== undefined) result.channel = resolution.channel;
      if (resolution.reason !== undefined) result.reason = resolution.reason;
      if (resolution.scope !== undefined) result.scope = resolution.scope;
      if (claimedChannel !== undefined) result.claimedChannel = claimedChannel;
      if (peer !== undefined) result.peer = peer;
      if (decidedBy !== undefined) result.decidedBy = decidedBy;
      if (approvedBy !== undefined) result.approvedBy = approvedBy;
      if (presence !== undefined) result.presence = presence;
      if (credentialId !== undefined) result.credentialId = credentialId;
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
  decide(params: DecideParams): DecideOutcome {
    const { journal, clock } = this.ctx;
    const principal = params.principal ?? this.ctx.principal;
    const config = this.ctx.pinned().config;
    const now = clock.now();
    const step = journal.transaction((): DecisionStep => {
      const record = journal.getApproval(params.id);
      if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
      if (record.state !== 'pending') {
        throw new AssentError('conflict', `approval ${params.id} was already ${resolvedText(record)}`, {
          details: { state: record.state, ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy }) },
        });
      }
      if (record.expiresAt <= now) return { kind: 'expired', record };
      // R-REM-6: only a verified passkey assertion approves such an approval; every channel may deny it.
      const needed = this.presenceNeeded(record);
      if (params.behavior === 'allow' && needed !== undefined && params.presence === undefined) {
        const subject = `${record.server ?? ''}/${record.tool ?? ''}`;
        throw new AssentError(
          'presence_required',
          `approval ${params.id} (${subject}) can only be approved with an enrolled passkey: policy.presence marks ${subject} so that no terminal code, socket call, token or MCP form can approve it. ` +
            `Open it on the paired approval page and approve it there with your passkey (\`assent web\` pairs a page); denying works here (\`assent deny ${params.id}\`). The approval is still pending.`,
          { details: { presence: needed, approvalId: params.id, channel: params.channel } },
        );
      }
      // The passkey's re-check (credential still enrolled, counter moved on, digest bound) commits or refuses with the decision.
      if (params.behavior === 'allow' && params.presence !== undefined) params.presence.confirm(record);
      const votes = journal.listApprovalVotes(record.id);
      const rules = this.rulesFor(record, config);
      const verdict = judgeDecision({ behavior: params.behavior, principal, rules, approvedBy: votes.map((vote) => vote.principal) });
      if (verdict.kind === 'refuse') return { kind: 'refuse', record, votes, verdict };
      if (verdict.kind === 'repeat') {
        if (params.mustResolve === true) {
          throw new AssentError('conflict', `${escapeText(principal)} approved ${params.id} already; no proof was issued. Another principal must complete its quorum.`, {
            details: { reason: 'quorum', approvals: verdict.approvals, required: verdict.required },
          });
        }
        return { kind: 'repeat', record, votes, verdict };
      }
      if (params.mustResolve === true && verdict.kind === 'partial') {
        throw new AssentError(
          'conflict',
          `approval ${params.id} needs ${verdict.required} distinct approvals (policy.quorum) and has ${verdict.approvals - 1}; a proof can only be exported ` +
            'by the approval that completes it. Nothing was recorded: approve it without --export-proof, or let the last approver export the proof.',
          { details: { reason: 'quorum', approvals: verdict.approvals - 1, required: verdict.required } },
        );
      }
      if (params.behavior === 'allow') {
        const vote: ApprovalVote = { approvalId: record.id, principal, channel: params.channel, scope: params.scope ?? 'call', votedAt: now };
        if (this.ctx.hostId !== undefined) vote.hostId = this.ctx.hostId;
        journal.recordApprovalVote(vote);
        votes.push(vote);
      }
      if (verdict.kind === 'partial') return { kind: 'partial', record, votes, verdict };
      const resolution = this.resolutionOf(params, principal, rules, votes, now, needed !== undefined);
      if (!journal.resolveApproval(record.id, storedResolution(resolution))) {
        throw new AssentError('conflict', `approval ${params.id} was already resolved`, { details: { state: journal.getApproval(params.id)?.state } });
      }
      return { kind: 'resolved', record, votes, verdict, resolution };
    });

    if (step.kind === 'expired') {
      this.resolve(params.id, { state: 'expired', reason: 'consent_timeout', decidedAt: clock.now() });
      throw new AssentError('conflict', `approval ${params.id} expired before the decision arrived`, { details: { state: 'expired' } });
    }
    const logged: Record<string, unknown> = { approvalId: params.id, behavior: params.behavior, channel: params.channel, principal, outcome: step.kind };
    if (params.claimedChannel !== undefined) logged['claimedChannel'] = params.claimedChannel;
    if (params.peer !== undefined) logged['peer'] = params.peer;
    if (params.behavior === 'allow' && params.presence !== undefined) {
      logged['presence'] = params.presence.presence;
      logged['credentialId'] = params.presence.credentialId;
    }
    const result: DecideOutcome = {
      before: step.record,
      result: step.kind === 'resolved' ? 'resolved' : step.kind === 'partial' ? 'partial' : 'repeat',
      principal,
      approvals: step.verdict.approvals,
      required: step.verdict.required,
    };
    if (step.kind === 'refuse') {
      this.ctx.logger.info('approval refused: four-eyes', logged);
      this.auditRefusal(step.record, params, principal);
      throw new AssentError(
        'forbidden',
        `approval ${params.id} was not approved (four_eyes): approvals.fourEyes is on and ${escapeText(principal)} owns the agent session that asked, so it cannot approve ` +
          'its own request. It stays pending: another principal must approve it (a bearer token, a paired web page, or a reviewer on another host). You may still deny it.',
        { details: { reason: 'four_eyes', approvalId: params.id, principal, owner: step.record.owner ?? principal } },
      );
    }
    if (step.kind === 'repeat') {
      this.ctx.logger.info('approval repeated by the same principal; nothing changed', logged);
      return result;
    }
    if (step.kind === 'partial') {
      const approvedBy = step.votes.map((vote) => vote.principal);
      const entry = this.pending.get(params.id);
      entry?.updateView(this.view(step.record, approvedBy));
      this.ctx.bus.publish(
        'approval_voted',
        { id: params.id, principal, approvals: step.verdict.approvals, required: step.verdict.required, approvedBy },
        step.record.sessionId,
      );
      this.ctx.logger.info('approval recorded; quorum not met yet', { ...logged, approvals: step.verdict.approvals, required: step.verdict.required });
      return result;
    }
    this.announce(params.id, step.resolution);
    this.ctx.logger.info('approval decided', logged);
    return result;
  }

  /**
   * The rules an approval is decided under: those it was filed under, tightened
   * by this host's configuration in force (a stricter quorum or four-eyes after a
   * reload applies; a looser one does not lower what the approval asked for).
   */
  private rulesFor(record: ApprovalRecord, config: Config): DecisionRules {
    return {
      // Filed before owners were recorded: by this host, the only one that wrote this journal then.
      owner: record.owner ?? this.ctx.principal,
      fourEyes: record.fourEyes === true || config.approvals.fourEyes,
      quorum: Math.max(record.quorum ?? 1, quorumFor(config.policy.quorum, record.server, record.tool)),
    };
  }

  /** The resolution a deciding allow or deny writes: for a quorum, `session` scope only when every counted approver asked for it. */
  private resolutionOf(params: DecideParams, principal: string, rules: DecisionRules, votes: ApprovalVote[], now: number, needsPresence: boolean): ResolutionInput {
    const resolution: ResolutionInput = {
      state: params.behavior === 'allow' ? 'approved' : 'denied',
      channel: params.channel,
      decidedAt: now,
      decidedBy: principal,
    };
    if (this.ctx.hostId !== undefined) resolution.decidedHost = this.ctx.hostId;
    if (params.claimedChannel !== undefined) resolution.claimedChannel = params.claimedChannel;
    if (params.peer !== undefined) resolution.peer = params.peer;
    const approvedBy = votes.map((vote) => vote.principal);
    if (approvedBy.length > 0) resolution.approvedBy = approvedBy;
    if (params.behavior === 'deny') {
      resolution.reason = params.reason ?? 'consent_denied';
    } else {
      const counted = new Set(countedApprovals(rules, approvedBy));
      const all = votes.filter((vote) => counted.has(vote.principal));
      resolution.scope = all.length > 0 && all.every((vote) => vote.scope === 'session') ? 'session' : 'call';
      const presence = params.presence;
      if (presence !== undefined) {
        resolution.presence = presence.presence;
        resolution.credentialId = presence.credentialId;
      }
      // A passkey confirms this exact action; a session grant would let others through without one.
      if (needsPresence) resolution.scope = 'call';
    }
    return resolution;
  }

  /** A four-eyes refusal is audited (R-TEAM-3); the approval stays pending. */
  private auditRefusal(record: ApprovalRecord, params: DecideParams, principal: string): void {
    const line: Omit<AuditRecord, 'ts' | 'principal'> = {
      sessionId: record.sessionId,
      argsSha256: record.argsSha256,
      outcome: 'refused',
      deniedReason: 'four_eyes',
      channel: params.channel as NonNullable<AuditRecord['channel']>,
      approvalId: record.id,
    };
    if (record.kind === 'tool') {
      if (record.server !== undefined) line.server = record.server;
      if (record.tool !== undefined) line.tool = record.tool;
    } else {
      line.kind = 'exec';
    }
    const by: DecidedBy = { decidedBy: principal };
    if (params.claimedChannel !== undefined) by.claimedChannel = params.claimedChannel;
    if (params.peer !== undefined) by.peer = params.peer;
    recordDecidedBy(line, by);
    writeAudit(this.ctx, line);
  }

  /** The approval's pending entry, or its resolution when it is resolved already. */
  pendingOrResolved(id: string): PendingApproval | Resolution {
    const entry = this.pending.get(id);
    if (entry !== undefined) return entry;
    const current = this.ctx.journal.getApproval(id);
    if (current === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    if (current.state === 'pending') return this.remember(this.view(current, this.approvedBy(id)));
    const done: Resolution = { state: current.state };
    if (current.channel !== undefined) done.channel = current.channel;
    if (current.reason !== undefined) done.reason = current.reason;
    if (current.scope !== undefined) done.scope = current.scope;
    if (current.decidedBy !== undefined) done.decidedBy = current.decidedBy;
    const approvedBy = this.approvedBy(id);
    if (approvedBy.length > 0) done.approvedBy = approvedBy;
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
    const views = this.ctx.journal.listApprovals(filter).map((record) => this.view(record, this.approvedBy(record.id)));
    const selected = views.filter((view) => matchesSelector(view, options.selector));
    return options.limit === undefined ? selected : selected.slice(0, options.limit);
  }

  get(id: string): ApprovalView {
    const record = this.ctx.journal.getApproval(id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    return this.view(record, this.approvedBy(id));
  }

  /** What approving this approval needs beyond a channel (R-REM-6): the policy in force, or what it needed when filed. */
  presenceNeeded(record: Pick<ApprovalRecord, 'id' | 'kind' | 'server' | 'tool'>): Presence | undefined {
    if (record.kind !== 'tool' || record.server === undefined || record.tool === undefined) return undefined;
    return presenceFor(this.ctx.presence(), `${record.server}/${record.tool}`)?.presence ?? this.pending.get(record.id)?.presence;
  }

  /** The public view of a record, with who has approved so far and the presence it needs. */
  private view(record: ApprovalRecord, approvedBy?: readonly string[]): ApprovalView {
    const view = toApprovalView(record, approvedBy);
    const presence = record.state === 'pending' ? this.presenceNeeded(record) : undefined;
    if (presence !== undefined) view.presence = presence;
    return view;
  }

  /** Principals whose approval of `id` is recorded, oldest first. */
  private approvedBy(id: string): string[] {
    return this.ctx.journal.listApprovalVotes(id).map((vote) => vote.principal);
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

/** The journal's part of a resolution: who decided is kept, the process and claims travel only to events, waiters and audit. */
function storedResolution(resolution: ResolutionInput): ApprovalResolution {
  const stored: ApprovalResolution = { state: resolution.state, decidedAt: resolution.decidedAt };
  if (resolution.channel !== undefined) stored.channel = resolution.channel;
  if (resolution.reason !== undefined) stored.reason = resolution.reason;
  if (resolution.scope !== undefined) stored.scope = resolution.scope;
  if (resolution.decidedBy !== undefined) stored.decidedBy = resolution.decidedBy;
  if (resolution.decidedHost !== undefined) stored.decidedHost = resolution.decidedHost;
  return stored;
}
