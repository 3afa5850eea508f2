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
import { describeDecidingPart, evaluateAgentPolicy, explainAgentPolicy, type AgentPolicyExplanation, type AgentPolicyResult, type Confinement } from '../core/policy/agentPolicy.js';
import { isBuiltInRuleKey } from '../core/policy/agentPolicyConfig.js';
import { compilePresence, presenceFor } from '../core/policy/presencePolicy.js';
import { actionCommand, sessionGrantSubject } from '../core/agent/agentTargets.js';
import { agentActionRisk, readApprovalRisk } from '../core/approval/approvalRisk.js';
import { nativeDigestOf } from '../journal/nativeHash.js';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import { AgentJudge } from '../shell/agentJudge.js';
import type { PolicySnapshot } from '../core/policy/toolPolicy.js';
import type { ApprovalService, CallOutcome, PinnedConfig } from './approvalService.js';
import type { Logger } from './logger.js';
import { realTimers, type Timers } from '../core/base/timers.js';
import { quorumFor } from '../core/config/teamConfig.js';
import { NativePrompts, type NativeOutcome, type NativePrompt } from './agentNativePrompts.js';
import type { RequestEndListener, WatchRequest } from './pendingApproval.js';
import type { ApprovalView } from './approvalViews.js';
import type { AuthorizeParams, AuthorizeResult, CallBase } from './toolCallTypes.js';

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
      /** R-SH-14: the agent runs `command` — the original wrapped in `assent confine` — instead of what it asked. */
      confined?: { command: string; digest: string };
    }
  | { decision: 'deny'; reason: AgentDenialReason; message: string; approvalId?: string }
  /**
   * R-HOOK-9: the agent shows its own dialog (Claude Code, `hooks.claudeNativePrompt`);
   * the approval is filed in assent too, and the first answer decides.
   */
  | { decision: 'ask'; reason: 'prompt'; message: string; approvalId: string };

/** What a PermissionRequest hook answers the agent's dialog with. */
export type AgentDialogAnswer = Exclude<AgentDecision, { decision: 'ask' }>;

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
  /** R-SH-14: confining commands that run project code; without one, nothing is confined (they prompt). */
  confiner?: Confiner;
}

/** R-SH-14: how this host confines an agent's command. */
export interface Confiner {
  /** Whether `agent`'s commands may run confined here: the sandbox works and the agent's hook can rewrite. */
  confinement(agent: AgentName): Confinement;
  /** The sandbox profile for a run in `cwd` and the command the agent runs instead, or why it cannot be confined. */
  prepare(cwd: string, command: string): { digest: string; command: string } | { why: string };
}

type AuthorizeOptions = NonNullable<Parameters<ApprovalService['authorize']>[1]>;

/** What the hook's request adds: the epoch ms by which it must answer its agent (R-HOOK-11). */
export type AgentAuthorizeOptions = AuthorizeOptions & { answerBy?: number };

/**
 * How long a call shown in the agent's dialog waits for its PermissionRequest
 * hook (which Claude Code starts as the dialog opens, well under a second after
 * the before-tool answer). None by then: the agent showed no dialog assent can
 * answer (`-p` mode refuses an `ask`; or no such hook is installed), so the
 * approval is withdrawn; a "yes" in a dialog is still recorded from the after-event.
 */
export const NATIVE_CLAIM_MS = 30_000;

/**
 * Claude Code's permission modes in which a before-tool `ask` shows its dialog
 * (with 2.1.328 in a PTY: `auto`, its default there, and `acceptEdits`, which
 * still asks for a write; `default` is the mode's documented name). Not
 * `bypassPermissions`, `plan` nor any other: there the prompt waits in assent.
 */
export const DIALOG_PERMISSION_MODES: ReadonlySet<string> = new Set(['default', 'auto', 'acceptEdits']);

/**
 * Kept between an approval's expiry and the hook's deadline, so the expiry's
 * answer reaches the hook in time: the daemon's timer, the journal's durable
 * write of the resolution and the answer on the socket. On a loaded machine
 * (two cores, an agent CLI and a test suite beside it) those took over 250 ms,
 * and the hook's own deadline then spoke first with a less precise deny.
 */
export const ANSWER_BY_SLACK_MS = 1000;

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
  /** Why the state directory's device takes no writes, and the fix (issue 35: a full or failing disk). */
  storage?: string;
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
      if (context.storage !== undefined) return `assent did not run ${id}: unavailable${approval}. ${context.storage}. The call did not run; retrying the identical call once there is room is fine.`;
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
  confiner?: Confiner;
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
  const confinement = confinementFor(context, action.agent, action.tool);
  return evaluateAgentPolicy(context.snapshot, config.config.policy.agents, action, context.nowMs, verdict, confinement);
}

/**
 * Whether this action may run confined (R-SH-14): a sandbox and an agent that
 * can rewrite, and a tool `policy.presence` does not mark — its actions wait for
 * a person present (R-REM-6), which no policy allow may skip, a confined one neither.
 */
function confinementFor(context: AgentEvaluationContext, agent: AgentName, tool: string): Confinement {
  const confinement = context.confiner?.confinement(agent) ?? { available: false, why: 'this assent runs no sandbox' };
  if (!confinement.available) return confinement;
  const marked = presenceFor(compilePresence(context.config.config.policy.presence), agentToolId(agent, tool));
  return marked === undefined ? confinement : { available: false, why: `policy.presence marks ${marked.key} ${marked.presence}: its actions wait for a person` };
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
  /** Calls shown in the agent's own dialog while their approval is filed here too (R-HOOK-9). */
  private readonly native = new NativePrompts();
  private readonly confiner?: Confiner;

  constructor(options: AgentActionServiceOptions) {
    this.approvals = options.approvals;
    this.clock = options.clock;
    this.logger = options.logger;
    this.maxOpenCalls = options.maxOpenCalls ?? MAX_OPEN_AGENT_CALLS;
    this.judge = options.judge;
    this.timers = options.timers ?? realTimers;
    if (options.confiner !== undefined) this.confiner = options.confiner;
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
    const context: AgentEvaluationContext = { snapshot: this.approvals.policySnapshot, config: this.approvals.config, judge: this.judge, nowMs: this.clock.now() };
    if (this.confiner !== undefined) context.confiner = this.confiner;
    return evaluateAgentAction(context, action);
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
    let evaluation = this.evaluate({ ...action, kind });
    // R-SH-14: the sandbox for this cwd, built now; its digest is audited and the rewritten command names it.
    let confined: { command: string; digest: string } | undefined;
    if (evaluation.confined === true) {
      const command = actionCommand(action.input, action.agent);
      const prepared = command === undefined || this.confiner === undefined ? { why: 'the input has no command to confine' } : this.confiner.prepare(action.cwd, command);
      if ('why' in prepared) {
        const { confined: _dropped, ...rest } = evaluation;
        evaluation = { ...rest, decision: 'prompt', notConfined: prepared.why };
      } else confined = prepared;
    }
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
    const params: AuthorizeParams = {
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
        ...(confined === undefined ? {} : { confined: confined.digest }),
      },
    };
    const allowed = (result: AuthorizeResult): AgentDecision => {
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
      if (confined !== undefined && channel === undefined) {
        decision.confined = confined;
        decision.message = `assent: ${toolId} allowed to run confined by ${evaluation.key ?? 'policy.commands.confine'} (sandbox ${confined.digest.slice(0, 12)})`;
      }
      return decision;
    };
    const denied = (error: unknown): AgentDecision => {
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
      if ((detail === 'disk_full' || detail === 'disk_error') && typeof details['hint'] === 'string') context.storage = details['hint'];
      const denial: AgentDecision = { decision: 'deny', reason, message: describeAgentDenial(reason, context) };
      if (context.approvalId !== undefined) denial.approvalId = context.approvalId;
      return denial;
    };
    if (evaluation.decision === 'prompt' && this.showsNativePrompt(action, toolId)) {
      return this.authorizeNative(action, params, allowed, denied);
    }
    try {
      return allowed(await this.approvals.authorize(params, options));
    } catch (error) {
      return denied(error);
    }
  }

  /**
   * R-HOOK-9: whether a `prompt` is shown in the agent's own dialog too: Claude
   * Code with `hooks.claudeNativePrompt`, and only where one person's answer is
   * enough: not for an action that needs a passkey (R-REM-6), a quorum or four eyes.
   */
  private showsNativePrompt(action: AgentAction, toolId: string): boolean {
    const { config } = this.approvals.config;
    if (action.agent !== 'claude-code' || !config.hooks.claudeNativePrompt) return false;
    // Only where an `ask` is known to show the dialog; any other mode (bypassPermissions, one not seen yet) waits in assent.
    if (!DIALOG_PERMISSION_MODES.has(action.permissionMode ?? '')) return false;
    if (config.approvals.fourEyes || quorumFor(config.policy.quorum, AGENT_ALIAS[action.agent], action.tool) > 1) return false;
    return this.approvals.presenceFor(toolId) === undefined;
  }

  /**
   * Files the approval as any prompt, then answers `ask` at once (the agent
   * shows its dialog) instead of waiting: the approval waits detached from this
   * request, for the PermissionRequest hook (`dialog`), the after-event or any
   * of assent's channels. Anything that settles before the approval is filed
   * (a session grant, a refusal) is the answer, as without the dialog.
   */
  private async authorizeNative(
    action: AgentAction,
    params: AuthorizeParams,
    allowed: (result: AuthorizeResult) => AgentDecision,
    denied: (error: unknown) => AgentDecision,
  ): Promise<AgentDecision> {
    let listener: RequestEndListener | undefined;
    let onFiled: (approval: ApprovalView) => void = () => undefined;
    const filed = new Promise<{ filed: ApprovalView }>((resolve) => {
      onFiled = (approval) => resolve({ filed: approval });
    });
    const watch: WatchRequest = (end) => {
      listener = end;
    };
    const decided = this.approvals.authorize(params, { watch, onApprovalFiled: onFiled }).then(allowed, denied);
    const first = await Promise.race([filed, decided.then((decision) => ({ decision }))]);
    if ('decision' in first) return first.decision;
    const approvalId = first.filed.id;
    const toolId = agentToolId(action.agent, action.tool);
    const outcome = decided.then(
      (decision): NativeOutcome => (decision.decision === 'allow' && decision.callId !== undefined ? { decision: 'allow', callId: decision.callId } : { decision: 'deny' }),
      (): NativeOutcome => ({ decision: 'deny' }),
    );
    const now = this.clock.now();
    // Past its expiry and the after-event's window, nothing can answer a prompt any more.
    this.native.dropOlderThan(now - 2 * this.outcomeWindowMs());
    const base: CallBase = {
      sessionId: action.sessionId,
      server: params.server,
      tool: action.tool,
      argsSha256: nativeDigestOf(action.input),
      caller: params.agentAction?.auditCaller ?? {},
      agent: action.agent,
    };
    const risk = readApprovalRisk(params.caller?.['risk'])?.level;
    if (risk !== undefined) base.risk = risk;
    const prompt: NativePrompt = {
      approvalId,
      agent: action.agent,
      sessionId: action.sessionId,
      tool: action.tool,
      argsSha256: base.argsSha256,
      base,
      filedAt: now,
      outcome,
      claimed: false,
      withdraw: () => listener?.requestEnded('cancelled'),
    };
    if (action.toolUseId !== undefined) prompt.toolUseId = action.toolUseId;
    this.native.add(prompt);
    const claimTimer = this.timers.setTimeout(() => {
      if (!prompt.claimed && prompt.settled === undefined) prompt.withdraw();
    }, NATIVE_CLAIM_MS);
    void outcome.then(() => this.timers.clearTimeout(claimTimer));
    return {
      decision: 'ask',
      reason: 'prompt',
      approvalId,
      message: `assent: ${toolId} waits for approval ${approvalId}: answer here, or with \`assent approve ${approvalId}\`, \`assent watch\` or the web page; the first answer decides.`,
    };
  }

  /**
   * R-HOOK-9: the PermissionRequest hook of an agent's dialog. Waits for the
   * decision of the approval its call filed, whoever gives it, so an answer from
   * assent's channels closes the dialog. The hook's request ending first means
   * the dialog was answered "no" (or dismissed, or the agent quit): that is the
   * person's answer, recorded as a deny with channel `agent`.
   */
  async dialog(action: Pick<AgentAction, 'agent' | 'sessionId' | 'tool' | 'input'>, watch?: WatchRequest): Promise<AgentDialogAnswer> {
    const toolId = agentToolId(action.agent, action.tool);
    const prompt = this.native.claim(action.agent, action.sessionId, action.tool, nativeDigestOf(action.input));
    if (prompt === undefined) {
      return {
        decision: 'deny',
        reason: 'unavailable',
        message: `assent refused ${toolId} in this dialog: no approval filed by assent waits for this exact call (the daemon restarted, or hooks.claudeNativePrompt was off when the call was checked), so it did not run. Retrying the call is fine.`,
      };
    }
    watch?.({
      requestEnded: () => {
        if (prompt.settled === undefined) void this.decideInDialog(prompt, 'deny');
      },
    });
    const outcome = await prompt.outcome;
    if (outcome.decision === 'allow') return { decision: 'allow', reason: 'approved', message: `assent: ${toolId} allowed (approval ${prompt.approvalId})`, approvalId: prompt.approvalId };
    const view = await this.approvals.get(prompt.approvalId).catch(() => undefined);
    const state = view?.state ?? 'denied';
    return {
      decision: 'deny',
      reason: state === 'expired' ? 'consent_timeout' : 'consent_denied',
      approvalId: prompt.approvalId,
      message: `assent refused ${toolId}: approval ${prompt.approvalId} ended ${state}, so the call did not run. Do not retry the identical call; ask the operator what to do instead.`,
    };
  }

  /** Records the answer given in the agent's own dialog as the approval's decision, channel `agent` (R-HOOK-9). A decision already made elsewhere stays. */
  private async decideInDialog(prompt: NativePrompt, behavior: 'allow' | 'deny'): Promise<void> {
    try {
      await this.approvals.decide({
        id: prompt.approvalId,
        behavior,
        channel: 'agent',
        ...(behavior === 'deny' ? { reason: "declined in the agent's own dialog" } : {}),
      });
    } catch (error) {
      // Decided, expired or withdrawn already: the first answer stands.
      this.logger.debug("an answer in the agent's dialog came after the approval was resolved", { approvalId: prompt.approvalId, error });
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

  /**
   * `agents.finish`: `finish`, and for a call that was shown in the agent's own
   * dialog (R-HOOK-9) the answer that let it run. An after-event for such a call
   * whose approval is still open, with its dialog shown (its PermissionRequest
   * hook came), means the person said "yes" there: that decides the approval,
   * channel `agent`, and then the end is recorded. One whose
   * approval ended otherwise (the dialog's "yes" reached assent only now, after a
   * deny or an expiry) still ran: it is audited as run, channel `agent`.
   */
  async finishReported(end: AgentActionEnd): Promise<{ recorded: boolean; callId?: string }> {
    if (this.match(end) !== undefined) return this.finish(end);
    const prompt = this.native.forEnd(end.agent, end.sessionId, end.tool, nativeDigestOf(end.input), end.toolUseId);
    if (prompt === undefined) return { recorded: false };
    this.native.delete(prompt);
    // A "yes" needs a dialog: PermissionRequest runs only when Claude Code shows one. A call that ran
    // with no dialog asked (its own rules or mode let it through) was approved by nobody: the approval
    // is withdrawn, and the run is audited as what happened, channel agent.
    if (prompt.settled === undefined) {
      if (prompt.claimed) await this.decideInDialog(prompt, 'allow');
      else prompt.withdraw();
    }
    const outcome = await prompt.outcome;
    if (outcome.decision === 'allow') return this.finish(end);
    const callId = await this.approvals.admitAgentRun(prompt.base, { channel: 'agent', approvalId: prompt.approvalId });
    this.logger.warn("a call ran on an answer in the agent's own dialog after its approval had ended in assent", { approvalId: prompt.approvalId, callId });
    const finish: Parameters<ApprovalService['finish']>[0] = { callId, outcome: end.outcome };
    if (end.durationMs !== undefined) finish.durationMs = end.durationMs;
    await this.approvals.finish(finish);
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
