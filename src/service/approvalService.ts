// The approval service: the one place that decides a tool call (R-ARCH-3). Every
// head reaches it through the operations in src/operations. Policy evaluation is
// pure (core/toolPolicy); this class adds the parts with state and time: the
// approval registry, waiters, timeouts, session grants, and the audit trail.
import { digestOf } from '../core/canonical.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { AssentError } from '../core/errors.js';
import { newApprovalId, type RandomBytes } from '../core/ids.js';
import { compilePolicy, evaluateToolPolicy, type PolicySnapshot, type Rule, type ToolPolicyResult } from '../core/toolPolicy.js';
import type { AuditLog, AuditPeer, AuditRecord } from '../journal/auditLog.js';
import type { ApprovalRecord, CallInProgressRecord, Journal } from '../journal/journal.js';
import type { Notifier } from '../channels/notifier.js';
import { JsonText } from '../core/jsonText.js';
import { Deadlines } from './deadlines.js';
import type { EventBus } from './eventBus.js';
import type { Logger } from './logger.js';
import { actionDigestOf, type ProofService } from './proofService.js';

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The configuration the daemon loaded and pinned (R-CFG-4). */
export interface PinnedConfig {
  config: Config;
  revision: string;
  path: string;
}

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  [key: string]: unknown;
}

export interface AuthorizeParams {
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  annotations?: ToolAnnotations;
  caller?: Record<string, unknown>;
  /** Present for an agent action (SPEC §17), set by the agent-action service only. */
  agentAction?: AgentCallBinding;
}

/** How an agent action goes through the one authorize path (R-ARCH-3, R-HOOK-3). */
export interface AgentCallBinding {
  /** The agent's hook name; every audit line of the call carries it (R-HOOK-10). */
  agent: string;
  /** The agent-action policy's decision (R-POL-6), used instead of the gateway's tool policy. */
  evaluation: ToolPolicyResult;
  /** Lifetime of an approval the call files: `hooks.timeoutSeconds` (R-HOOK-4). */
  consentTimeoutMs: number;
  /** The caller as audited and listed in sessions: without the cwd, which is a path (R-AUD-1). */
  auditCaller: Record<string, unknown>;
}

export interface Consent {
  channel: string;
  approvalId?: string;
  ruleId?: string;
}

export interface AuthorizeResult {
  callId: string;
  decision: 'allow';
  consent?: Consent;
  waitedForConsentMs: number;
  /** Handoff retry (R-MCP-8): the effect whose intent was recorded for this call; its outcome is recorded by `finish`. */
  effectId?: string;
  /**
   * Handoff retry of a call that already ran under its proof (R-J-4): the recorded
   * disposition, to be answered as is; the call must not run again.
   */
  replay?: { effectId: string; state: string; result?: unknown };
}

export type CallOutcome = 'ok' | 'error' | 'cancelled';

/** The process that sent a decision, as the head found it (R-D-4b); see docs/daemon.md for how far to trust it. */
export type DecisionPeer = AuditPeer;

/** Handoff approvals one session may keep pending before further prompt calls are refused (R-MCP-8). */
export const MAX_PENDING_HANDOFF_PER_SESSION = 32;

/** A `policy.tools` key that names a tool its upstream does not list, as a gateway reported it. */
export interface UnlistedPolicyToolReport {
  key: string;
  server: string;
  listed: string[];
}

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

/** Who decided, beyond the stamped channel: carried from the decision to the audit line of the call it decided. */
interface DecidedBy {
  claimedChannel?: string;
  peer?: DecisionPeer;
}

export interface ApprovalServiceOptions {
  journal: Journal;
  audit: AuditLog;
  bus: EventBus;
  clock: Clock;
  random: RandomBytes;
  timers?: Timers;
  notifier: Notifier;
  logger: Logger;
  config: PinnedConfig;
  principal: string;
  /** How long an approval waits for a waiter to come back after its connection dropped. */
  reattachGraceMs?: number;
  /** Proofs and effects (R-J-*); without it handoff mode is unavailable and prompt calls wait as usual. */
  proofs?: ProofService;
  /** Cap of pending handoff approvals per session (default MAX_PENDING_HANDOFF_PER_SESSION). */
  maxPendingHandoffPerSession?: number;
}

interface CallRecord {
  /** Set for agent actions: their audit lines carry it and the callId (R-HOOK-10). */
  agent?: string;
  sessionId: string;
  server: string;
  tool: string;
  argsSha256: string;
  caller: Record<string, unknown>;
  consent: Consent | undefined;
  waitedForConsentMs: number;
  authorizedAtMono: number;
  effectId?: string;
  decidedBy?: DecidedBy;
}

interface SessionInfo {
  sessionId: string;
  caller: Record<string, unknown>;
  firstSeen: number;
  lastSeen: number;
  calls: number;
  ended: boolean;
}

type Resolution = Pick<ApprovalRecord, 'state' | 'channel' | 'reason' | 'scope'> & DecidedBy;

/** What an allow for the session remembers: the tool, and for an agent action its exact input too (cf. R-POL-7). */
function sessionGrantKey(call: Pick<CallRecord, 'server' | 'tool' | 'argsSha256' | 'agent'>): string {
  return call.agent === undefined ? `${call.server}/${call.tool}` : `${call.server}/${call.tool}#${call.argsSha256}`;
}

/** The decision attribution of a resolution, or undefined when it has none. */
function decidedByOf(resolution: DecidedBy): DecidedBy | undefined {
  const by: DecidedBy = {};
  if (resolution.claimedChannel !== undefined) by.claimedChannel = resolution.claimedChannel;
  if (resolution.peer !== undefined) by.peer = resolution.peer;
  return by.claimedChannel === undefined && by.peer === undefined ? undefined : by;
}

const DENIAL_HELP: Record<string, string> = {
  consent_denied: 'The operator denied this call.',
  consent_timeout: 'No one answered before the approval expired.',
  session_ended: 'The session ended while the call was waiting.',
  shutdown: 'The assent daemon shut down while the call was waiting.',
  cancelled: 'The caller withdrew the call before anyone decided.',
};

/**
 * A public view of an approval: what `approvals.list` returns (R-D-4). The
 * journal record without its internal handoff flag, which appears (as true)
 * only on handoff approvals: an allow then issues the proof the agent's
 * identical retry consumes (R-MCP-8).
 */
export type ApprovalView = Omit<ApprovalRecord, 'handoff'> & { handoff?: true };

export function toApprovalView(record: ApprovalRecord): ApprovalView {
  const view: ApprovalView = {
    id: record.id,
    sessionId: record.sessionId,
    kind: record.kind,
    argsSha256: record.argsSha256,
    requestedAt: record.requestedAt,
    expiresAt: record.expiresAt,
    caller: record.caller,
    state: record.state,
  };
  if (record.server !== undefined) view.server = record.server;
  if (record.tool !== undefined) view.tool = record.tool;
  if (record.args !== undefined) view.args = record.args;
  if (record.action !== undefined) view.action = record.action;
  if (record.channel !== undefined) view.channel = record.channel;
  if (record.reason !== undefined) view.reason = record.reason;
  if (record.scope !== undefined) view.scope = record.scope;
  if (record.decidedAt !== undefined) view.decidedAt = record.decidedAt;
  if (record.handoff) view.handoff = true;
  return view;
}

/** What a pending approval is matched on, and its view as JSON text. */
interface PendingEntry {
  id: string;
  sessionId: string;
  server?: string;
  tool?: string;
  argsSha256: string;
  handoff?: true;
  json: string;
}

/** Does `selector` pick this approval? It may be an id, a session id, `server/tool` or `server/`. */
export function matchesSelector(record: Pick<ApprovalView, 'id' | 'sessionId' | 'server' | 'tool'>, selector: string | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  if (record.id === selector || record.sessionId === selector) return true;
  if (record.server === undefined) return false;
  const id = `${record.server}/${record.tool ?? ''}`;
  return selector.endsWith('/') ? id.startsWith(selector) : id === selector;
}

export class ApprovalService {
  private readonly journal: Journal;
  private readonly audit: AuditLog;
  private readonly bus: EventBus;
  private readonly clock: Clock;
  private readonly random: RandomBytes;
  private readonly timers: Timers;
  private readonly notifier: Notifier;
  private readonly logger: Logger;
  private readonly principal: string;
  private readonly reattachGraceMs: number;
  private readonly proofs: ProofService | undefined;
  private readonly maxPendingHandoffPerSession: number;
  private pinned: PinnedConfig;
  private snapshot: PolicySnapshot;
  private readonly waiters = new Map<string, Set<(resolution: Resolution) => void>>();
  /**
   * Pending approvals in filing order: a read view of the journal, kept in step
   * by fileApproval/resolve. Each keeps only what selectors match on plus its
   * view as JSON text, serialized once when filed, so holding and listing
   * thousands stays cheap (SPEC §14).
   */
  private readonly pending = new Map<string, PendingEntry>();
  private readonly deadlines: Deadlines;
  /** Approvals whose one call was admitted: an approval lets exactly one call through (single-use). */
  private readonly taken = new Set<string>();
  private readonly startedAt: number;
  private readonly calls = new Map<string, CallRecord>();
  private readonly sessionGrants = new Map<string, Map<string, string>>();
  private readonly sessions = new Map<string, SessionInfo>();
  /** Per session: `policy.tools` keys its gateway found no upstream tool for (shown by daemon.status). */
  private readonly unlistedTools = new Map<string, { token: object; entries: UnlistedPolicyToolReport[] }>();
  private callCounter = 0;
  private stopped = false;

  constructor(options: ApprovalServiceOptions) {
    this.journal = options.journal;
    this.audit = options.audit;
    this.bus = options.bus;
    this.clock = options.clock;
    this.random = options.random;
    this.timers = options.timers ?? realTimers;
    this.notifier = options.notifier;
    this.logger = options.logger;
    this.principal = options.principal;
    this.reattachGraceMs = options.reattachGraceMs ?? 5_000;
    this.proofs = options.proofs;
    this.maxPendingHandoffPerSession = options.maxPendingHandoffPerSession ?? MAX_PENDING_HANDOFF_PER_SESSION;
    this.pinned = options.config;
    this.startedAt = this.clock.now();
    this.deadlines = new Deadlines(this.timers, () => this.clock.now(), (id) =>
      this.resolve(id, { state: 'expired', reason: 'consent_timeout', decidedAt: this.clock.now() }),
    );
    this.snapshot = compilePolicy(this.pinned.config.policy, this.journal.listRules({}));
  }

  /**
   * Re-arms deadlines of approvals that survived a restart and expires the stale
   * ones (R-D-7), and audits every call a previous run admitted but never saw
   * finish as `uncertain` (R-J-5 for calls): it may or may not have run.
   */
  start(): void {
    for (const record of this.journal.listApprovals({ state: 'pending' })) {
      this.rememberPending(toApprovalView(record));
      this.armExpiry(record);
    }
    this.reconcileCallsInProgress();
  }

  private reconcileCallsInProgress(): void {
    const leftover = this.journal.listCallsInProgress();
    if (leftover.length === 0) return;
    for (const call of leftover) {
      const record: Omit<AuditRecord, 'ts' | 'principal'> = {
        sessionId: call.sessionId,
        server: call.server,
        tool: call.tool,
        argsSha256: call.argsSha256,
        outcome: 'uncertain',
        waitedForConsentMs: call.waitedForConsentMs,
        caller: call.caller,
      };
      if (call.channel !== undefined) record.channel = call.channel as NonNullable<AuditRecord['channel']>;
      if (call.approvalId !== undefined) record.approvalId = call.approvalId;
      if (call.ruleId !== undefined) record.ruleId = call.ruleId;
      this.writeAudit(record);
    }
    this.logger.warn('calls admitted before a restart never reported their end; audited as uncertain', { count: leftover.length });
    // Cleared only once their audit lines are written: a crash before that audits them again rather than never.
    void this.audit
      .flush()
      .then(() => {
        for (const call of leftover) this.journal.endCallInProgress(call.callId);
      })
      .catch((error: unknown) => this.logger.warn('could not clear reconciled calls from the journal', { error }));
  }

  get config(): PinnedConfig {
    return this.pinned;
  }

  get policySnapshot(): PolicySnapshot {
    return this.snapshot;
  }

  /** Applies a newly confirmed configuration (R-CFG-4). */
  applyConfig(next: PinnedConfig): void {
    this.pinned = next;
    this.recompile();
    this.bus.publish('config_changed', { revision: next.revision, applied: true });
  }

  private recompile(): void {
    this.snapshot = compilePolicy(this.pinned.config.policy, this.journal.listRules({}));
  }

  private consentTimeoutMs(): number {
    return this.pinned.config.policy.consentTimeoutSeconds * 1000;
  }

  private touchSession(sessionId: string, caller: Record<string, unknown>): SessionInfo {
    const now = this.clock.now();
    let session = this.sessions.get(sessionId);
    if (session === undefined) {
      session = { sessionId, caller, firstSeen: now, lastSeen: now, calls: 0, ended: false };
      this.sessions.set(sessionId, session);
    }
    session.lastSeen = now;
    session.calls += 1;
    return session;
  }

  private newCallId(): string {
    this.callCounter += 1;
    return `c${this.clock.now().toString(36)}${this.callCounter.toString(36)}`;
  }

  /**
   * The single seam for a gated call (R-D-5). Resolves only when the call may
   * run; every refusal is a `policy_denied` error whose details carry the reason.
   */
  async authorize(
    params: AuthorizeParams,
    options: {
      onWaiterDetached?: (detach: () => void) => (() => void) | void;
      /** Told the approval as soon as it is filed, so the caller can offer its own channel (elicitation, R-MCP-6). */
      onApprovalFiled?: (approval: ApprovalView) => void;
      /** Aborted when the caller withdraws the call (an MCP cancel): its approval is then resolved as cancelled. */
      withdrawn?: AbortSignal;
      /** Whether an abort of `withdrawn` is a withdrawal (default yes); a dropped connection is not. */
      isWithdrawal?: () => boolean;
    } = {},
  ): Promise<AuthorizeResult> {
    if (this.stopped) throw new AssentError('unavailable', 'the assent daemon is shutting down; retry the call in a moment');
    const caller = params.caller ?? {};
    const agent = params.agentAction;
    this.touchSession(params.sessionId, agent?.auditCaller ?? caller);
    const argsSha256 = digestOf(params.args);
    const evaluation =
      agent?.evaluation ??
      evaluateToolPolicy(
        this.snapshot,
        params.annotations === undefined
          ? { server: params.server, tool: params.tool, args: params.args }
          : { server: params.server, tool: params.tool, args: params.args, annotations: params.annotations },
        this.clock.now(),
      );
    const base: Omit<CallRecord, 'consent' | 'waitedForConsentMs' | 'authorizedAtMono'> = {
      sessionId: params.sessionId,
      server: params.server,
      tool: params.tool,
      argsSha256,
      caller: agent?.auditCaller ?? caller,
    };
    if (agent !== undefined) base.agent = agent.agent;

    if (evaluation.decision === 'deny') {
      this.writeAudit({ ...base, outcome: 'denied', deniedReason: 'policy' });
      throw new AssentError('policy_denied', `policy denies ${params.server}/${params.tool}`, {
        details: {
          reason: 'policy',
          hint: `decided by ${evaluation.key ?? 'policy.default'} in ${this.pinned.path}`,
          file: this.pinned.path,
          key: evaluation.key ?? 'policy.default',
        },
      });
    }
    if (evaluation.decision === 'allow') {
      const consent: Consent | undefined = evaluation.ruleId === undefined ? undefined : { channel: 'rule', ruleId: evaluation.ruleId };
      return this.admit(base, consent, 0);
    }

    const grantedBy = this.sessionGrants.get(params.sessionId)?.get(sessionGrantKey(base));
    if (grantedBy !== undefined) {
      return this.admit(base, { channel: 'session', approvalId: grantedBy }, 0);
    }
    // A hook waits for its answer; handoff (an immediate refusal and a retry) is for gateway calls only.
    if (this.pinned.config.approvals.handoff && this.proofs !== undefined && agent === undefined) {
      return this.authorizeHandoff(params, base, this.proofs);
    }

    const startedMono = this.clock.monotonic();
    const record = this.fileApproval({
      sessionId: params.sessionId,
      kind: 'tool',
      server: params.server,
      tool: params.tool,
      args: params.args,
      argsSha256,
      caller,
    }, agent?.consentTimeoutMs);
    options.onApprovalFiled?.(toApprovalView(record));
    return this.awaitDecision(record, base, startedMono, options);
  }

  /**
   * Re-attaches a call to the approval it filed before the daemon restarted
   * (R-D-7): the gateway presents the same session, tool and arguments and the
   * approval id it was told; the call then waits and is admitted or refused as
   * if it had never left.
   */
  async resume(
    params: AuthorizeParams & { approvalId: string },
    options: { onWaiterDetached?: (detach: () => void) => (() => void) | void; withdrawn?: AbortSignal; isWithdrawal?: () => boolean } = {},
  ): Promise<AuthorizeResult> {
    if (this.stopped) throw new AssentError('unavailable', 'the assent daemon is shutting down; retry the call in a moment');
    const record = this.journal.getApproval(params.approvalId);
    const argsSha256 = digestOf(params.args);
    if (
      record === undefined ||
      record.kind !== 'tool' ||
      record.handoff ||
      record.sessionId !== params.sessionId ||
      record.server !== params.server ||
      record.tool !== params.tool ||
      record.argsSha256 !== argsSha256
    ) {
      throw new AssentError('not_found', `no approval ${params.approvalId} for this exact call to re-attach to; send the call again`);
    }
    // Re-attaching is for a call whose approval is still open, or was approved after this
    // daemon started and has not let a call through yet; anything else was already used.
    const decidedHere = record.state === 'approved' && (record.decidedAt ?? 0) >= this.startedAt && !this.taken.has(record.id);
    if (record.state !== 'pending' && !decidedHere) {
      throw new AssentError('conflict', `approval ${params.approvalId} is ${record.state} and cannot let another call through; send the call again`);
    }
    const caller = params.caller ?? record.caller;
    this.touchSession(params.sessionId, caller);
    const base = { sessionId: params.sessionId, server: params.server, tool: params.tool, argsSha256, caller };
    return this.awaitDecision(record, base, this.clock.monotonic() - Math.max(0, this.clock.now() - record.requestedAt), options);
  }

  /** Waits for a filed approval, then admits the call or throws its denial (audited either way). */
  private async awaitDecision(
    record: ApprovalRecord,
    base: Omit<CallRecord, 'consent' | 'waitedForConsentMs' | 'authorizedAtMono'>,
    startedMono: number,
    options: { onWaiterDetached?: (detach: () => void) => (() => void) | void; withdrawn?: AbortSignal; isWithdrawal?: () => boolean },
  ): Promise<AuthorizeResult> {
    const resolving = this.waitForResolution(record.id, options.onWaiterDetached);
    const withdraw = (): void => {
      if (options.isWithdrawal?.() ?? true) this.resolve(record.id, { state: 'denied', reason: 'cancelled', decidedAt: this.clock.now() });
    };
    if (options.withdrawn?.aborted) withdraw();
    else options.withdrawn?.addEventListener('abort', withdraw, { once: true });
    let resolution: Resolution;
    try {
      resolution = await resolving;
    } finally {
      options.withdrawn?.removeEventListener('abort', withdraw);
    }
    const waited = Math.max(1, Math.round(this.clock.monotonic() - startedMono));
    if (resolution.state === 'approved') {
      if (this.taken.has(record.id)) {
        throw new AssentError('conflict', `approval ${record.id} already let its one call through; send the call again`);
      }
      this.taken.add(record.id);
      if (resolution.scope === 'session') {
        let grants = this.sessionGrants.get(base.sessionId);
        if (grants === undefined) this.sessionGrants.set(base.sessionId, (grants = new Map()));
        grants.set(sessionGrantKey(base), record.id);
      }
      return this.admit(base, { channel: resolution.channel ?? 'cli', approvalId: record.id }, waited, undefined, decidedByOf(resolution));
    }
    // Operator denials carry a channel (and maybe the operator's words); lifecycle
    // denials (shutdown, session_ended) carry only their reason.
    const detail =
      resolution.state === 'expired' ? 'consent_timeout' : resolution.channel === undefined ? (resolution.reason ?? 'consent_denied') : 'consent_denied';
    const denialKind = resolution.state === 'expired' ? 'consent_timeout' : detail === 'cancelled' ? 'cancelled' : 'consent_denied';
    const operatorReason =
      resolution.channel !== undefined && resolution.reason !== undefined && resolution.reason !== 'consent_denied' ? resolution.reason : undefined;
    const audit: Omit<AuditRecord, 'ts' | 'principal'> = {
      ...base,
      outcome: denialKind,
      deniedReason: detail,
      approvalId: record.id,
      waitedForConsentMs: waited,
    };
    if (resolution.channel !== undefined) audit.channel = resolution.channel as NonNullable<AuditRecord['channel']>;
    if (resolution.claimedChannel !== undefined) audit.claimedChannel = resolution.claimedChannel;
    if (resolution.peer !== undefined) audit.peer = resolution.peer;
    this.writeAudit(audit);
    const message = `${DENIAL_HELP[detail] ?? `The call was denied (${detail}).`}${operatorReason === undefined ? '' : ` Reason given: ${operatorReason}`}`;
    const details: Record<string, unknown> = { reason: denialKind, detail, approvalId: record.id };
    if (operatorReason !== undefined) details['operatorReason'] = operatorReason;
    throw new AssentError('policy_denied', message, { details });
  }

  private admit(
    base: Omit<CallRecord, 'consent' | 'waitedForConsentMs' | 'authorizedAtMono'>,
    consent: Consent | undefined,
    waited: number,
    effectId?: string,
    decidedBy?: DecidedBy,
  ): AuthorizeResult {
    const callId = this.newCallId();
    const call: CallRecord = { ...base, consent, waitedForConsentMs: waited, authorizedAtMono: this.clock.monotonic() };
    if (effectId !== undefined) call.effectId = effectId;
    else if (base.agent !== undefined) {
      // R-HOOK-10: an agent action's start is its own audit line; its end comes, if ever,
      // from the after-event. Not journaled: a lost after-event leaves it `started`, never invented.
      const started: Omit<AuditRecord, 'ts' | 'principal'> = { ...base, callId, outcome: 'started', waitedForConsentMs: waited };
      if (consent !== undefined) {
        started.channel = consent.channel as NonNullable<AuditRecord['channel']>;
        if (consent.approvalId !== undefined) started.approvalId = consent.approvalId;
        if (consent.ruleId !== undefined) started.ruleId = consent.ruleId;
      }
      if (decidedBy?.claimedChannel !== undefined) started.claimedChannel = decidedBy.claimedChannel;
      if (decidedBy?.peer !== undefined) started.peer = decidedBy.peer;
      this.writeAudit(started);
    } else {
      // Durable before the caller may run it: a crash before its end is recorded leaves it
      // here, and the next start audits it as uncertain (R-J-5 for calls). A handoff retry
      // needs no row: its effect intent in the proof store already plays that part.
      const durable: CallInProgressRecord = { callId, ...base, waitedForConsentMs: waited, authorizedAt: this.clock.now() };
      if (consent !== undefined) {
        durable.channel = consent.channel;
        if (consent.approvalId !== undefined) durable.approvalId = consent.approvalId;
        if (consent.ruleId !== undefined) durable.ruleId = consent.ruleId;
      }
      this.journal.recordCallInProgress(durable);
    }
    if (decidedBy !== undefined) call.decidedBy = decidedBy;
    this.calls.set(callId, call);
    // Agent actions are audited, not journaled as events: like the calls a gateway settles from its
    // snapshot, they would cost an fsync each on the path every agent tool call takes (SPEC §14).
    if (base.agent === undefined) this.bus.publish('call_started', { callId, server: base.server, tool: base.tool, channel: consent?.channel }, base.sessionId);
    const result: AuthorizeResult = { callId, decision: 'allow', waitedForConsentMs: waited };
    if (consent !== undefined) result.consent = consent;
    if (effectId !== undefined) result.effectId = effectId;
    return result;
  }

  /**
   * Handoff mode (R-MCP-8): a prompt call never waits. The identical retry of an
   * approved call consumes its proof inside the daemon (the agent never holds a
   * token, R-MCP-9) and runs once; a later identical retry gets the recorded
   * disposition; otherwise the call files (or reuses) a handoff approval and is
   * refused at once with its id so the agent can retry after the operator decides.
   */
  private authorizeHandoff(
    params: AuthorizeParams,
    base: Omit<CallRecord, 'consent' | 'waitedForConsentMs' | 'authorizedAtMono'>,
    proofs: ProofService,
  ): AuthorizeResult {
    const actionDigest = actionDigestOf({ kind: 'tool', server: params.server, tool: params.tool, args: params.args });
    const outcome = proofs.consumeForRetry({ actionDigest, revision: this.pinned.revision });
    if (outcome !== undefined) {
      const approval = this.journal.getApproval(outcome.proof.approvalId);
      const consent: Consent = { channel: outcome.proof.channel, approvalId: outcome.proof.approvalId };
      if (outcome.kind === 'consumed') return this.admit(base, consent, 0, outcome.effect.id);
      const replay: NonNullable<AuthorizeResult['replay']> = { effectId: outcome.effect.id, state: outcome.effect.state };
      if (outcome.result !== undefined) replay.result = outcome.result;
      this.logger.info('identical retry answered with the recorded disposition; nothing run', { effectId: outcome.effect.id, approvalId: approval?.id });
      const state = outcome.effect.state;
      this.writeAudit({
        ...base,
        outcome: state === 'completed' ? 'ok' : state === 'uncertain' ? 'uncertain' : 'error',
        channel: consent.channel as NonNullable<AuditRecord['channel']>,
        approvalId: outcome.proof.approvalId,
        effectId: outcome.effect.id,
        replayed: true,
        waitedForConsentMs: 0,
        durationMs: 0,
      });
      return { callId: '', decision: 'allow', consent, waitedForConsentMs: 0, replay };
    }
    let approvalId: string | undefined;
    let pendingInSession = 0;
    for (const view of this.pending.values()) {
      if (view.handoff !== true || view.sessionId !== params.sessionId) continue;
      pendingInSession += 1;
      if (view.server === params.server && view.tool === params.tool && view.argsSha256 === base.argsSha256) {
        approvalId = view.id;
        break;
      }
    }
    if (approvalId === undefined && pendingInSession >= this.maxPendingHandoffPerSession) {
      // R-MCP-8: no call waits on a handoff approval, so without a cap one session could file thousands.
      this.writeAudit({ ...base, outcome: 'denied', deniedReason: 'handoff_limit' });
      throw new AssentError(
        'limit_reached',
        `assent did not file an approval for ${params.server}/${params.tool}: session ${params.sessionId} already has ${pendingInSession} handoff approvals ` +
          `pending (the limit is ${this.maxPendingHandoffPerSession}), and none of them is for this exact call. The operator can list them with \`assent pending\` ` +
          `and approve or deny some (\`assent deny ID\`), or they expire after policy.consentTimeoutSeconds; retry this call after that.`,
        { details: { reason: 'handoff_limit', sessionId: params.sessionId, pending: pendingInSession, limit: this.maxPendingHandoffPerSession } },
      );
    }
    approvalId ??= this.fileApproval({
      sessionId: params.sessionId,
      kind: 'tool',
      server: params.server,
      tool: params.tool,
      args: params.args,
      argsSha256: base.argsSha256,
      caller: base.caller,
      handoff: true,
    }).id;
    this.writeAudit({ ...base, outcome: 'denied', deniedReason: 'approval_pending', approvalId });
    throw new AssentError(
      'policy_denied',
      `assent did not run ${params.server}/${params.tool}: approval_pending (approval ${approvalId}). The operator must approve it first ` +
        `(\`assent approve ${approvalId}\`, the watch queue or the web page). After it is approved, retry this identical call ` +
        `(same tool, same arguments) once; it then runs once. A call with different arguments needs its own approval.`,
      { details: { reason: 'approval_pending', approvalId } },
    );
  }

  /** Records the end of an admitted call and writes its audit line (R-AUD-1). */
  finish(params: { callId: string; outcome: CallOutcome; durationMs?: number; result?: unknown }): { recorded: boolean } {
    const call = this.calls.get(params.callId);
    if (call === undefined) throw new AssentError('not_found', `no call ${params.callId} is in progress; it was finished already or never authorized`);
    this.calls.delete(params.callId);
    if (call.effectId === undefined && call.agent === undefined) {
      try {
        this.journal.endCallInProgress(params.callId);
      } catch (error) {
        // The audit line below still records the outcome; a restart may add an uncertain line for it.
        this.logger.warn('could not clear a finished call from the journal', { callId: params.callId, error });
      }
    }
    if (call.effectId !== undefined && this.proofs !== undefined) {
      try {
        const outcome: { ok: boolean; result?: unknown } = { ok: params.outcome === 'ok' };
        if (params.result !== undefined) outcome.result = params.result;
        this.proofs.finishEffect(call.effectId, outcome);
      } catch (error) {
        this.logger.warn('could not record the outcome of an effect', { effectId: call.effectId, error });
      }
    }
    const durationMs = params.durationMs ?? Math.round(this.clock.monotonic() - call.authorizedAtMono);
    const record: Omit<AuditRecord, 'ts' | 'principal'> = {
      sessionId: call.sessionId,
      server: call.server,
      tool: call.tool,
      argsSha256: call.argsSha256,
      outcome: params.outcome,
      waitedForConsentMs: call.waitedForConsentMs,
      durationMs,
      caller: call.caller,
    };
    if (call.agent !== undefined) {
      record.agent = call.agent;
      record.callId = params.callId;
    }
    if (call.consent !== undefined) {
      record.channel = call.consent.channel as NonNullable<AuditRecord['channel']>;
      if (call.consent.approvalId !== undefined) record.approvalId = call.consent.approvalId;
      if (call.consent.ruleId !== undefined) record.ruleId = call.consent.ruleId;
    }
    if (call.decidedBy?.claimedChannel !== undefined) record.claimedChannel = call.decidedBy.claimedChannel;
    if (call.decidedBy?.peer !== undefined) record.peer = call.decidedBy.peer;
    this.writeAudit(record);
    if (call.agent === undefined) this.bus.publish('call_finished', { callId: params.callId, outcome: params.outcome, durationMs }, call.sessionId);
    return { recorded: true };
  }

  /** Drops an admitted call without auditing an end: its after-event will not come (the agent-action service bounds what it keeps). */
  forgetCall(callId: string): void {
    this.calls.delete(callId);
  }

  private writeAudit(record: Omit<AuditRecord, 'ts' | 'principal'>): void {
    this.audit.append({ ts: new Date(this.clock.now()).toISOString(), principal: this.principal, ...record } as AuditRecord);
  }

  private fileApproval(
    input: Omit<ApprovalRecord, 'id' | 'requestedAt' | 'expiresAt' | 'state' | 'handoff'> & { handoff?: boolean },
    timeoutMs: number = this.consentTimeoutMs(),
  ): ApprovalRecord {
    const requestedAt = this.clock.now();
    let id = newApprovalId(this.random);
    for (let attempt = 0; this.journal.getApproval(id) !== undefined; attempt += 1) {
      if (attempt > 50) throw new AssentError('internal', 'could not allocate a free approval id');
      id = newApprovalId(this.random);
    }
    const record: ApprovalRecord = {
      ...input,
      id,
      requestedAt,
      expiresAt: requestedAt + timeoutMs,
      state: 'pending',
      handoff: input.handoff ?? false,
    };
    this.journal.insertApproval(record);
    this.armExpiry(record);
    const view = toApprovalView(record);
    this.rememberPending(view);
    this.bus.publish('approval_requested', { approval: view, args: record.args, action: record.action }, record.sessionId);
    const subject = record.kind === 'tool' ? `${record.server}/${record.tool}` : 'a command';
    this.notifier.notify({ title: `assent: approval ${id}`, body: `${subject} is waiting for your decision. Run: assent approve ${id}`, approvalId: id });
    return record;
  }

  private armExpiry(record: ApprovalRecord): void {
    this.deadlines.set(record.id, record.expiresAt);
  }

  /** Compare-and-set in the journal; the first resolver wins and every channel is told (R-D-6). */
  private resolve(
    id: string,
    resolution: { state: 'approved' | 'denied' | 'expired'; channel?: string; reason?: string; scope?: 'call' | 'session'; decidedAt: number } & DecidedBy,
  ): boolean {
    const { claimedChannel, peer, ...stored } = resolution;
    if (!this.journal.resolveApproval(id, stored)) return false;
    this.pending.delete(id);
    this.deadlines.delete(id);
    const record = this.journal.getApproval(id);
    const data: Record<string, unknown> = { id, state: resolution.state };
    if (resolution.channel !== undefined) data['channel'] = resolution.channel;
    if (resolution.reason !== undefined) data['reason'] = resolution.reason;
    if (resolution.scope !== undefined) data['scope'] = resolution.scope;
    if (claimedChannel !== undefined) data['claimedChannel'] = claimedChannel;
    if (peer !== undefined) data['peer'] = peer;
    this.bus.publish('approval_resolved', data, record?.sessionId);
    const waiting = this.waiters.get(id);
    this.waiters.delete(id);
    if (waiting !== undefined) {
      const result: Resolution = { state: resolution.state };
      if (resolution.channel !== undefined) result.channel = resolution.channel;
      if (resolution.reason !== undefined) result.reason = resolution.reason;
      if (resolution.scope !== undefined) result.scope = resolution.scope;
      if (claimedChannel !== undefined) result.claimedChannel = claimedChannel;
      if (peer !== undefined) result.peer = peer;
      for (const wake of waiting) wake(result);
    }
    return true;
  }

  private waitForResolution(id: string, onWaiterDetached?: (detach: () => void) => (() => void) | void): Promise<Resolution> {
    const current = this.journal.getApproval(id);
    if (current === undefined) return Promise.reject(new AssentError('not_found', `no approval ${id}; check the id with: assent pending`));
    if (current.state !== 'pending') {
      const done: Resolution = { state: current.state };
      if (current.channel !== undefined) done.channel = current.channel;
      if (current.reason !== undefined) done.reason = current.reason;
      if (current.scope !== undefined) done.scope = current.scope;
      return Promise.resolve(done);
    }
    return new Promise((resolvePromise) => {
      let set = this.waiters.get(id);
      if (set === undefined) this.waiters.set(id, (set = new Set()));
      // The close listener is removed once the approval resolves, so a long-lived
      // gateway connection does not collect one per call.
      const stopWatching = onWaiterDetached?.(() => {
        const waiting = this.waiters.get(id);
        waiting?.delete(wake);
        if (waiting !== undefined && waiting.size === 0) this.waiters.delete(id);
        this.scheduleOrphanDenial(id);
      });
      const wake = (resolution: Resolution): void => {
        if (typeof stopWatching === 'function') stopWatching();
        resolvePromise(resolution);
      };
      set.add(wake);
    });
  }

  /** A waiter's connection dropped: give it a grace period to reattach (R-D-7), then deny. */
  private scheduleOrphanDenial(id: string): void {
    this.timers.setTimeout(() => {
      const record = this.journal.getApproval(id);
      if (record === undefined || record.state !== 'pending' || record.handoff) return;
      if ((this.waiters.get(id)?.size ?? 0) > 0) return;
      this.resolve(id, { state: 'denied', reason: 'session_ended', decidedAt: this.clock.now() });
    }, this.reattachGraceMs);
  }

  /** `approvals.wait`: re-attach to a pending approval, e.g. after a daemon restart (R-D-7). */
  async wait(id: string, onWaiterDetached?: (detach: () => void) => (() => void) | void): Promise<ApprovalView> {
    await this.waitForResolution(id, onWaiterDetached);
    return this.get(id);
  }

  private rememberPending(view: ApprovalView): void {
    const entry: PendingEntry = { id: view.id, sessionId: view.sessionId, argsSha256: view.argsSha256, json: JSON.stringify(view) };
    if (view.server !== undefined) entry.server = view.server;
    if (view.tool !== undefined) entry.tool = view.tool;
    if (view.handoff === true) entry.handoff = true;
    this.pending.set(view.id, entry);
  }

  /** `approvals.list` for the heads: pending approvals come back as ready JSON text. */
  listAsJson(options: { selector?: string; state?: ApprovalRecord['state']; limit?: number } = {}): JsonText | ApprovalView[] {
    if ((options.state ?? 'pending') !== 'pending') return this.list(options);
    const parts: string[] = [];
    for (const entry of this.pending.values()) {
      if (matchesSelector(entry, options.selector)) parts.push(entry.json);
      if (options.limit !== undefined && parts.length >= options.limit) break;
    }
    return new JsonText(`[${parts.join(',')}]`);
  }

  list(options: { selector?: string; state?: ApprovalRecord['state']; limit?: number } = {}): ApprovalView[] {
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
    const views = this.journal.listApprovals(filter).map(toApprovalView);
    const selected = views.filter((view) => matchesSelector(view, options.selector));
    return options.limit === undefined ? selected : selected.slice(0, options.limit);
  }

  get(id: string): ApprovalView {
    const record = this.journal.getApproval(id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${id}; check the id with: assent pending`);
    return toApprovalView(record);
  }

  decide(params: DecideParams, options: { issueHandoffProof?: boolean } = {}): ApprovalView {
    const record = this.journal.getApproval(params.id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
    if (record.state !== 'pending') {
      throw new AssentError('conflict', `approval ${params.id} was already ${record.state}${record.channel ? ` (via ${record.channel})` : ''}`, {
        details: { state: record.state },
      });
    }
    if (record.expiresAt <= this.clock.now()) {
      this.resolve(params.id, { state: 'expired', reason: 'consent_timeout', decidedAt: this.clock.now() });
      throw new AssentError('conflict', `approval ${params.id} expired before the decision arrived`, { details: { state: 'expired' } });
    }
    const resolution: { state: 'approved' | 'denied'; channel: string; reason?: string; scope?: 'call' | 'session'; decidedAt: number } & DecidedBy = {
      state: params.behavior === 'allow' ? 'approved' : 'denied',
      channel: params.channel,
      decidedAt: this.clock.now(),
    };
    if (params.claimedChannel !== undefined) resolution.claimedChannel = params.claimedChannel;
    if (params.peer !== undefined) resolution.peer = params.peer;
    if (params.behavior === 'deny') resolution.reason = params.reason ?? 'consent_denied';
    if (params.behavior === 'allow') resolution.scope = params.scope ?? 'call';
    if (!this.resolve(params.id, resolution)) {
      const now = this.journal.getApproval(params.id);
      throw new AssentError('conflict', `approval ${params.id} was already ${now?.state ?? 'resolved'}`, { details: { state: now?.state } });
    }
    this.logger.info('approval decided', {
      approvalId: params.id,
      behavior: params.behavior,
      channel: params.channel,
      ...(params.claimedChannel === undefined ? {} : { claimedChannel: params.claimedChannel }),
      ...(params.peer === undefined ? {} : { peer: params.peer }),
    });
    if (params.behavior === 'allow' && record.handoff && record.kind === 'tool' && this.proofs !== undefined && options.issueHandoffProof !== false) {
      // R-MCP-8: the proof for the agent's identical retry stays inside the daemon; its token is dropped here.
      const approved = this.journal.getApproval(params.id);
      if (approved !== undefined) this.proofs.issue(approved, { audience: 'mcp', revision: this.pinned.revision, channel: params.channel });
    }
    return this.get(params.id);
  }

  /** The revision a proof for this approval binds: the daemon's pinned config for tools, the policy file the CLI read for exec. */
  private revisionFor(record: ApprovalRecord): string {
    if (record.kind === 'tool') return this.pinned.revision;
    const revision = record.caller['policyRevision'];
    return typeof revision === 'string' ? revision : '';
  }

  /**
   * `assent approve ID --export-proof FILE` (R-J-7): the operator's allow issues a
   * proof of audience `cli` that the caller writes to a new 0600 file. Returns the
   * token once; it is never stored, logged or sent as an event.
   */
  approveWithProof(params: DecideParams): { approval: ApprovalView; proof: string; proofId: string; expiresAt: number } {
    const proofs = this.requireProofs();
    const view = this.decide({ ...params, behavior: 'allow' }, { issueHandoffProof: false });
    const record = this.journal.getApproval(params.id);
    if (record === undefined) throw new AssentError('not_found', `no approval ${params.id}; check the id with: assent pending`);
    const issued = proofs.issue(record, { audience: 'cli', revision: this.revisionFor(record), channel: params.channel });
    return { approval: view, proof: issued.proof, proofId: issued.view.id, expiresAt: issued.view.expiresAt };
  }

  private requireProofs(): ProofService {
    if (this.proofs === undefined) throw new AssentError('unavailable', 'this daemon was started without proof support; restart it with `assent daemon run`');
    return this.proofs;
  }

  /**
   * `assent action run --via-daemon`: files an exec approval, waits for any human
   * channel, and on allow issues the one proof (audience `cli`) the waiting CLI
   * consumes right before it spawns. Refusals throw `policy_denied`.
   */
  async requestExecApproval(
    params: { sessionId: string; action: unknown; revision: string; caller?: Record<string, unknown> },
    onWaiterDetached?: (detach: () => void) => (() => void) | void,
  ): Promise<{ approvalId: string; proof: string; proofId: string; expiresAt: number }> {
    const proofs = this.requireProofs();
    if (this.stopped) throw new AssentError('unavailable', 'the assent daemon is shutting down; retry the command in a moment');
    const record = this.fileApproval({
      sessionId: params.sessionId,
      kind: 'exec',
      action: params.action,
      argsSha256: digestOf(params.action),
      caller: { ...(params.caller ?? {}), policyRevision: params.revision },
    });
    const resolution = await this.waitForResolution(record.id, onWaiterDetached);
    if (resolution.state !== 'approved') {
      const reason = resolution.state === 'expired' ? 'consent_timeout' : 'consent_denied';
      this.writeAudit({ sessionId: params.sessionId, kind: 'exec', argsSha256: record.argsSha256, outcome: reason, deniedReason: resolution.reason ?? reason, approvalId: record.id });
      throw new AssentError('policy_denied', `${DENIAL_HELP[reason] ?? 'The action was denied.'} Approval ${record.id}; nothing was started.`, {
        details: { reason, approvalId: record.id },
      });
    }
    const approved = this.journal.getApproval(record.id) ?? record;
    const issued = proofs.issue(approved, { audience: 'cli', revision: params.revision, channel: resolution.channel ?? 'cli' });
    return { approvalId: record.id, proof: issued.proof, proofId: issued.view.id, expiresAt: issued.view.expiresAt };
  }

  /** Ends a session: its waiting approvals are denied and its session grants forgotten (R-D-6, R-D-8). */
  endSession(sessionId: string): { denied: number } {
    const session = this.sessions.get(sessionId);
    if (session !== undefined) session.ended = true;
    this.sessionGrants.delete(sessionId);
    this.unlistedTools.delete(sessionId);
    let denied = 0;
    for (const record of this.journal.listApprovals({ state: 'pending' })) {
      if (record.sessionId === sessionId && !record.handoff) {
        if (this.resolve(record.id, { state: 'denied', reason: 'session_ended', decidedAt: this.clock.now() })) denied += 1;
      }
    }
    return { denied };
  }

  /**
   * A gateway's report of `policy.tools` keys that name no tool of their upstream
   * (a typo never decides anything, so the operator should see it). Replaces the
   * session's earlier report; the returned function withdraws this report (when
   * the gateway's connection closes) unless a newer one replaced it.
   */
  reportUnlistedPolicyTools(sessionId: string, entries: UnlistedPolicyToolReport[]): () => void {
    const token = {};
    if (entries.length === 0) this.unlistedTools.delete(sessionId);
    else this.unlistedTools.set(sessionId, { token, entries });
    return () => {
      if (this.unlistedTools.get(sessionId)?.token === token) this.unlistedTools.delete(sessionId);
    };
  }

  /** Every reported key once, with what its server lists and how many gateways reported it. */
  private unlistedPolicyTools(): (UnlistedPolicyToolReport & { sessions: number })[] {
    const byKey = new Map<string, UnlistedPolicyToolReport & { sessions: number }>();
    for (const { entries } of this.unlistedTools.values()) {
      for (const entry of entries) {
        const seen = byKey.get(entry.key);
        if (seen === undefined) byKey.set(entry.key, { ...entry, sessions: 1 });
        else seen.sessions += 1;
      }
    }
    return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  listSessions(): SessionInfo[] {
    return [...this.sessions.values()].filter((s) => !s.ended);
  }

  addRule(rule: Rule): Rule {
    this.journal.insertRule(rule);
    this.recompile();
    return rule;
  }

  listRules(includeInactive = false): Rule[] {
    return this.journal.listRules({ includeInactive });
  }

  revokeRule(id: string): Rule {
    const rule = this.journal.getRule(id);
    if (rule === undefined) throw new AssentError('not_found', `no rule ${id}; list rules with: assent rules list`);
    if (!this.journal.revokeRule(id, this.clock.now())) throw new AssentError('conflict', `rule ${id} is already revoked`);
    this.recompile();
    return this.journal.getRule(id) ?? rule;
  }

  /** Graceful shutdown: deny what live calls wait on (reason `shutdown`), then flush the audit log. */
  async shutdown(): Promise<{ denied: number }> {
    this.stopped = true;
    let denied = 0;
    for (const id of [...this.waiters.keys()]) {
      const record = this.journal.getApproval(id);
      if (record === undefined || record.handoff) continue;
      if (this.resolve(id, { state: 'denied', reason: 'shutdown', decidedAt: this.clock.now() })) denied += 1;
    }
    this.deadlines.clear();
    // Let every woken call finish and send its denial before the server closes its connections.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.audit.flush();
    return { denied };
  }

  status(): Record<string, unknown> {
    return {
      pendingApprovals: this.pending.size,
      waitingCalls: this.waiters.size,
      callsInProgress: this.calls.size,
      sessions: this.listSessions().length,
      configRevision: this.pinned.revision,
      configPath: this.pinned.path,
      notifications: { sent: this.notifier.sent, failures: this.notifier.failures },
      audit: { failures: this.audit.failures },
      policyToolsNotListed: this.unlistedPolicyTools(),
    };
  }
}
