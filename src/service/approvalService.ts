// The approval service: the one place that decides a tool call (R-ARCH-3). Every
// head reaches it through the operations in src/operations. This facade wires
// its parts and holds the configuration in force; each part owns one concern:
// approvalQueue (filing, deadlines, waiters, resolution), toolCalls (the gated
// call seam), sessions (sessions and grants), approvalProofs (handoff and
// proofs), execApprovals (commands the CLI wants to start).
import type { Notifier } from '../channels/notifier.js';
import { AGENT_NAMES } from '../core/agent/agentAction.js';
import { describeRuleForm } from '../core/policy/autoApproval.js';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import type { RandomBytes } from '../core/base/ids.js';
import type { JsonText } from '../core/base/jsonText.js';
import { compilePresence, presenceFor, presenceMarkedToolsOfRule, type CompiledPresence, type Presence } from '../core/policy/presencePolicy.js';
import { compilePolicy, type PolicySnapshot, type Rule } from '../core/policy/toolPolicy.js';
import type { AuditLog } from '../journal/auditLog.js';
import type { RemoteEvent, StoreChange } from '../journal/store.js';
import { ApprovalProofs } from './approvalProofs.js';
import { ApprovalQueue, type DecideParams, type DecisionResult, type ListOptions } from './approvalQueue.js';
import type { ApprovalView } from './approvalViews.js';
import type { EventBus, EventKind } from './eventBus.js';
import { ExecApprovals, type ExecApprovalGrant, type ExecApprovalRequest } from './execApprovals.js';
import type { Logger } from './logger.js';
import type { WatchRequest } from './pendingApproval.js';
import type { ProofService } from './proofService.js';
import type { PinnedConfig, ServiceContext, ServiceStores } from './serviceContext.js';
import type { StorageGuard } from './storageGuard.js';
import { Sessions, type SessionInfo, type UnlistedPolicyToolReport } from './sessions.js';
import { realTimers, type Timers } from '../core/base/timers.js';
import type { AuthorizeOptions, AuthorizeParams, AuthorizeResult, CallBase, CallOutcome, Consent } from './toolCallTypes.js';
import { ToolCalls } from './toolCalls.js';

// The service's public surface, named here so operations and heads import one module.
export type { DecideParams, DecisionResult, ListOptions, PresenceConfirmation } from './approvalQueue.js';
export { matchesSelector, toApprovalView, type ApprovalView, type DecisionPeer } from './approvalViews.js';
export { MAX_PENDING_HANDOFF_PER_SESSION } from './approvalProofs.js';
export type { ExecApprovalGrant, ExecApprovalRequest } from './execApprovals.js';
export type { DeferredReply, RequestEnd, RequestEndListener, WatchRequest } from './pendingApproval.js';
export { REPLY_DEFERRED } from './pendingApproval.js';
export type { PinnedConfig } from './serviceContext.js';
export type { SessionInfo, UnlistedPolicyToolReport } from './sessions.js';
export { realTimers, type Timers } from '../core/base/timers.js';
export type { AuthorizeOptions, AuthorizeParams, AuthorizeResult, CallOutcome, Consent, ToolAnnotations } from './toolCallTypes.js';

/** An approval as a decision left it, with what that decision did (R-TEAM-3: "k of N, still pending", or a repeat). */
export type DecidedView = ApprovalView & { decision: DecisionResult };

export interface ApprovalServiceOptions {
  /** The embedded journal or the team database (R-TEAM-1); the service works the same on either. */
  store: ServiceStores;
  audit: AuditLog;
  bus: EventBus;
  clock: Clock;
  random: RandomBytes;
  timers?: Timers;
  notifier: Notifier;
  logger: Logger;
  config: PinnedConfig;
  /** This host's principal (R-TEAM-3): owner of its agent sessions, and of decisions that name no principal. */
  principal: string;
  /** This host's id (identity.json), recorded on the approvals it files and decides. */
  hostId?: string;
  /** How long an approval waits for a waiter to come back after its connection dropped. */
  reattachGraceMs?: number;
  /** Proofs and effects (R-J-*); without it handoff mode is unavailable and prompt calls wait as usual. */
  proofs?: ProofService;
  /** Cap of pending handoff approvals per session (default MAX_PENDING_HANDOFF_PER_SESSION). */
  maxPendingHandoffPerSession?: number;
  /** The state directory's device (issue 35): while it takes no writes, no call is allowed and no decision recorded. */
  storage?: StorageGuard;
}

export class ApprovalService {
  private readonly ctx: ServiceContext;
  private readonly queue: ApprovalQueue;
  private readonly sessions: Sessions;
  private readonly calls: ToolCalls;
  private readonly proofs: ApprovalProofs;
  private readonly exec: ExecApprovals;
  private pinned: PinnedConfig;
  private snapshot: PolicySnapshot;
  /** The active rules the snapshot was compiled from, as the store gave them. */
  private rules: Rule[] = [];
  private presence: CompiledPresence;
  private stopped = false;
  private unwatch: (() => void) | undefined;

  constructor(options: ApprovalServiceOptions) {
    this.pinned = options.config;
    this.presence = compilePresence(this.pinned.config.policy.presence);
    // Rules come from the store in start(); until then none apply, which can only ask more, never allow more.
    this.snapshot = compilePolicy(this.pinned.config.policy, []);
    this.ctx = {
      store: options.store,
      audit: options.audit,
      bus: options.bus,
      clock: options.clock,
      random: options.random,
      timers: options.timers ?? realTimers,
      notifier: options.notifier,
      logger: options.logger,
      principal: options.principal,
      hostId: options.hostId,
      proofs: options.proofs,
      storage: options.storage,
      pinned: () => this.pinned,
      snapshot: () => this.snapshot,
      presence: () => this.presence,
      stopping: () => this.stopped,
    };
    this.queue = new ApprovalQueue(this.ctx, options.reattachGraceMs === undefined ? {} : { reattachGraceMs: options.reattachGraceMs });
    this.sessions = new Sessions(options.clock);
    this.proofs = new ApprovalProofs(
      this.ctx,
      this.queue,
      options.maxPendingHandoffPerSession === undefined ? {} : { maxPendingHandoffPerSession: options.maxPendingHandoffPerSession },
    );
    this.calls = new ToolCalls(this.ctx, this.queue, this.sessions, this.proofs);
    this.exec = new ExecApprovals(this.ctx, this.queue);
  }

  /**
   * Loads the rules, re-arms deadlines of approvals that survived a restart and
   * expires the stale ones (R-D-7), denies those an agent's hook waited on (no
   * hook re-attaches), and audits every call a previous run
   * admitted but never saw finish as `uncertain` (R-J-5 for calls): it may or
   * may not have run. In a shared store it then follows the other hosts.
   */
  async start(): Promise<void> {
    if (this.ctx.store.shared) this.unwatch = this.ctx.store.watch((change) => this.onStoreChange(change));
    await this.recompile();
    await this.queue.restore();
    const orphans = await this.queue.denyOrphanedHookApprovals();
    if (orphans > 0) this.ctx.logger.warn('approvals an agent hook waited on when the previous daemon ended are denied: their hooks answered deny then', { count: orphans });
    await this.calls.reconcileCallsInProgress();
  }

  /** What another host did, or the shared store coming back (R-TEAM-2). Called from the store's feed: never throws. */
  private onStoreChange(change: StoreChange): void {
    const handled = change.kind === 'event' ? this.applyRemoteEvent(change.event) : change.state === 'restored' ? this.catchUp() : Promise.resolve();
    handled.catch((error: unknown) => this.ctx.logger.warn('could not apply a change from the team database', { change: change.kind, error }));
  }

  private async applyRemoteEvent(event: RemoteEvent): Promise<void> {
    // Another host's configuration is its own (R-TEAM-6); only its rule changes are ours too.
    if (event.kind === 'daemon_started' || (event.kind === 'config_changed' && event.data['source'] !== 'rules')) return;
    if (event.kind === 'config_changed') await this.recompile();
    const data = await this.queue.applyRemote(event);
    if (data === undefined) return;
    const delivered = { kind: event.kind as EventKind, seq: event.seq, ts: event.ts, data };
    this.ctx.bus.deliver(event.sessionId === undefined ? delivered : { ...delivered, sessionId: event.sessionId });
  }

  /** After the shared store came back: what was filed, decided or changed meanwhile is taken up (R-TEAM-7). */
  private async catchUp(): Promise<void> {
    await this.recompile();
    await this.queue.restore();
    this.ctx.logger.info('team database reachable again; pending approvals and rules caught up');
  }

  /** Whether approvals live in a store other hosts share (the team database, R-TEAM-1). */
  get sharedStore(): boolean {
    return this.ctx.store.shared;
  }

  get config(): PinnedConfig {
    return this.pinned;
  }

  get policySnapshot(): PolicySnapshot {
    return this.snapshot;
  }

  /** Applies a newly confirmed configuration (R-CFG-4). */
  async applyConfig(next: PinnedConfig): Promise<void> {
    this.pinned = next;
    this.presence = compilePresence(this.pinned.config.policy.presence);
    this.snapshot = compilePolicy(this.pinned.config.policy, this.rulesWithoutPresence());
    await this.recompile().catch((error: unknown) => this.ctx.logger.warn('rules could not be read again; the previous ones stay in force', { error }));
    void this.ctx.bus.publish('config_changed', { revision: next.revision, applied: true });
  }

  private async recompile(): Promise<void> {
    const rules = await this.ctx.store.listRules({ now: this.ctx.clock.now() });
    this.rules = rules;
    this.presence = compilePresence(this.pinned.config.policy.presence);
    this.snapshot = compilePolicy(this.pinned.config.policy, this.rulesWithoutPresence());
  }

  /** What approving a call of tool id `toolId` needs beyond a channel (`policy.presence`, R-REM-6). */
  presenceFor(toolId: string): Presence | undefined {
    return presenceFor(this.presence, toolId)?.presence;
  }

  /**
   * The active rules that may decide calls: none for a tool that needs a passkey, since a
   * rule's allow is no person's assertion (R-REM-6). Gateways get this list in their snapshot.
   */
  rulesWithoutPresence(rules: readonly Rule[] = this.activeRules()): Rule[] {
    // Command, path and URL rules (no tool) stay: the call path refuses their allow for such an action.
    return rules.filter((rule) => rule.tool === undefined || presenceFor(this.presence, rule.tool) === undefined);
  }

  /** The rules in force now, as last read from the store. */
  private activeRules(): Rule[] {
    const now = this.ctx.clock.now();
    return this.rules.filter((rule) => (rule.revokedAt === undefined || rule.revokedAt > now) && (rule.expiresAt === undefined || rule.expiresAt > now));
  }

  /** The single seam for a gated call (R-D-5); see ToolCalls.authorize. */
  authorize(params: AuthorizeParams, options: AuthorizeOptions = {}): Promise<AuthorizeResult> {
    return this.calls.authorize(params, options);
  }

  /** Re-attaches a call to the approval it filed before the daemon restarted (R-D-7). */
  resume(params: AuthorizeParams & { approvalId: string }, options: { watch?: WatchRequest } = {}): Promise<AuthorizeResult> {
    return this.calls.resume(params, options);
  }

  /** Records the end of an admitted call and writes its audit line (R-AUD-1). */
  finish(params: { callId: string; outcome: CallOutcome; durationMs?: number; result?: unknown }): Promise<{ recorded: boolean }> {
    return this.calls.finish(params);
  }

  /** An agent call that ran on an answer in the agent's own dialog after its approval ended (R-HOOK-9); see ToolCalls.admitAgentRun. */
  admitAgentRun(base: CallBase, consent: Consent): Promise<string> {
    return this.calls.admitAgentRun(base, consent);
  }

  /** Whether an admitted call is still in progress. */
  hasCall(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** Drops an admitted agent call whose after-event will not come, without an end line (R-HOOK-6). */
  forgetCall(callId: string): void {
    this.calls.forget(callId);
  }

  /** `approvals.wait`: re-attach to a pending approval, e.g. after a daemon restart (R-D-7). */
  wait(id: string, watch?: WatchRequest): Promise<ApprovalView> {
    return this.queue.wait(id, watch);
  }

  /** `approvals.list` for the heads: pending approvals come back as ready JSON text. */
  listAsJson(options: ListOptions = {}): JsonText | Promise<ApprovalView[]> {
    return this.queue.listAsJson(options);
  }

  list(options: ListOptions = {}): Promise<ApprovalView[]> {
    return this.queue.list(options);
  }

  get(id: string): Promise<ApprovalView> {
    return this.queue.get(id);
  }

  /**
   * A person's decision; the first resolver wins (R-D-6). Four-eyes and quorum are
   * judged in the deciding transaction (R-TEAM-3). An allow that resolves a handoff
   * approval leaves the proof for its retry (R-MCP-8): with a quorum, only the
   * approval that meets it, and before anyone hears of the decision.
   */
  async decide(params: DecideParams): Promise<DecidedView> {
    // Refused, not half recorded: the approval stays pending and can be decided once the disk takes writes again.
    const refusal = this.ctx.storage?.refusal();
    if (refusal !== undefined) throw refusal;
    const { before: _before, ...decision } = await this.queue.decide(params, (decided) => this.proofs.issueRetryProof(decided, params));
    return { ...(await this.queue.get(params.id)), decision };
  }

  /** `assent approve ID --export-proof FILE` (R-J-7); see ApprovalProofs.approveWithProof. */
  approveWithProof(params: DecideParams): Promise<{ approval: ApprovalView; proof: string; proofId: string; expiresAt: number }> {
    return this.proofs.approveWithProof(params);
  }

  /** `assent action run --via-daemon`; see ExecApprovals.request. */
  requestExecApproval(params: ExecApprovalRequest, watch?: WatchRequest): Promise<ExecApprovalGrant> {
    return this.exec.request(params, watch);
  }

  /** Ends a session: its waiting approvals are denied and its session grants forgotten (R-D-6, R-D-8). */
  async endSession(sessionId: string): Promise<{ denied: number }> {
    this.sessions.end(sessionId);
    return { denied: await this.queue.denySession(sessionId) };
  }

  /** A gateway's report of `policy.tools` keys its upstream does not list; see Sessions.reportUnlistedPolicyTools. */
  reportUnlistedPolicyTools(sessionId: string, entries: UnlistedPolicyToolReport[]): () => void {
    return this.sessions.reportUnlistedPolicyTools(sessionId, entries);
  }

  /** A gateway's report of the tool names it lists to its client; see Sessions.reportGatewayTools. */
  reportGatewayTools(sessionId: string, tools: readonly string[]): () => void {
    return this.sessions.reportGatewayTools(sessionId, tools);
  }

  /** Whether a live gateway session lists this tool name (R-HOOK-13): how a hook call to the gateway is recognised. */
  gatewayListsTool(tool: string): boolean {
    return this.sessions.gatewayListsTool(tool);
  }

  listSessions(): SessionInfo[] {
    return this.sessions.list();
  }

  async addRule(rule: Rule): Promise<Rule> {
    if (rule.tool !== undefined && this.presenceFor(rule.tool) !== undefined) {
      throw new AssentError(
        'invalid_params',
        `policy.presence marks ${rule.tool}: its approvals need a passkey, so no auto-approval rule may approve it; nothing was added. Approve its calls on the paired page with your passkey.`,
        { details: { tool: rule.tool, presence: this.presenceFor(rule.tool) } },
      );
    }
    const marked = presenceMarkedToolsOfRule(this.presence, rule);
    if (marked.length > 0) throw presenceRuleRefusal(rule, marked, this.presence);
    await this.ctx.store.insertRule(rule);
    await this.recompile();
    return rule;
  }

  listRules(includeInactive = false): Promise<Rule[]> {
    return this.ctx.store.listRules({ includeInactive, now: this.ctx.clock.now() });
  }

  async revokeRule(id: string): Promise<Rule> {
    const { store, clock } = this.ctx;
    const rule = await store.getRule(id);
    if (rule === undefined) throw new AssentError('not_found', `no rule ${id}; list rules with: assent rules list`);
    if (!(await store.revokeRule(id, clock.now()))) throw new AssentError('conflict', `rule ${id} is already revoked`);
    await this.recompile();
    return (await store.getRule(id)) ?? rule;
  }

  /** Graceful shutdown: deny what live calls wait on (reason `shutdown`), then flush the audit log. */
  async shutdown(): Promise<{ denied: number }> {
    this.stopped = true;
    this.unwatch?.();
    const denied = await this.queue.stop();
    // Let every woken call finish and send its denial before the server closes its connections.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.ctx.audit.flush();
    return { denied };
  }

  status(): Record<string, unknown> {
    const { notifier, audit } = this.ctx;
    return {
      pendingApprovals: this.queue.size,
      waitingCalls: this.queue.waitedOnCount(),
      callsInProgress: this.calls.inProgress,
      sessions: this.sessions.list().length,
      gatewaySessions: this.sessions.gatewaySessions,
      configRevision: this.pinned.revision,
      configPath: this.pinned.path,
      notifications: { sent: notifier.sent, failures: notifier.failures, ...(notifier.targets === undefined ? {} : { targets: notifier.targets() }) },
      audit: { failures: audit.failures },
      // Live subscribers (a gateway's policy watch, `assent watch`, the web page): back to the same count when their connections close.
      events: { failures: this.ctx.bus.failures, subscribers: this.ctx.bus.subscriberCount },
      policyToolsNotListed: this.sessions.unlistedPolicyTools(),
    };
  }
}

/**
 * The refusal of a `--command`, `--path` or `--url` rule that could approve an
 * agent tool that needs a passkey (R-REM-6): it names the tools and the
 * requirement, and the agents such a rule may still be limited to.
 */
function presenceRuleRefusal(rule: Rule, marked: readonly string[], presence: CompiledPresence): AssentError {
  const scope = rule.agent === undefined ? 'every agent' : rule.agent;
  const free = rule.agent === undefined ? AGENT_NAMES.filter((agent) => presenceMarkedToolsOfRule(presence, { ...rule, agent }).length === 0) : [];
  const instead =
    free.length > 0
      ? `Limit the rule to an agent whose tools need no passkey (${free.map((agent) => `--agent ${agent}`).join(' or ')}), or approve those calls on the paired page with your passkey.`
      : 'Approve those calls on the paired page with your passkey.';
  return new AssentError(
    'invalid_params',
    `policy.presence marks ${marked.join(', ')}: ${marked.length === 1 ? 'its approvals need' : 'their approvals need'} a passkey, and the rule ${describeRuleForm({ ...rule, agent: undefined })} for ${scope} ` +
      `could approve parts of ${marked.length === 1 ? 'its' : 'their'} actions without one, so no such rule may be added; nothing was added. ${instead}`,
    { details: { tools: [...marked], presence: 'passkey' } },
  );
}
