// How the daemon's answers to a `prompt` call become gate decisions: the refusals
// it sends, the replay of a call that already ran, and the refusal of a call with no daemon.
import { AssentError } from '../../core/base/errors.js';
import { describeDenial, type DenialReason, type GateCall, type GateDecision } from './gate.js';

/** The daemon's answer to `calls.authorize` and `calls.resume`. */
export interface AuthorizeResult {
  callId: string;
  consent?: { channel: string; approvalId?: string };
  /** Handoff retry: the effect whose intent the daemon recorded; its result goes back with calls.finish. */
  effectId?: string;
  /** Handoff retry of a call that already ran: its recorded disposition (R-J-4). */
  replay?: { effectId: string; state: string; result?: unknown };
}

/** The client's answer to an identical retry: the recorded tool result, or a text naming the recorded state. */
export function replayResult(call: GateCall, replay: NonNullable<AuthorizeResult['replay']>, approvalId: string | undefined): Record<string, unknown> {
  const recorded = replay.result;
  if (replay.state === 'completed' && typeof recorded === 'object' && recorded !== null && !Array.isArray(recorded)) return recorded as Record<string, unknown>;
  if (replay.state === 'failed' && typeof recorded === 'object' && recorded !== null && !Array.isArray(recorded)) return recorded as Record<string, unknown>;
  const approval = approvalId === undefined ? '' : ` under approval ${approvalId}`;
  const text =
    replay.state === 'uncertain'
      ? `assent did not run ${call.server}/${call.tool} again: this exact call was started${approval} but the daemon stopped before its outcome was recorded (effect ${replay.effectId}: uncertain). It is never retried automatically; ask the operator to check whether it took effect.`
      : `assent did not run ${call.server}/${call.tool} again: this exact call already ran${approval} (effect ${replay.effectId}: ${replay.state}). An approval runs one call once; ask the operator for a new approval to run it again.`;
  return { content: [{ type: 'text', text }], isError: true };
}

const DENIAL_REASONS = new Set<DenialReason>(['policy', 'consent_denied', 'consent_timeout', 'no_consent_channel', 'unavailable', 'cancelled', 'approval_pending']);
/** Denials nobody decided (R-D-6): the daemon names them in `details.detail`; the agent must not read them as a refusal. */
const LIFECYCLE_DETAILS = new Set<DenialReason>(['shutdown', 'session_ended']);

/** The decision for a call the daemon refused or could not decide. */
export function denialFrom(call: GateCall, error: unknown, configPath: string): GateDecision {
  if (error instanceof AssentError && error.type === 'policy_denied') {
    const raw = error.details?.['reason'];
    const rawDetail = error.details?.['detail'];
    const reason =
      typeof rawDetail === 'string' && LIFECYCLE_DETAILS.has(rawDetail as DenialReason)
        ? (rawDetail as DenialReason)
        : typeof raw === 'string' && DENIAL_REASONS.has(raw as DenialReason)
          ? (raw as DenialReason)
          : 'consent_denied';
    const approvalId = typeof error.details?.['approvalId'] === 'string' ? (error.details['approvalId'] as string) : undefined;
    const key = typeof error.details?.['key'] === 'string' ? (error.details['key'] as string) : undefined;
    const operatorReason = error.details?.['operatorReason'];
    const detail = error.details?.['detail'];
    // The daemon says why it could not decide (e.g. the team database is away, R-TEAM-7).
    const hint = reason === 'unavailable' && typeof error.details?.['hint'] === 'string' ? (error.details['hint'] as string) : undefined;
    let message = describeDenial(reason, {
      server: call.server,
      tool: call.tool,
      configPath,
      ...(key === undefined ? {} : { key }),
      ...(approvalId === undefined ? {} : { approvalId }),
      ...(hint === undefined ? {} : { hint }),
    });
    if (typeof detail === 'string' && detail !== reason) message += ` (${detail})`;
    if (typeof operatorReason === 'string') message += ` The operator said: ${operatorReason}`;
    const decision: GateDecision = { allowed: false, reason, message };
    if (approvalId !== undefined) decision.approvalId = approvalId;
    return decision;
  }
  const why = error instanceof Error ? error.message : String(error);
  if (error instanceof AssentError && error.type === 'unavailable') {
    // The daemon went away while the call waited and did not come back: nobody decided it.
    return { allowed: false, reason: 'unavailable', message: describeDenial('unavailable', { server: call.server, tool: call.tool, configPath, hint: why }) };
  }
  return {
    allowed: false,
    reason: 'no_consent_channel',
    message: describeDenial('no_consent_channel', {
      server: call.server,
      tool: call.tool,
      configPath,
      hint: `the assent daemon could not decide this call (${why}); check \`assent daemon status\``,
    }),
  };
}

/** The daemon went away (connection closed, or it is shutting down): worth waiting for the next one. */
export function isConnectionLoss(error: unknown): boolean {
  return error instanceof AssentError && error.type === 'unavailable';
}

/** How the gate reconnects, said in the refusal of a call that found no daemon. */
export interface GapContext {
  /** Whether the gate reconnects by itself. */
  reconnects: boolean;
  /** E.g. that auto-spawn is off. */
  hint?: string;
}

/** The refusal of a call that arrived, or was left waiting, with no daemon connection to decide it. */
export function gapRefusal(call: GateCall, context: GapContext, what?: string): GateDecision {
  return {
    allowed: false,
    reason: 'unavailable',
    message: describeDenial('unavailable', {
      server: call.server,
      tool: call.tool,
      hint:
        (what ?? 'The gateway lost its connection to the assent daemon and has no current policy to decide by') +
        (context.reconnects ? '; it is reconnecting' : '') +
        (context.hint === undefined ? '' : ` (${context.hint})`),
    }),
  };
}
