// Agent actions (SPEC §17): what the daemon does with a hook's question. The
// decision goes through the one approval service (R-ARCH-3) with the
// agent-action policy (R-POL-6); this file adds what is particular to hooks:
// the doctor's canary, the gateway's own MCP tools (known by the tool lists of
// the live gateway sessions, never by name alone), the hook timeout, the words
// a model reads in a denial, and matching an after-event to the call it ends.
import {
  AGENT_ALIAS,
  agentActionKind,
  agentToolId,
  CANARY_REASON,
  CANARY_TOOL,
  gatewayToolCandidate,
  type AgentAction,
  type AgentName,
} from '../core/agent/agentAction.js';
import { describeDecidingPart, evaluateAgentPolicy, explainAgentPolicy, type AgentPolicyExplanation, type AgentPolicyResult } from '../core/policy/agentPolicy.js';
import { isBuiltInRuleKey } from '../core/policy/agentPolicyConfig.js';
import { sessionGrantSubject } from '../core/agent/agentTargets.js';
import { agentActionRisk } from '../core/approval/approvalRisk.js';
import { nativeDigestOf } from '../journal/nativeHash.js';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import { AgentJudge } from '../shell/agentJudge.js';
import type { PolicySnapshot } from '../core/policy/toolPolicy.js';
import type { ApprovalService, CallOutcome, PinnedConfig } from './approvalService.js';
import type { Logger } from './logger.js';
import { realTimers, type Timers } from '../core/base/timers.js';

/** Allowed calls remembered for their after-event; beyond this the oldest is dropped (its audit line stays `started`). */
export const MAX_OPEN_AGENT_CALLS = 10_000;

/** Why an agent action was refused: the reasons of R-MCP-3, plus the canary. */
export type AgentDenialReason = 'policy' | 'consent_denied' | 'consent_timeout' | 'cancelled' | 'withdrawn' | 'shutdown' | 'session_ended' | 'unavailable' | 'canary';

export type AgentDecision =
  | {
      decision: 'allow';
      /** `policy`, `rule`, `session`, a human channel's consent, or `gateway` for the gateway's own MCP tools. */
      reason: string;
      message: string;
      callId?: string;
      approvalId?: string;
      channel?: string;
      waitedForConsentMs?: number;
    }
  | { decision: 'deny'; reason: AgentDenialReason; message: string; approvalId?: string };

/** An after-event (PostToolUse, AfterTool): the end of a call the hook let run (R-HOOK-6). */
export interface AgentActionEnd {
  agent: AgentName;
  sessionId: string;
  tool: string;
  input: Record<string, unknown>;
  toolUseId?: string;
  mcpServer?: string;
  outcome: Extract<CallOutcome, 'ok' | 'error'>;
  /** How long the tool ran, when the agent says (Claude Code's `duration_ms`); else measured from the decision. */
  durationMs?: number;
}

interface OpenCall {
  callId: string;
  /** When it was allowed (clock ms): its after-event is awaited until hooks.timeoutSeconds later (R-HOOK-12). */
  openedAt: number;
  agent: AgentName;
  sessionId: string;
  tool: string;
  argsSha256: string;
  toolUseId?: string;
}

export interface AgentActionServiceOptions {
  approvals: ApprovalService;
  clock: Clock;
  logger: Logger;
  /** The kind's rules (commands, paths, URLs) on this host (R-POL-6). */
  judge: AgentJudge;
  maxOpenCalls?: number;
  /** For the no_outcome sweep (R-HOOK-12); default: real, unref'd timers. */
  timers?: Timers;
}

type AuthorizeOptions = NonNullable<Parameters<ApprovalService['authorize']>[1]>;

/** What the hook's request adds: the epoch ms by which it must answer its agent (R-HOOK-11). */
export type AgentAuthorizeOptions = AuthorizeOptions & { answerBy?: number };

/** Kept between an approval's expiry and the hook's deadline, so the expiry's answer reaches the hook in time. */
export const ANSWER_BY_SLACK_MS = 250;

interface DenialContext {
  toolId: string;
  approvalId?: string;
  key?: string;
  configPath?: string;
  /** Approvals live in the team database (R-TEAM-7): an outage is its, not the daemon's. */
  teamDatabase?: boolean;
  /** The key names a rule of the built-in defaults, not one config.json holds (R-POL-8). */
  builtInKey?: boolean;
  timeoutSeconds?: number;
  operatorReason?: string;
  /** Which part of the action and which rule decided (R-POL-9), for a policy denial. */
  decidedBy?: string;
  /** The approval's window was cut to the hook's deadline (the agent's own hook timeout leaves no more, R-HOOK-11). */
  hookDeadline?: boolean;
}

/**
 * What the model reads when its call is refused (R-HOOK-1): what happened, and
 * what it may do instead, in the words the gateway uses (R-MCP-3).
 */
export function describeAgentDenial(reason: AgentDenialReason, context: DenialContext): string {
  const id = context.toolId;
  const approval = context.approvalId === undefined ? '' : ` (approval ${context.approvalId})`;
  switch (reason) {
    case 'policy':
      return (
        `assent refused ${id}: policy. The policy key ${context.key ?? 'policy.agents.default'}` +
        `${context.builtInKey === true ? ', a built-in default (`assent init` writes it out),' : ` in ${context.configPath ?? 'config.json'}`} says "deny", ` +
        `so the call did not run.${context.decidedBy === undefined ? '' : ` Decided by ${context.decidedBy}.`} Do not retry it; do the task another way, or ask the operator to ${context.builtInKey === true ? 'write that section into config.json with `assent init --merge` and change it there' : 'change that key'} (then \`assent config reload\`) if this call should be allowed.`
      );
    case 'consent_denied':
      return (
        `assent refused ${id}: consent_denied${approval}. The operator declined this exact call, so it did not run.` +
        `${context.operatorReason === undefined ? '' : ` Reason given: ${context.operatorReason}.`} Do not retry the identical call; ask the operator what to do instead.`
      );
    case 'consent_timeout':
      return (
        `assent refused ${id}: consent_timeout${approval}. Nobody approved the call within ` +
        (context.hookDeadline === true
          ? `${context.timeoutSeconds ?? '?'} s, all the agent's own hook timeout leaves (it is shorter than hooks.timeoutSeconds needs; \`assent doctor\` says so and \`assent install\` fixes it)`
          : `hooks.timeoutSeconds${context.timeoutSeconds === undefined ? '' : ` (${context.timeoutSeconds} s)`}`) +
        `, so it did not run. The operator can see waiting calls with ` +
        `\`assent pending\` and approve one with \`assent approve ID\`; retry the call when they are ready.`
      );
    case 'withdrawn':
      return `assent did not run ${id}: withdrawn${approval}. The call was withdrawn by the agent while it waited for a decision, so nobody decided it and it did not run.`;
    case 'cancelled':
      return `assent did not run ${id}: cancelled${approval}. The call was withdrawn while it waited for a decision, so it did not run.`;
    case 'shutdown':
      return (
        `assent did not run ${id}: shutdown${approval}. The assent daemon shut down while the call waited for a decision, so nobody declined it and it did not run. ` +
        `Retrying the identical call is fine once the daemon runs again (it starts on demand).`
      );
    case 'session_ended':
      return (
        `assent did not run ${id}: session_ended${approval}. The hook stopped waiting for a decision, so nobody declined the call and it did not run. ` +
        `Retrying the identical call is fine.`
      );
    case 'unavailable':
      if (context.teamDatabase === true) {
        return `assent did not run ${id}: unavailable${approval}. The team database that holds assent's approvals cannot be reached, so nothing could be decided and the call did not run. Retrying the identical call once the database is back is fine (\`assent daemon status\` shows when it is).`;
      }
      return `assent did not run ${id}: unavailable${approval}. The assent daemon could not decide the call, so it did not run. Retrying the identical call in a few seconds is fine.`;
    case 'canary':
      return CANARY_REASON;
  }
}

/** What deciding an agent action needs: the compiled tool policy and rules, the configuration it came from, the judge. */
export interface AgentEvaluationContext {
  snapshot: PolicySnapshot;
  config: Pick<PinnedConfig, 'config' | 'revision'>;
  judge: AgentJudge;
  nowMs: number;
}

/**
 * The policy decision of one agent action (R-POL-6), for the daemon and for
 * `assent policy explain` without one. Files and runs nothing. A shell action
 * needs the bash grammar loaded (`judge.ready()`).
 */
export function evaluateAgentAction(context: AgentEvaluationContext, action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'cwd' | 'mcpServer'>): AgentPolicyResult {
  const { config } = context;
  const verdict = context.snapshot.tools.has(agentToolId(action.agent, action.tool))
    ? undefined
    : context.judge.judge({ revision: config.revision, policy: config.config.policy }, action, { rules: context.snapshot.agentRules, nowMs: context.nowMs });
  return evaluateAgentPolicy(context.snapshot, config.config.policy.agents, action, context.nowMs, verdict);
}

const DENIAL_REASONS: readonly string[] = ['policy', 'consent_denied', 'consent_timeout', 'cancelled', 'withdrawn', 'shutdown', 'session_ended', 'unavailable'];

export class AgentActionService {
  private readonly approvals: ApprovalService;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxOpenCalls: number;
  private readonly judge: AgentJudge;
  private readonly timers: Timers;
  /** The one timer that ends the oldest open call without an after-event; undefined when none is armed. */
  private sweepTimer: unknown;
  /** Allowed calls waiting for their after-event, oldest first. */
  private readonly open = new Map<string, OpenCall>();
  /** `agent \0 session \0 toolUseId` → callId, for agents that send a tool-use id. */
  private readonly byToolUse = new Map<string, string>();

  constructor(options: AgentActionServiceOptions) {
    this.approvals = options.approvals;
    this.clock = options.clock;
    this.logger = options.logger;
    this.maxOpenCalls = options.maxOpenCalls ?? MAX_OPEN_AGENT_CALLS;
    this.judge = options.judge;
    this.timers = options.timers ?? realTimers;
  }

  /** `policy.explain` (R-POL-9): the decision and its parts under the pinned policy; runs and files nothing. */
  async explain(action: Pick<AgentAction, 'agent' | 'tool' | 'input' | 'cwd' | 'mcpServer'>): Promise<AgentPolicyExplanation> {
    const kind = agentActionKind(action.agent, action.tool, action.mcpServer);
    const loading = this.ready({ kind });
    if (loading !== undefined) await loading;
    return explainAgentPolicy(this.evaluate({ ...action, kind }), agentToolId(action.agent, action.tool));
  }

  /** Resolves once `evaluate` can judge this action (the bash grammar, once per process). */
  ready(action: Pick<AgentAction, 'kind'>): Promise<void> | undefined {
    return action.kind === 'shell' && !this.judge.loaded ? this.judge.ready() : undefined;
  }

  /**
   * The policy decision of one agent action, without filing or running
   * anything (R-POL-6): `policy.tools`, then the kind's rules, then
   * `policy.agents.default`; auto-approval rules may turn prompt into allow.
   * A shell action needs the bash grammar: `await ready(action)` first.
   */
  evaluate(action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'cwd' | 'mcpServer'>): AgentPolicyResult {
    return evaluateAgentAction({ snapshot: this.approvals.policySnapshot, config: this.approvals.config, judge: this.judge, nowMs: this.clock.now() }, action);
  }


  /**
   * Decides one agent action (R-HOOK-3). Policy and human denials are answers
   * (`decision: 'deny'`), not errors; anything else that goes wrong throws, and
   * the hook then fails closed (R-HOOK-4).
   */
  async authorize(action: AgentAction, agentOptions: AgentAuthorizeOptions = {}): Promise<AgentDecision> {
    const { answerBy, ...options } = agentOptions;
    const toolId = agentToolId(action.agent, action.tool);
    const kind = agentActionKind(action.agent, action.tool, action.mcpServer);
    if (kind !== action.kind) {
      throw new AssentError('invalid_params', `${toolId} is a ${kind} action, not ${action.kind}; the hook and the daemon disagree (versions differ?)`, {
        details: { kind, claimed: action.kind },
      });
    }
    // The call's paths are resolved against cwd: one that is not absolute could make them name other files.
    if (!action.cwd.startsWith('/') || action.cwd.includes('\u0000')) {
      throw new AssentError('invalid_params', `${toolId}: cwd ${JSON.stringify(action.cwd.slice(0, 80))} is not an absolute path; the hook event is malformed, so nothing was decided`, {
        details: { field: 'cwd' },
      });
    }
    // The doctor's canary proves the installed hook reaches this daemon and blocks: nothing filed, run or audited.
    if (action.tool === CANARY_TOOL) return { decision: 'deny', reason: 'canary', message: CANARY_REASON };
    // R-HOOK-5: the gateway's own tools were (or will be) decided by the gateway; a second approval would ask twice.
    // R-HOOK-13: a name under the gateway's entry is the gateway's only if a live gateway session lists that tool;
    // any other name (a server named `assent__fs`, a tool no gateway offers) is judged as any MCP tool.
    if (kind === 'mcp' && this.isGatewayTool(action)) {
      return { decision: 'allow', reason: 'gateway', message: `assent: ${toolId} is gated by the assent MCP gateway` };
    }
    // Only the very first shell action of a daemon waits here (the bash grammar loads); after that filing stays
    // synchronous. Waited for before the deadline below is taken, so the wait never pushes it past the hook's own.
    const loading = this.ready(action);
    if (loading !== undefined) await loading;
    const pinned = this.approvals.config;
    const configuredMs = pinned.config.hooks.timeoutSeconds * 1000;
    // The hook's own deadline may come first (an agent timeout shorter than hooks.timeoutSeconds needs): the approval expires by then.
    const consentTimeoutMs = answerBy === undefined ? configuredMs : Math.max(1, Math.min(configuredMs, answerBy - this.clock.now() - ANSWER_BY_SLACK_MS));
    const timeoutSeconds = Number((consentTimeoutMs / 1000).toFixed(1));
    const evaluation = this.evaluate({ ...action, kind });
    const caller: Record<string, unknown> = { head: 'hook', agent: action.agent, cwd: action.cwd, kind };
    if (action.toolUseId !== undefined) caller['toolUseId'] = action.toolUseId;
    const { cwd: _cwd, ...auditCaller } = caller;
    // What the preview shows: each part the kind's rules judged, with the rule that decided it (R-POL-9).
    // Not audited: its parts quote the command and its paths (R-AUD-1).
    if (evaluation.parts !== undefined) caller['policy'] = { decision: evaluation.decision, key: evaluation.key, parts: evaluation.parts };
    const grant = sessionGrantSubject({ ...action, kind });
    if (grant !== undefined) caller['sessionGrant'] = grant.label;
    // The risk every view shows, level first (R-POL-10, R-REM-5); like the parts, not audited.
    caller['risk'] = agentActionRisk(kind, evaluation.risks);
    try {
      const result = await this.approvals.authorize(
        {
          sessionId: action.sessionId,
          server: AGENT_ALIAS[action.agent],
          tool: action.tool,
          args: action.input,
          caller,
          agentAction: {
            agent: action.agent,
            evaluation,
            consentTimeoutMs,
            auditCaller,
            ...(grant === undefined ? {} : { sessionGrant: nativeDigestOf(grant.subject) }),
          },
        },
        options,
      );
      this.remember(action, result.callId);
      const channel = result.consent?.channel;
      const decision: AgentDecision = {
        decision: 'allow',
        reason: channel ?? 'policy',
        message:
          channel === undefined
            ? `assent: ${toolId} allowed by ${evaluation.ruleId === undefined ? (evaluation.key ?? 'policy') : `rule ${evaluation.ruleId}`}`
            : `assent: ${toolId} allowed (${channel}${result.consent?.ruleId === undefined ? '' : ` ${result.consent.ruleId}`}${result.consent?.approvalId === undefined ? '' : `, approval ${result.consent.approvalId}`})`,
        callId: result.callId,
        waitedForConsentMs: result.waitedForConsentMs,
        channel: channel ?? 'policy',
      };
      if (result.consent?.approvalId !== undefined) decision.approvalId = result.consent.approvalId;
      return decision;
    } catch (error) {
      if (!(error instanceof AssentError) || error.type !== 'policy_denied') throw error;
      const details = error.details ?? {};
      const raw = typeof details['reason'] === 'string' ? details['reason'] : 'consent_denied';
      const detail = typeof details['detail'] === 'string' ? details['detail'] : raw;
      // Lifecycle endings keep their own reason (shutdown, session_ended); an operator's deny stays consent_denied.
      const reason = (DENIAL_REASONS.includes(detail) ? detail : DENIAL_REASONS.includes(raw) ? raw : 'consent_denied') as AgentDenialReason;
      const context: DenialContext = { toolId, timeoutSeconds, configPath: pinned.path, ...(this.approvals.sharedStore ? { teamDatabase: true } : {}) };
      if (consentTimeoutMs < configuredMs) context.hookDeadline = true;
      const decidedBy = describeDecidingPart(evaluation);
      if (reason === 'policy' && decidedBy !== undefined) context.decidedBy = decidedBy;
      if (typeof details['approvalId'] === 'string') context.approvalId = details['approvalId'];
      if (typeof details['key'] === 'string') context.key = details['key'];
      if (context.key !== undefined && isBuiltInRuleKey(pinned.config.policy, context.key)) context.builtInKey = true;
      if (typeof details['operatorReason'] === 'string') context.operatorReason = details['operatorReason'];
      const denial: AgentDecision = { decision: 'deny', reason, message: describeAgentDenial(reason, context) };
      if (context.approvalId !== undefined) denial.approvalId = context.approvalId;
      return denial;
    }
  }

  /** Whether the action calls a tool a live gateway session lists under the gateway's entry (R-HOOK-13). */
  private isGatewayTool(action: AgentAction): boolean {
    const tool = gatewayToolCandidate(action.agent, action.tool, action.mcpServer);
    return tool !== undefined && this.approvals.gatewayListsTool(tool);
  }

  /**
   * Records the end of an allowed call (R-HOOK-6). Matched by the agent's
   * tool-use id where it sends one (Claude Code, Codex); otherwise (Gemini CLI)
   * by session, tool and the digest of the exact input, oldest open call first.
   * An event that matches no open call (a denied call, the gateway's tools, a
   * call from before a restart) records nothing.
   */
  finish(end: AgentActionEnd): { recorded: boolean; callId?: string } {
    const callId = this.match(end);
    if (callId === undefined) return { recorded: false };
    this.forget(callId);
    const finish: Parameters<ApprovalService['finish']>[0] = { callId, outcome: end.outcome };
    if (end.durationMs !== undefined) finish.durationMs = end.durationMs;
    // Forgotten by the approval service already (e.g. dropped as too old): nothing to record.
    if (!this.approvals.hasCall(callId)) return { recorded: false };
    this.approvals.finish(finish).catch((error: unknown) => this.logger.warn('could not record the end of an agent call', { callId, error }));
    return { recorded: true, callId };
  }

  status(): Record<string, unknown> {
    return { openAgentCalls: this.open.size };
  }

  /** How long an allowed call's after-event is awaited: hooks.timeoutSeconds of the pinned configuration. */
  private outcomeWindowMs(): number {
    return this.approvals.config.config.hooks.timeoutSeconds * 1000;
  }

  /**
   * Arms one timer for the oldest open call. When it fires, every call whose
   * after-event is overdue gets one `no_outcome` line and is forgotten (R-HOOK-12):
   * the agent may have run it or not; a late after-event then records nothing.
   */
  private scheduleSweep(): void {
    if (this.sweepTimer !== undefined) return;
    const oldest = this.open.values().next().value as OpenCall | undefined;
    if (oldest === undefined) return;
    const wait = Math.max(0, oldest.openedAt + this.outcomeWindowMs() - this.clock.now());
    this.sweepTimer = this.timers.setTimeout(() => {
      this.sweepTimer = undefined;
      const due = this.clock.now() - this.outcomeWindowMs();
      for (const call of [...this.open.values()]) {
        if (call.openedAt > due) break;
        this.forget(call.callId);
        if (!this.approvals.hasCall(call.callId)) continue;
        this.approvals.finish({ callId: call.callId, outcome: 'no_outcome' }).catch((error: unknown) => this.logger.warn('could not record an agent call without outcome', { callId: call.callId, error }));
      }
      this.scheduleSweep();
    }, wait);
  }

  private remember(action: AgentAction, callId: string): void {
    const call: OpenCall = { callId, openedAt: this.clock.now(), agent: action.agent, sessionId: action.sessionId, tool: action.tool, argsSha256: nativeDigestOf(action.input) };
    if (action.toolUseId !== undefined) {
      call.toolUseId = action.toolUseId;
      this.byToolUse.set(toolUseKey(action.agent, action.sessionId, action.toolUseId), callId);
    }
    this.open.set(callId, call);
    while (this.open.size > this.maxOpenCalls) {
      const oldest = this.open.keys().next().value as string;
      this.forget(oldest);
      this.approvals.forgetCall(oldest);
      this.logger.debug('dropped an agent call whose after-event never came', { callId: oldest });
    }
    this.scheduleSweep();
  }

  private match(end: AgentActionEnd): string | undefined {
    if (end.toolUseId !== undefined) {
      const byId = this.byToolUse.get(toolUseKey(end.agent, end.sessionId, end.toolUseId));
      if (byId !== undefined && this.open.get(byId)?.tool === end.tool) return byId;
    }
    const digest = nativeDigestOf(end.input);
    for (const call of this.open.values()) {
      if (call.agent === end.agent && call.sessionId === end.sessionId && call.tool === end.tool && call.argsSha256 === digest) {
        if (end.toolUseId === undefined || call.toolUseId === undefined || call.toolUseId === end.toolUseId) return call.callId;
      }
    }
    return undefined;
  }

  private forget(callId: string): void {
    const call = this.open.get(callId);
    if (call === undefined) return;
    this.open.delete(callId);
    if (call.toolUseId !== undefined) this.byToolUse.delete(toolUseKey(call.agent, call.sessionId, call.toolUseId));
  }
}

function toolUseKey(agent: string, sessionId: string, toolUseId: string): string {
  return `${agent}\u0000${sessionId}\u0000${toolUseId}`;
}
