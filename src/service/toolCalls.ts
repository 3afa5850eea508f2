// Gated tool calls, the single seam every call that needs the daemon passes
// (R-D-5): policy, rules and session grants decide; `prompt` files an approval
// and the call waits for it; an admitted call is durable until its end is
// reported, and every outcome is one audit line (R-AUD-1).
import { keptRiskLevel, readApprovalRisk } from '../core/approval/approvalRisk.js';
import { nativeDigestOf } from '../journal/nativeHash.js';
import { AssentError } from '../core/base/errors.js';
import { presenceFor } from '../core/policy/presencePolicy.js';
import { decidingPolicyKey } from '../core/policy/policyKey.js';
import { evaluateToolPolicy, gatewayCallRisk } from '../core/policy/toolPolicy.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { CallInProgressRecord } from '../journal/journal.js';
import type { ApprovalProofs } from './approvalProofs.js';
import { DENIAL_HELP, type ApprovalQueue } from './approvalQueue.js';
import { toApprovalView } from './approvalViews.js';
import { decidedByOf, PendingApproval, recordDecidedBy, REPLY_DEFERRED, type DecidedBy, type DeferredReply, type RequestEnd, type Resolution, type Waiter, type WatchRequest } from './pendingApproval.js';
import { refuseWhileStopping, writeAudit, type ServiceContext } from './serviceContext.js';
import type { Sessions } from './sessions.js';
import type { AuthorizeOptions, AuthorizeParams, AuthorizeResult, CallBase, CallOutcome, CallRecord, Consent } from './toolCallTypes.js';

/**
 * What an allow for the session remembers: the tool; for an agent action, what
 * its binding names (a shell action's command text, a path action's paths;
 * R-POL-7), else its exact input.
 */
function sessionGrantKey(call: Pick<CallBase, 'server' | 'tool' | 'argsSha256' | 'agent'>, subject?: string): string {
  return call.agent === undefined ? `${call.server}/${call.tool}` : `${call.server}/${call.tool}#${subject ?? call.argsSha256}`;
}

/** Admits a waiting call, or rejects with its denial, once its approval resolved. */
type SettleCall = (id: string, base: CallBase, startedMono: number, resolution: Resolution, grantSubject: string | undefined) => Promise<AuthorizeResult>;

/** The caller of a call that names none: one frozen object for all of them, not one each while they wait. */
const NO_CALLER: Record<string, unknown> = Object.freeze({});

/**
 * What a call's audit lines need, built in one literal of its final shape: a
 * field added afterwards would give every waiting call's record a second,
 * out-of-object property store.
 */
function callBase(
  sessionId: string,
  server: string,
  tool: string,
  argsSha256: string,
  caller: Record<string, unknown>,
  agent: CallBase['agent'],
  risk: CallBase['risk'],
): CallBase {
  if (agent === undefined) return risk === undefined ? { sessionId, server, tool, argsSha256, caller } : { sessionId, server, tool, argsSha256, caller, risk };
  return risk === undefined ? { sessionId, server, tool, argsSha256, caller, agent } : { sessionId, server, tool, argsSha256, caller, agent, risk };
}

/**
 * A gated call waiting for a person (R-D-5). All it holds while it waits is the
 * approval, what its audit line needs and its promise: no copy of its arguments.
 */
class CallWaiter implements Waiter {
  constructor(
    private readonly queue: ApprovalQueue,
    private readonly settle: SettleCall,
    private readonly entry: PendingApproval,
    private readonly base: CallBase,
    private readonly startedMono: number,
    /** What an allow for the session would remember of an agent action (sessionGrantKey); undefined for a gateway call. */
    private readonly grantSubject: string | undefined,
    /** Where the call's result goes: the promise authorize returned, or the head's own reply (AuthorizeOptions.reply). */
    private readonly reply: DeferredReply,
  ) {}

  wake(resolution: Resolution): void {
    this.settle(this.entry.id, this.base, this.startedMono, resolution, this.grantSubject).then(
      (result) => this.reply.resolve(result),
      (error: unknown) => this.reply.reject(error),
    );
  }

  requestEnded(how: RequestEnd): void {
    // A hook never re-attaches: its agent went away, however the request ended (R-HOOK-12).
    if (this.base.agent !== undefined) this.queue.withdraw(this.entry, this, 'withdrawn');
    else if (how === 'cancelled') this.queue.withdraw(this.entry, this);
    else this.queue.detach(this.entry, this);
  }
}

export class ToolCalls {
  private readonly calls = new Map<string, CallRecord>();
  /** Approvals whose one call was admitted: an approval lets exactly one call through (single-use). */
  private readonly taken = new Set<string>();
  private readonly startedAt: number;
  private callCounter = 0;
  /** One function for every waiting call, so none carries its own. */
  private readonly settle: SettleCall = (id, base, startedMono, resolution, grantSubject) => this.settleCall(id, base, startedMono, resolution, grantSubject);

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: ApprovalQueue,
    private readonly sessions: Sessions,
    private readonly proofs: ApprovalProofs,
  ) {
    this.startedAt = ctx.clock.now();
  }

  /** Calls admitted and not yet finished. */
  get inProgress(): number {
    return this.calls.size;
  }

  /**
   * The single seam for a gated call (R-D-5). Resolves only when the call may
   * run; every refusal is a `policy_denied` error whose details carry the reason.
   * A call that waits is settled by its waiter, through this promise or, when
   * the head gave `options.reply`, straight to the head, the promise resolving
   * to REPLY_DEFERRED at once: nothing else is held while a person decides
   * (SPEC §14: ten thousand may wait at once).
   */
  authorize(params: AuthorizeParams, options: AuthorizeOptions = {}): Promise<AuthorizeResult> {
    return new Promise<AuthorizeResult>((resolvePromise, rejectPromise) => {
      const deferred = options.reply;
      const reply: DeferredReply = deferred ?? { resolve: resolvePromise as (result: unknown) => void, reject: rejectPromise };
      this.decideCall(params, options, reply).then((settled) => {
        if (settled !== undefined) resolvePromise(settled);
        // The call waits, and its result will go to the head's reply: this promise is done with.
        else if (deferred !== undefined) resolvePromise(REPLY_DEFERRED as unknown as AuthorizeResult);
      }, rejectPromise);
    });
  }

  /** Decides the call; undefined when it waits for a person, and its waiter will settle the call's promise. */
  private async decideCall(
    params: AuthorizeParams,
    options: AuthorizeOptions,
    reply: DeferredReply,
  ): Promise<AuthorizeResult | undefined> {
    const { ctx } = this;
    refuseWhileStopping(ctx, 'call');
    const caller = params.caller ?? NO_CALLER;
    const agent = params.agentAction;
    this.sessions.touch(params.sessionId, agent?.auditCaller ?? caller);
    const argsSha256 = nativeDigestOf(params.args);
    const evaluation =
      agent?.evaluation ??
      evaluateToolPolicy(
        ctx.snapshot(),
        params.annotations === undefined
          ? { server: params.server, tool: params.tool, args: params.args }
          : { server: params.server, tool: params.tool, args: params.args, annotations: params.annotations },
        ctx.clock.now(),
      );
    const toolRisk = agent === undefined ? gatewayCallRisk(ctx.snapshot(), `${params.server}/${params.tool}`, params.annotations) : undefined;
    const risk = agent !== undefined ? readApprovalRisk(caller['risk'])?.level : toolRisk?.level;
    const base = callBase(params.sessionId, params.server, params.tool, argsSha256, agent?.auditCaller ?? caller, agent?.agent, risk);
    if (agent?.confined !== undefined && evaluation.decision === 'allow') base.confined = agent.confined;

    const policyKey = decidingPolicyKey(evaluation);
    if (evaluation.decision !== 'deny') this.refuseWithoutStorage(base);
    if (evaluation.decision === 'deny') {
      writeAudit(ctx, policyKey === undefined ? { ...base, outcome: 'denied', deniedReason: 'policy' } : { ...base, outcome: 'denied', deniedReason: 'policy', ruleId: policyKey });
      const pinned = ctx.pinned();
      throw new AssentError('policy_denied', `policy denies ${params.server}/${params.tool}`, {
        details: {
          reason: 'policy',
          hint: `decided by ${evaluation.key ?? 'policy.default'} in ${pinned.path}`,
          file: pinned.path,
          key: evaluation.key ?? 'policy.default',
        },
      });
    }
    // R-REM-6: an action that needs a passkey is approved by nothing else — no rule, no session grant.
    const needsPresence = presenceFor(ctx.presence(), `${params.server}/${params.tool}`) !== undefined;
    if (evaluation.decision === 'allow' && !(needsPresence && evaluation.ruleId !== undefined)) {
      if (evaluation.ruleId !== undefined) return this.admit(base, { channel: 'rule', ruleId: evaluation.ruleId }, 0);
      return this.admit(policyKey === undefined ? base : { ...base, ruleId: policyKey }, undefined, 0);
    }

    // What the approval shows about why it asks and how risky it is (R-REM-5); set by the daemon, whatever the
    // client put in its caller, and not audited (the audit keeps the caller as the client gave it).
    const filedCaller: Record<string, unknown> =
      agent === undefined
        ? { ...caller, policy: { decision: 'prompt', key: evaluation.key ?? 'policy.default' }, risk: toolRisk }
        : caller;
    const grantKey = sessionGrantKey(base, agent?.sessionGrant);
    const grantedBy = needsPresence ? undefined : this.sessions.grantedBy(params.sessionId, grantKey);
    if (grantedBy !== undefined) {
      return this.admit(base, { channel: 'session', approvalId: grantedBy }, 0);
    }
    // R-TEAM-7: without the shared database no other host can decide, so nothing new is filed.
    if (!ctx.store.available()) throw this.refuseUnavailable(base);
    // A hook waits for its answer; handoff (an immediate refusal and a retry) is for gateway calls only.
    const handoffProofs = agent === undefined ? this.proofs.handoffProofs() : undefined;
    if (handoffProofs !== undefined) {
      const admission = await this.withStore(base, () => this.proofs.authorizeHandoff(params, base, handoffProofs, filedCaller));
      return admission.kind === 'replay' ? admission.result : this.admit(base, admission.consent, 0, admission.effectId);
    }

    const startedMono = ctx.clock.monotonic();
    const filing = { sessionId: params.sessionId, kind: 'tool' as const, server: params.server, tool: params.tool, args: params.args, argsSha256, caller: filedCaller };
    const record = await this.withStore(base, () => this.queue.file(filing, agent?.consentTimeoutMs));
    options.onApprovalFiled?.(toApprovalView(record));
    await this.waitOn(record.id, base, startedMono, options.watch, agent?.sessionGrant, reply);
    return undefined;
  }

  /** Runs a step that needs the store; a store that cannot be reached refuses the call as `unavailable` (R-TEAM-7), audited, nothing run. */
  private async withStore<T>(base: CallBase, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.refuseWithoutStorage(base, error);
      if (error instanceof AssentError && error.type === 'unavailable' && !this.ctx.stopping()) throw this.refuseUnavailable(base, error);
      throw error;
    }
  }

  /** Issue 35: nothing is allowed or filed that the state directory could not record (a full or failing disk); the refusal is audited, held until it can be. */
  private refuseWithoutStorage(base: CallBase, error?: unknown): void {
    const refusal = this.ctx.storage?.callRefusal(`${base.server}/${base.tool}`, error);
    if (refusal === undefined) return;
    writeAudit(this.ctx, { ...base, outcome: 'denied', deniedReason: String(refusal.details?.['detail']) });
    throw refusal;
  }

  private refuseUnavailable(base: CallBase, cause?: AssentError): AssentError {
    writeAudit(this.ctx, { ...base, outcome: 'denied', deniedReason: 'unavailable' });
    this.ctx.logger.warn('a prompt call was refused: the store cannot be reached', { server: base.server, tool: base.tool, ...(cause === undefined ? {} : { error: cause.message }) });
    // What the agent reads: no database address, only what happened and where the operator looks.
    const hint = 'The team database of assent cannot be reached right now, so no approval could be filed (`assent daemon status` on this host shows it)';
    return new AssentError('policy_denied', `assent did not file or run ${base.server}/${base.tool}: the team database cannot be reached. Nothing was run; retry once it is back.`, {
      details: { reason: 'unavailable', detail: 'database', hint },
    });
  }

  /**
   * Re-attaches a call to the approval it filed before the daemon restarted
   * (R-D-7): the gateway presents the same session, tool and arguments and the
   * approval id it was told; the call then waits and is admitted or refused as
   * if it had never left.
   */
  async resume(params: AuthorizeParams & { approvalId: string }, options: { watch?: WatchRequest } = {}): Promise<AuthorizeResult> {
    const { ctx } = this;
    refuseWhileStopping(ctx, 'call');
    const record = await ctx.store.getApproval(params.approvalId);
    const argsSha256 = nativeDigestOf(params.args);
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
    this.sessions.touch(params.sessionId, caller);
    const base = { sessionId: params.sessionId, server: params.server, tool: params.tool, argsSha256, caller };
    return this.awaitDecision(record.id, base, ctx.clock.monotonic() - Math.max(0, ctx.clock.now() - record.requestedAt), options.watch, params.agentAction?.sessionGrant);
  }

  /** Waits for a filed approval, then admits the call or throws its denial (audited either way). */
  private awaitDecision(id: string, base: CallBase, startedMono: number, watch: WatchRequest | undefined, grantSubject: string | undefined): Promise<AuthorizeResult> {
    return new Promise<AuthorizeResult>((resolvePromise, rejectPromise) => {
      this.waitOn(id, base, startedMono, watch, grantSubject, { resolve: resolvePromise as (result: unknown) => void, reject: rejectPromise }).catch(rejectPromise);
    });
  }

  /** Leaves the call waiting on its approval (a CallWaiter settles it), or settles it at once when the approval is resolved already. */
  private async waitOn(
    id: string,
    base: CallBase,
    startedMono: number,
    watch: WatchRequest | undefined,
    grantSubject: string | undefined,
    reply: DeferredReply,
  ): Promise<void> {
    const entry = await this.queue.pendingOrResolved(id);
    if (!(entry instanceof PendingApproval)) {
      this.settleCall(id, base, startedMono, entry, grantSubject).then(
        (result) => reply.resolve(result),
        (error: unknown) => reply.reject(error),
      );
      return;
    }
    this.queue.addWaiter(entry, new CallWaiter(this.queue, this.settle, entry, base, startedMono, grantSubject, reply), watch);
  }

  private async settleCall(id: string, base: CallBase, startedMono: number, resolution: Resolution, grantSubject: string | undefined): Promise<AuthorizeResult> {
    const waited = Math.max(1, Math.round(this.ctx.clock.monotonic() - startedMono));
    if (resolution.state === 'approved') {
      if (this.taken.has(id)) {
        throw new AssentError('conflict', `approval ${id} already let its one call through; send the call again`);
      }
      // Approved, but the disk filled meanwhile: refused like any call (the approval was decided while it took writes).
      this.refuseWithoutStorage(base);
      this.taken.add(id);
      if (resolution.scope === 'session') this.sessions.grant(base.sessionId, sessionGrantKey(base, grantSubject), id);
      return this.admit(base, { channel: resolution.channel ?? 'cli', approvalId: id }, waited, undefined, decidedByOf(resolution));
    }
    // Operator denials carry a channel (and maybe the operator's words); lifecycle
    // denials (shutdown, session_ended) carry only their reason.
    const detail =
      resolution.state === 'expired' ? 'consent_timeout' : resolution.channel === undefined ? (resolution.reason ?? 'consent_denied') : 'consent_denied';
    const denialKind = resolution.state === 'expired' ? 'consent_timeout' : detail === 'cancelled' || detail === 'withdrawn' ? detail : 'consent_denied';
    // R-AUD-1: a caller that went away while it waited is `withdrawn`, a gateway's client as a hook's agent;
    // the reason code keeps how it went (`cancelled`: the MCP client's cancel).
    const outcome = denialKind === 'cancelled' ? 'withdrawn' : denialKind;
    const operatorReason =
      resolution.channel !== undefined && resolution.reason !== undefined && resolution.reason !== 'consent_denied' ? resolution.reason : undefined;
    const audit: Omit<AuditRecord, 'ts' | 'principal'> = {
      ...base,
      outcome,
      deniedReason: detail,
      approvalId: id,
      waitedForConsentMs: waited,
    };
    if (resolution.channel !== undefined) audit.channel = resolution.channel as NonNullable<AuditRecord['channel']>;
    recordDecidedBy(audit, decidedByOf(resolution));
    writeAudit(this.ctx, audit);
    const message = `${DENIAL_HELP[detail] ?? `The call was denied (${detail}).`}${operatorReason === undefined ? '' : ` Reason given: ${operatorReason}`}`;
    const details: Record<string, unknown> = { reason: denialKind, detail, approvalId: id };
    if (operatorReason !== undefined) details['operatorReason'] = operatorReason;
    throw new AssentError('policy_denied', message, { details });
  }

  private async admit(base: CallBase, consent: Consent | undefined, waited: number, effectId?: string, decidedBy?: DecidedBy): Promise<AuthorizeResult> {
    const { ctx } = this;
    const callId = this.newCallId();
    const call: CallRecord = {
      sessionId: base.sessionId,
      server: base.server,
      tool: base.tool,
      argsSha256: base.argsSha256,
      caller: base.caller,
      consent,
      waitedForConsentMs: waited,
      authorizedAtMono: ctx.clock.monotonic(),
    };
    if (base.agent !== undefined) call.agent = base.agent;
    if (base.risk !== undefined) call.risk = base.risk;
    if (base.confined !== undefined) call.confined = base.confined;
    if (base.ruleId !== undefined) call.ruleId = base.ruleId;
    if (effectId !== undefined) call.effectId = effectId;
    else if (base.agent !== undefined) {
      // R-HOOK-10: an agent action's start is its own audit line; its end comes, if ever,
      // from the after-event. Not journaled (the line is its record): a lost after-event leaves it `started`, never invented.
      const started: Omit<AuditRecord, 'ts' | 'principal'> = { ...base, callId, outcome: 'started', waitedForConsentMs: waited };
      if (consent !== undefined) {
        started.channel = consent.channel as NonNullable<AuditRecord['channel']>;
        if (consent.approvalId !== undefined) started.approvalId = consent.approvalId;
        if (consent.ruleId !== undefined) started.ruleId = consent.ruleId;
      }
      recordDecidedBy(started, decidedBy);
      writeAudit(ctx, started);
      // The agent runs it the moment the hook answers: the answer waits for the line's write(2),
      // so a kill -9 of the daemon right after cannot take the call's only record with it.
      await ctx.audit.written();
    } else {
      // Durable before the caller may run it: a crash before its end is recorded leaves it
      // here, and the next start audits it as uncertain (R-J-5 for calls). A handoff retry
      // needs no row: its effect intent in the proof store already plays that part.
      const durable: CallInProgressRecord = {
        callId,
        sessionId: base.sessionId,
        server: base.server,
        tool: base.tool,
        argsSha256: base.argsSha256,
        caller: base.caller,
        waitedForConsentMs: waited,
        authorizedAt: ctx.clock.now(),
      };
      if (base.ruleId !== undefined) durable.ruleId = base.ruleId;
      if (consent !== undefined) {
        durable.channel = consent.channel;
        if (consent.approvalId !== undefined) durable.approvalId = consent.approvalId;
        if (consent.ruleId !== undefined) durable.ruleId = consent.ruleId;
      }
      // Not recorded, not run: a store that cannot take the row refuses the call (R-TEAM-7).
      await this.withStore(base, () => ctx.store.recordCallInProgress(durable));
    }
    if (decidedBy !== undefined) call.decision = decidedBy;
    this.calls.set(callId, call);
    // Agent actions are audited, not journaled as events: like the calls a gateway settles from its
    // snapshot, they would cost an fsync each on the path every agent tool call takes (SPEC §14).
    if (base.agent === undefined) void ctx.bus.publish('call_started', { callId, server: base.server, tool: base.tool, channel: consent?.channel }, base.sessionId);
    const result: AuthorizeResult = { callId, decision: 'allow', waitedForConsentMs: waited };
    if (consent !== undefined) result.consent = consent;
    if (effectId !== undefined) result.effectId = effectId;
    return result;
  }

  /**
   * An agent call that ran on an answer given in the agent's own dialog after its
   * approval had ended here (R-HOOK-9): admitted as it ran, so its start and end
   * are audited as what happened. Returns the call's id for `finish`.
   */
  async admitAgentRun(base: CallBase, consent: Consent): Promise<string> {
    return (await this.admit(base, consent, 0)).callId;
  }

  /** Records the end of an admitted call and writes its audit line (R-AUD-1). */
  async finish(params: { callId: string; outcome: CallOutcome; durationMs?: number; result?: unknown }): Promise<{ recorded: boolean }> {
    const { ctx } = this;
    const call = this.calls.get(params.callId);
    if (call === undefined) throw new AssentError('not_found', `no call ${params.callId} is in progress; it was finished already or never authorized`);
    this.calls.delete(params.callId);
    // No outcome, no duration: nobody knows whether or how long it ran (R-HOOK-12).
    const durationMs = params.outcome === 'no_outcome' ? undefined : (params.durationMs ?? Math.round(ctx.clock.monotonic() - call.authorizedAtMono));
    if (call.effectId === undefined && call.agent === undefined) {
      try {
        await ctx.store.endCallInProgress(params.callId);
      } catch (error) {
        // The audit line below still records the outcome; a restart may add an uncertain line for it.
        ctx.logger.warn('could not clear a finished call from the journal', { callId: params.callId, error });
      }
    }
    if (call.effectId !== undefined && ctx.proofs !== undefined) {
      try {
        const outcome: { ok: boolean; result?: unknown } = { ok: params.outcome === 'ok' };
        if (params.result !== undefined) outcome.result = params.result;
        await ctx.proofs.finishEffect(call.effectId, outcome);
      } catch (error) {
        ctx.logger.warn('could not record the outcome of an effect', { effectId: call.effectId, error });
      }
    }
    const record: Omit<AuditRecord, 'ts' | 'principal'> = {
      sessionId: call.sessionId,
      server: call.server,
      tool: call.tool,
      argsSha256: call.argsSha256,
      outcome: params.outcome,
      waitedForConsentMs: call.waitedForConsentMs,
      caller: call.caller,
    };
    if (durationMs !== undefined) record.durationMs = durationMs;
    if (call.agent !== undefined) {
      record.agent = call.agent;
      record.callId = params.callId;
    }
    if (call.risk !== undefined) record.risk = call.risk;
    if (call.confined !== undefined) record.confined = call.confined;
    if (call.ruleId !== undefined) record.ruleId = call.ruleId;
    if (call.consent !== undefined) {
      record.channel = call.consent.channel as NonNullable<AuditRecord['channel']>;
      if (call.consent.approvalId !== undefined) record.approvalId = call.consent.approvalId;
      if (call.consent.ruleId !== undefined) record.ruleId = call.consent.ruleId;
    }
    recordDecidedBy(record, call.decision);
    writeAudit(ctx, record);
    if (call.agent === undefined) void ctx.bus.publish('call_finished', { callId: params.callId, outcome: params.outcome, durationMs }, call.sessionId);
    return { recorded: true };
  }

  /** Whether an admitted call is still in progress (its end not yet recorded). */
  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** Drops an admitted call without auditing an end: its after-event will not come (the agent-action service bounds what it keeps). */
  forget(callId: string): void {
    this.calls.delete(callId);
  }

  /** Audits every call a previous run admitted but never saw finish as `uncertain` (R-J-5 for calls): it may or may not have run. */
  async reconcileCallsInProgress(): Promise<void> {
    const { ctx } = this;
    const leftover = await ctx.store.listCallsInProgress();
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
        risk: keptRiskLevel(call.caller),
      };
      if (call.channel !== undefined) record.channel = call.channel as NonNullable<AuditRecord['channel']>;
      if (call.approvalId !== undefined) record.approvalId = call.approvalId;
      if (call.ruleId !== undefined) record.ruleId = call.ruleId;
      writeAudit(ctx, record);
    }
    ctx.logger.warn('calls admitted before a restart never reported their end; audited as uncertain', { count: leftover.length });
    // Cleared only once their audit lines are on disk: a crash before that audits them again rather than never.
    void ctx.audit
      .durable()
      .then(async () => {
        for (const call of leftover) await ctx.store.endCallInProgress(call.callId);
      })
      .catch((error: unknown) => ctx.logger.warn('could not clear reconciled calls from the journal', { error }));
  }

  private newCallId(): string {
    this.callCounter += 1;
    return `c${this.ctx.clock.now().toString(36)}${this.callCounter.toString(36)}`;
  }
}
