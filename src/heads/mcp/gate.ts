// The seam between the MCP gateway and whoever decides a tool call: the
// daemon's `calls.authorize` (R-D-5), or the local policy snapshot when no
// daemon is reachable (R-MCP-5: `prompt` then fails closed).
import { toolId } from '../../core/exec/action.js';
import { evaluateToolPolicy, type PolicySnapshot } from '../../core/policy/toolPolicy.js';

/**
 * Reasons a call is refused; the agent sees the reason by name (R-MCP-3).
 * `shutdown`, `session_ended` and `unavailable` are lifecycle endings: nobody
 * decided the call, so the agent may retry it.
 */
export type DenialReason =
  | 'policy'
  | 'consent_denied'
  | 'consent_timeout'
  | 'no_consent_channel'
  | 'cancelled'
  | 'approval_pending'
  | 'shutdown'
  | 'session_ended'
  | 'unavailable';

/** Tool annotations as the upstream declared them (hints, not guarantees; R-POL-3). */
export interface ToolAnnotationHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  title?: string;
  [extra: string]: unknown;
}

/** One `tools/call` the gateway wants decided before the upstream sees it. */
export interface GateCall {
  sessionId: string;
  /** Upstream alias, the first half of the policy key `<alias>/<tool>` (R-POL-1). */
  server: string;
  /** The upstream's own tool name (never the `<alias>__` prefixed one). */
  tool: string;
  args: Record<string, unknown>;
  /** The length of the request's line, an upper bound of the arguments' size, when the link read one (the audit bounds what it holds by it). */
  argsSize?: number;
  annotations?: ToolAnnotationHints;
  /** Who asked, as the client introduced itself; informative only, never a principal. */
  caller: Record<string, unknown>;
  /** Aborted when the client cancels the call or disconnects. */
  signal: AbortSignal;
  /**
   * Asks the MCP client's user through `elicitation/create` (R-MCP-6); present only when the client
   * declared the elicitation capability. Resolves with the client's result (`{action, content?}`);
   * aborting the signal cancels the pending elicitation on the client.
   */
  elicit?: (params: Record<string, unknown>, signal: AbortSignal) => Promise<Record<string, unknown>>;
}

export type GateDecision =
  /**
   * `replay`: the identical call already ran under its approval (handoff, R-MCP-8);
   * answer the client with this recorded result and never send the call upstream.
   */
  | { allowed: true; callId?: string; replay?: Record<string, unknown> }
  | { allowed: false; reason: DenialReason; message: string; approvalId?: string };

/**
 * Decides tool calls. `authorize` settles allow/deny or waits for a human;
 * `finish` reports the outcome of an allowed call (for audit) and must not throw.
 */
export interface CallGate {
  authorize(call: GateCall): Promise<GateDecision>;
  finish?(callId: string, outcome: { ok: boolean; durationMs: number; result?: Record<string, unknown> }): void;
  /**
   * An allowed call that never ran: the client cancelled it (or the gateway
   * closed) before it was forwarded, after the gate had allowed it. The gate
   * lets go of it (and its arguments) and audits it `cancelled`. Must not throw.
   */
  withdraw?(callId: string): void;
  /**
   * Whether `finish` of this call needs the tool result (a handoff retry's result is recorded with its effect).
   * Without it, or false, the gateway may pass an upstream's result on unparsed and report only ok/error.
   */
  recordsResult?(callId: string): boolean;
  /** Releases what the gate holds (e.g. a daemon connection); called by whoever created it, after the gateway closed. */
  close?(): Promise<void> | void;
  /**
   * The complete tool list of one upstream became known (at start, and again after
   * `list_changed`), so the gate can point out `policy.tools` keys that name a tool
   * the upstream does not list: such a key never matches. Must not throw.
   */
  toolsListed?(server: string, tools: readonly string[]): void;
  /**
   * Every tool name the gateway now lists to its client, as the client names
   * them (`<alias>__<tool>` with several upstreams, the `assent__*` operation
   * tools when on). The daemon passes an agent's hook call under the gateway's
   * entry only for one of these (R-HOOK-13). Must not throw.
   */
  toolsOffered?(tools: readonly string[]): void;
}

/** A `policy.tools` key that names a tool its upstream does not list. */
export interface UnlistedPolicyTool {
  /** The policy key, `<alias>/<tool>`. */
  key: string;
  server: string;
  /** What the upstream does list, sorted. */
  listed: string[];
}

/**
 * The `policy.tools` keys of `server` that name no tool in `listed`. Such a key
 * decides nothing (a typo, or a tool the server renamed), so the operator is told.
 */
export function policyToolsNotListed(policyKeys: Iterable<string>, server: string, listed: readonly string[]): UnlistedPolicyTool[] {
  const prefix = `${server}/`;
  const names = new Set(listed);
  const found: UnlistedPolicyTool[] = [];
  for (const key of policyKeys) {
    if (!key.startsWith(prefix) || names.has(key.slice(prefix.length))) continue;
    found.push({ key, server, listed: [...names].sort() });
  }
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The stderr line for one such key: which key, why it never matches, and what the server does list. */
export function describeUnlistedPolicyTool(entry: UnlistedPolicyTool, configPath: string): string {
  const listed = entry.listed.length > 0 ? entry.listed.join(', ') : '(none)';
  return (
    `policy.tools.${entry.key} in ${configPath} names a tool that MCP server "${entry.server}" does not list, so it never decides anything. ` +
    `Check the spelling; "${entry.server}" lists: ${listed}.`
  );
}

/** The pure evaluation a local gate delegates to; shaped like `evaluateToolPolicy` bound to a snapshot. */
export type ToolPolicyEvaluator = (
  call: { server: string; tool: string; args: Record<string, unknown>; annotations?: ToolAnnotationHints },
  nowMs: number,
) => { decision: 'allow' | 'deny' | 'prompt'; key?: string; ruleId?: string };

export interface EvaluatorGateOptions {
  now?: () => number;
  /** Where the operator edits policy, named in denial texts. */
  configPath?: string;
  /** Why no human can be asked, appended to `no_consent_channel` texts. */
  noChannelHint?: string;
}

/**
 * A gate that settles allow and deny from pure policy evaluation and refuses
 * `prompt` with `no_consent_channel`: without a daemon nobody can be asked, and
 * assent fails closed rather than open (R-MCP-5).
 */
export function evaluatorGate(evaluate: ToolPolicyEvaluator, options: EvaluatorGateOptions = {}): CallGate {
  const now = options.now ?? Date.now;
  const configPath = options.configPath ?? 'config.json';
  return {
    authorize(call) {
      const verdict = evaluate(
        { server: call.server, tool: call.tool, args: call.args, ...(call.annotations ? { annotations: call.annotations } : {}) },
        now(),
      );
      if (verdict.decision === 'allow') return Promise.resolve(ALLOWED);
      const key = verdict.key ?? 'policy.default';
      if (verdict.decision === 'deny') {
        return Promise.resolve({
          allowed: false,
          reason: 'policy',
          message: describeDenial('policy', { server: call.server, tool: call.tool, key, configPath }),
        });
      }
      return Promise.resolve({
        allowed: false,
        reason: 'no_consent_channel',
        message: describeDenial('no_consent_channel', {
          server: call.server,
          tool: call.tool,
          key,
          configPath,
          ...(options.noChannelHint === undefined ? {} : { hint: options.noChannelHint }),
        }),
      });
    },
  };
}

/**
 * The gate used when no daemon is reachable: allow and deny settle from the
 * policy snapshot with the same pure evaluation the daemon uses; `prompt`
 * is refused with `no_consent_channel` (R-MCP-5: fail closed, never open).
 */
export function localPolicyGate(snapshot: PolicySnapshot, options: EvaluatorGateOptions = {}): CallGate {
  return evaluatorGate((call, nowMs) => evaluateToolPolicy(snapshot, call, nowMs), options);
}

/**
 * A gate that refuses every call with `unavailable`: for a gateway that has no
 * daemon and no confirmed configuration, so no policy it may decide by (R-CFG-4:
 * an unconfirmed config.json never decides). `why` says what is missing, `next`
 * what the operator can do about it.
 */
export function refuseAllGate(why: string, configPath: string, next: string): CallGate {
  return {
    authorize(call) {
      const message =
        `assent refused ${toolId(call.server, call.tool)}: unavailable. No assent daemon is reachable and there is ` +
        `no confirmed configuration to decide by (${why}); an unconfirmed ${configPath} never decides, so every call fails closed and the ` +
        `server never received this one. ${next}`;
      return Promise.resolve({ allowed: false, reason: 'unavailable', message });
    },
  };
}

const ALLOWED: GateDecision = Object.freeze({ allowed: true });

export interface DenialContext {
  server: string;
  tool: string;
  /** The config key that decided (e.g. `policy.tools.fs/write_file`). */
  key?: string;
  configPath?: string;
  approvalId?: string;
  hint?: string;
}

/**
 * The text an agent reads in a refused call's result: what happened, to which
 * call, and what the operator (not the agent) can do about it. Shared so every
 * gate words the same reason the same way.
 */
export function describeDenial(reason: DenialReason, context: DenialContext): string {
  const id = toolId(context.server, context.tool);
  const approval = context.approvalId === undefined ? '' : ` (approval ${context.approvalId})`;
  const configPath = context.configPath ?? 'config.json';
  switch (reason) {
    case 'policy':
      return (
        `assent refused ${id}: policy. The policy key ${context.key ?? 'policy.default'} in ${configPath} says "deny", ` +
        `so the server never received the call. Do not retry it; ask the operator to change that key ` +
        `(then \`assent config reload\`) if this tool should be usable.`
      );
    case 'consent_denied':
      return (
        `assent refused ${id}: consent_denied${approval}. The operator declined this exact call, so the server never received it. ` +
        `Do not retry the identical call; ask the operator what to do instead.`
      );
    case 'consent_timeout':
      return (
        `assent refused ${id}: consent_timeout${approval}. Nobody approved the call within policy.consentTimeoutSeconds, ` +
        `so the server never received it. The operator can see waiting calls with \`assent pending\` and approve one with ` +
        `\`assent approve ID\`; retry the call when they are ready.`
      );
    case 'no_consent_channel':
      return (
        `assent refused ${id}: no_consent_channel. Policy (${context.key ?? 'policy.default'} = "prompt") needs a human decision, ` +
        `but no approval channel is reachable${context.hint ? ` (${context.hint})` : ''}, so the call failed closed and the server never received it. ` +
        `The operator can start one with \`assent daemon run\` and then approve with \`assent pending\` / \`assent approve ID\`; retry after that.`
      );
    case 'approval_pending':
      return (
        `assent did not run ${id}: approval_pending${approval}. This call needs the operator's approval (handoff mode), so the server has not received it. ` +
        `Tell the user that approval${context.approvalId === undefined ? '' : ` ${context.approvalId}`} is waiting (\`assent pending\`, \`assent approve ID\` or the web page). ` +
        `After it is approved, retry this identical call (same tool, same arguments) once; it then runs exactly once. Different arguments need a new approval.`
      );
    case 'cancelled':
      return `assent did not run ${id}: cancelled${approval}. The call was cancelled while it waited for a decision; the server never received it.`;
    case 'shutdown':
      return (
        `assent did not run ${id}: shutdown${approval}. The assent daemon shut down while the call waited for a decision, so nobody declined it ` +
        `and the server never received it. Retrying the identical call is fine once the daemon runs again (it starts on demand; the operator can check with \`assent daemon status\`).`
      );
    case 'session_ended':
      return (
        `assent did not run ${id}: session_ended${approval}. This MCP session ended while the call waited for a decision, so nobody declined it ` +
        `and the server never received it. Retrying the identical call in a new session is fine.`
      );
    case 'unavailable':
      return (
        `assent did not run ${id}: unavailable${approval}. ${context.hint ?? 'assent has no current policy to decide this call by (the connection to the assent daemon was lost)'}, ` +
        `so nobody declined it and the server never received it. Retrying the identical call in a few seconds is fine; if this persists, ` +
        `the operator can check \`assent daemon status\` and daemon.log.`
      );
  }
}
