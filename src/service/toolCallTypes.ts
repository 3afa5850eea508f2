// What a gated tool call is to the service (R-D-5): what the gateway sends, what
// an admitted call gets back, and what the service keeps of it until it ends.
import type { RiskLevel } from '../core/approval/approvalRisk.js';
import type { ToolPolicyResult } from '../core/policy/toolPolicy.js';
import type { ApprovalView } from './approvalViews.js';
import type { DecidedBy, DeferredReply, WatchRequest } from './pendingApproval.js';

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
  /**
   * What "approve for session" remembers (R-POL-7), as a digest: a shell action's
   * exact command text, a path action's paths. Absent: the exact input.
   */
  sessionGrant?: string;
  /** R-SH-14: the call runs confined, in the sandbox whose profile has this digest (its audit lines say so). */
  confined?: string;
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

export interface AuthorizeOptions {
  /**
   * Follows the request: a cancel withdraws the call (its approval is resolved as
   * cancelled); a dropped connection gives the call the re-attach grace (R-D-7).
   */
  watch?: WatchRequest;
  /** Told the approval as soon as it is filed, so the caller can offer its own channel (elicitation, R-MCP-6). */
  onApprovalFiled?: (approval: ApprovalView) => void;
  /**
   * Set by a head that can take the result later (the daemon socket): a call
   * that waits for a person sends its result here, and the promise authorize
   * returned resolves at once to REPLY_DEFERRED instead of being held.
   */
  reply?: DeferredReply;
}

export type CallOutcome = 'ok' | 'error' | 'cancelled' | 'no_outcome';

/** An admitted call until its end is reported. */
export interface CallRecord {
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
  /** Who decided its approval (R-AUD-1, R-TEAM-3), copied onto its audit lines. */
  decision?: DecidedBy;
  /** The risk level every view of its approval shows (R-POL-10), copied onto its audit lines for export (R-AUD-4). */
  risk?: RiskLevel;
  /** R-SH-14: allowed to run confined; the sandbox profile's digest, copied onto its audit lines. */
  confined?: string;
  /** Allowed by policy alone: the policy key that decided (`policy.tools.fs/read_file`), its audit lines' ruleId (R-AUD-1). */
  ruleId?: string;
}

/** What identifies a call in its audit line and call record. */
export type CallBase = Omit<CallRecord, 'consent' | 'waitedForConsentMs' | 'authorizedAtMono' | 'decision'>;
