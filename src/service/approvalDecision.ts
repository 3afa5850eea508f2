// The decision on an approval (R-D-5, R-TEAM-3, R-REM-6): what a decision
// carries, the rules it is judged under (four-eyes, quorum, passkey presence),
// the judgement inside the store's deciding transaction, the resolution it
// writes and the audit of a four-eyes refusal. The queue runs it and does the
// side effects once the transaction committed.
import { countedApprovals, judgeDecision, type DecisionRules, type DecisionVerdict } from '../core/policy/approvalRules.js';
import type { Config } from '../core/config/config.js';
import { AssentError } from '../core/base/errors.js';
import { escapeText } from '../core/base/escape.js';
import type { Presence } from '../core/policy/presencePolicy.js';
import { quorumFor } from '../core/config/teamConfig.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { ApprovalRecord, ApprovalResolution, ApprovalVote } from '../journal/journal.js';
import type { DecisionJudge, DecisionWrites } from '../journal/store.js';
import type { DecisionPeer } from './approvalViews.js';
import { recordDecidedBy, type DecidedBy, type Resolution } from './pendingApproval.js';
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
 * deciding transaction, before anything is written: it re-checks what the
 * assertion's verification depended on (the credential is still enrolled, its
 * counter moved on, the action digest is the one bound) and throws to refuse.
 * It returns the write of the new counter, which the store runs in that same
 * transaction only when the decision records something (a vote or the
 * resolution): a refusal, a repeat or a conflict leaves the counter alone.
 */
export interface PresenceConfirmation {
  presence: Presence;
  credentialId: string;
  confirm(record: ApprovalRecord): () => void;
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
export type DecisionStep =
  | { kind: 'expired'; record: ApprovalRecord }
  | { kind: 'refuse'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'repeat'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'partial'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict }
  | { kind: 'resolved'; record: ApprovalRecord; votes: ApprovalVote[]; verdict: DecisionVerdict; resolution: ResolutionInput };

/** How an already resolved approval is named in a refusal: its state, who resolved it and through which channel. */
function resolvedText(record: Pick<ApprovalRecord, 'state' | 'channel' | 'decidedBy' | 'reason'>): string {
  if (record.state === 'denied' && record.channel === undefined && record.reason === 'withdrawn') return 'withdrawn by the agent';
  const by = record.decidedBy === undefined ? '' : ` by ${escapeText(record.decidedBy)}`;
  return `${record.state}${by}${record.channel ? ` (via ${record.channel})` : ''}`;
}

/** What a person reads when a waiting call or command was not approved, by denial reason. */
export const DENIAL_HELP: Record<string, string> = {
  consent_denied: 'The operator denied this call.',
  consent_timeout: 'No one answered before the approval expired.',
  session_ended: 'The session ended while the call was waiting.',
  shutdown: 'The assent daemon shut down while the call was waiting.',
  cancelled: 'The caller withdrew the call before anyone decided.',
  withdrawn: 'Withdrawn by the agent: it went away while the call waited, so nobody decided and nothing ran.',
};

/**
 * The decision judged in the store's deciding transaction, where racing deciders on any host wait their turn.
 * What the approval needs is read from the row it locked: the passkey requirement it was filed with
 * (R-REM-6) is never looked up in this host's configuration, which may not know it.
 */
export function judgeInTransaction(ctx: ServiceContext, params: DecideParams, principal: string, config: Config, now: number): DecisionJudge<DecisionStep> {
  return ({ record, votes }): { writes: DecisionWrites; result: DecisionStep } => {
    if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
    if (record.state !== 'pending') {
      throw new AssentError('conflict', `approval ${params.id} was already ${resolvedText(record)}`, {
        details: { state: record.state, ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy }) },
      });
    }
    if (record.expiresAt <= now) return { writes: {}, result: { kind: 'expired', record } };
    // R-REM-6: only a verified passkey assertion approves such an approval; every channel may deny it.
    const needed = record.presence;
    if (params.behavior === 'allow' && needed !== undefined && params.presence === undefined) {
      const subject = record.kind === 'tool' ? `${record.server ?? ''}/${record.tool ?? ''}` : 'this action';
      const elsewhere = record.hostId !== undefined && ctx.hostId !== undefined && record.hostId !== ctx.hostId ? ' on the host that asked' : '';
      throw new AssentError(
        'presence_required',
        `approval ${params.id} (${subject}) can only be approved with an enrolled passkey: policy.presence${elsewhere} marked it when it was filed, so no terminal code, socket call, token or MCP form can approve it, here or on any other host. ` +
          `Open it on a paired approval page with an enrolled passkey and approve it there (\`assent web\` pairs a page); denying works here (\`assent deny ${params.id}\`). The approval is still pending.`,
        { details: { presence: needed, approvalId: params.id, channel: params.channel } },
      );
    }
    // The passkey's re-check (credential still enrolled, counter moved on, digest bound); its counter is written with the decision.
    const presenceWrite = params.behavior === 'allow' && params.presence !== undefined ? params.presence.confirm(record) : undefined;
    const rules = rulesFor(ctx, record, config);
    const verdict = judgeDecision({ behavior: params.behavior, principal, rules, approvedBy: votes.map((vote) => vote.principal) });
    if (verdict.kind === 'refuse') return { writes: {}, result: { kind: 'refuse', record, votes, verdict } };
    if (verdict.kind === 'repeat') {
      if (params.mustResolve === true) {
        throw new AssentError('conflict', `${escapeText(principal)} approved ${params.id} already; no proof was issued. Another principal must complete its quorum.`, {
          details: { reason: 'quorum', approvals: verdict.approvals, required: verdict.required },
        });
      }
      return { writes: {}, result: { kind: 'repeat', record, votes, verdict } };
    }
    if (params.mustResolve === true && verdict.kind === 'partial') {
      throw new AssentError(
        'conflict',
        `approval ${params.id} needs ${verdict.required} distinct approvals (policy.quorum) and has ${verdict.approvals - 1}; a proof can only be exported ` +
          'by the approval that completes it. Nothing was recorded: approve it without --export-proof, or let the last approver export the proof.',
        { details: { reason: 'quorum', approvals: verdict.approvals - 1, required: verdict.required } },
      );
    }
    const writes: DecisionWrites = {};
    if (presenceWrite !== undefined) writes.localWrite = presenceWrite;
    const counted = [...votes];
    if (params.behavior === 'allow') {
      const vote: ApprovalVote = { approvalId: record.id, principal, channel: params.channel, scope: params.scope ?? 'call', votedAt: now };
      if (ctx.hostId !== undefined) vote.hostId = ctx.hostId;
      writes.vote = vote;
      counted.push(vote);
    }
    if (verdict.kind === 'partial') return { writes, result: { kind: 'partial', record, votes: counted, verdict } };
    const resolution = resolutionOf(ctx, params, principal, rules, counted, now, needed !== undefined);
    writes.resolution = storedResolution(resolution);
    return { writes, result: { kind: 'resolved', record, votes: counted, verdict, resolution } };
  };
}

/**
 * The rules an approval is decided under: those it was filed under, tightened
 * by this host's configuration in force (a stricter quorum or four-eyes after a
 * reload applies; a looser one does not lower what the approval asked for).
 */
export function rulesFor(ctx: ServiceContext, record: ApprovalRecord, config: Config): DecisionRules {
  return {
    // Filed before owners were recorded: by this host, the only one that wrote this journal then.
    owner: record.owner ?? ctx.principal,
    fourEyes: record.fourEyes === true || config.approvals.fourEyes,
    quorum: Math.max(record.quorum ?? 1, quorumFor(config.policy.quorum, record.server, record.tool)),
  };
}

/** The resolution a deciding allow or deny writes: for a quorum, `session` scope only when every counted approver asked for it. */
export function resolutionOf(ctx: ServiceContext, params: DecideParams, principal: string, rules: DecisionRules, votes: ApprovalVote[], now: number, needsPresence: boolean): ResolutionInput {
  const resolution: ResolutionInput = {
    state: params.behavior === 'allow' ? 'approved' : 'denied',
    channel: params.channel,
    decidedAt: now,
    decidedBy: principal,
  };
  if (ctx.hostId !== undefined) resolution.decidedHost = ctx.hostId;
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
export function auditRefusal(ctx: ServiceContext, record: ApprovalRecord, params: DecideParams, principal: string): void {
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
  writeAudit(ctx, line);
}
/** The journal's part of a resolution: who decided is kept, the process and claims travel only to events, waiters and audit. */
export function storedResolution(resolution: ResolutionInput): ApprovalResolution {
  const stored: ApprovalResolution = { state: resolution.state, decidedAt: resolution.decidedAt };
  if (resolution.channel !== undefined) stored.channel = resolution.channel;
  if (resolution.reason !== undefined) stored.reason = resolution.reason;
  if (resolution.scope !== undefined) stored.scope = resolution.scope;
  if (resolution.decidedBy !== undefined) stored.decidedBy = resolution.decidedBy;
  if (resolution.decidedHost !== undefined) stored.decidedHost = resolution.decidedHost;
  return stored;
}

/** A resolution as its waiters hear it, from an event's data or a stored record. */
export function resolutionOfData(data: Record<string, unknown>, approvedBy?: readonly string[]): Resolution {
  const result: Resolution = { state: data['state'] as Resolution['state'] };
  for (const key of ['channel', 'reason', 'claimedChannel', 'decidedBy', 'credentialId'] as const) {
    const value = data[key];
    if (typeof value === 'string') result[key] = value;
  }
  if (data['scope'] === 'call' || data['scope'] === 'session') result.scope = data['scope'];
  if (typeof data['peer'] === 'object' && data['peer'] !== null) result.peer = data['peer'] as NonNullable<Resolution['peer']>;
  if (typeof data['presence'] === 'string') result.presence = data['presence'] as NonNullable<Resolution['presence']>;
  const voted = Array.isArray(data['approvedBy']) ? (data['approvedBy'] as string[]) : approvedBy;
  if (voted !== undefined && voted.length > 0) result.approvedBy = [...voted];
  return result;
}

/** A stored resolution as its waiters hear it. */
export function resolutionOfRecord(current: ApprovalRecord, approvedBy: string[]): Resolution {
  const done: Resolution = { state: current.state };
  if (current.channel !== undefined) done.channel = current.channel;
  if (current.reason !== undefined) done.reason = current.reason;
  if (current.scope !== undefined) done.scope = current.scope;
  if (current.decidedBy !== undefined) done.decidedBy = current.decidedBy;
  if (approvedBy.length > 0) done.approvedBy = approvedBy;
  return done;
}

/** The `approval_resolved` event's data for a resolution. */
export function resolutionEventData(id: string, resolution: ResolutionInput, approvedBy: string[] | undefined): Record<string, unknown> {
  const { claimedChannel, peer, decidedBy, presence, credentialId } = resolution;
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
  return data;
}

/** A resolution as the waiters of this host hear it. */
export function resolutionForWaiters(resolution: ResolutionInput, approvedBy: string[] | undefined): Resolution {
  const { claimedChannel, peer, decidedBy, presence, credentialId } = resolution;
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
  return result;
}

/** What the log says of a decision. */
export function decisionLog(params: DecideParams, principal: string, outcome: DecisionStep['kind']): Record<string, unknown> {
  const logged: Record<string, unknown> = { approvalId: params.id, behavior: params.behavior, channel: params.channel, principal, outcome };
  if (params.claimedChannel !== undefined) logged['claimedChannel'] = params.claimedChannel;
  if (params.peer !== undefined) logged['peer'] = params.peer;
  if (params.behavior === 'allow' && params.presence !== undefined) {
    logged['presence'] = params.presence.presence;
    logged['credentialId'] = params.presence.credentialId;
  }
  return logged;
}

/** A committed decision's result and the approval as it was before it. */
export function outcomeOf(step: Exclude<DecisionStep, { kind: 'expired' }>, principal: string): DecideOutcome {
  const result: DecideOutcome = {
    before: step.record,
    result: step.kind === 'resolved' ? 'resolved' : step.kind === 'partial' ? 'partial' : 'repeat',
    principal,
    approvals: step.verdict.approvals,
    required: step.verdict.required,
  };
  return result;
}

/** The refusal a session's owner hears when approving its own request under four-eyes (R-TEAM-3). */
export function fourEyesRefusal(params: DecideParams, principal: string, record: ApprovalRecord): AssentError {
  return new AssentError(
    'forbidden',
    `approval ${params.id} was not approved (four_eyes): approvals.fourEyes is on and ${escapeText(principal)} owns the agent session that asked, so it cannot approve ` +
      'its own request. It stays pending: another principal must approve it (a bearer token, a paired web page, or a reviewer on another host). You may still deny it.',
    { details: { reason: 'four_eyes', approvalId: params.id, principal, owner: record.owner ?? principal } },
  );
}
