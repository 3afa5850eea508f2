// The daemon-backed gate (R-D-5): every gated call goes through the daemon's
// `calls.authorize`, which settles allow/deny and, for prompt, waits for a human
// on any channel. When the daemon cannot be reached the gateway falls back to
// its local gate, where prompt fails closed (R-MCP-5).
import { AssentError } from '../../core/errors.js';
import type { Config } from '../../core/config.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import type { Logger } from '../../service/logger.js';
import type { CallGate, DenialReason, GateDecision } from './gate.js';

interface AuthorizeResult {
  callId: string;
  consent?: { channel: string; approvalId?: string };
}

const DENIAL_REASONS = new Set<DenialReason>(['policy', 'consent_denied', 'consent_timeout', 'no_consent_channel', 'cancelled']);

function denialFrom(error: unknown): GateDecision {
  if (error instanceof AssentError && error.type === 'policy_denied') {
    const reason = error.details?.['reason'];
    const approvalId = error.details?.['approvalId'];
    const hint = error.details?.['hint'];
    const decision: GateDecision = {
      allowed: false,
      reason: typeof reason === 'string' && DENIAL_REASONS.has(reason as DenialReason) ? (reason as DenialReason) : 'consent_denied',
      message: `${error.message}${typeof hint === 'string' ? ` (${hint})` : ''}`,
    };
    if (typeof approvalId === 'string') decision.approvalId = approvalId;
    return decision;
  }
  if (error instanceof AssentError && error.type === 'timeout') {
    return { allowed: false, reason: 'cancelled', message: 'the call was cancelled before a decision arrived' };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    allowed: false,
    reason: 'no_consent_channel',
    message: `the assent daemon could not decide this call (${message}); nothing was run. Check \`assent daemon status\`, then retry`,
  };
}

export interface DaemonGateOptions {
  client: DaemonClient;
  sessionId: string;
  logger: Logger;
}

export function daemonGate(options: DaemonGateOptions): CallGate {
  const { client, sessionId, logger } = options;
  return {
    async authorize(call) {
      const params: Record<string, unknown> = {
        sessionId: call.sessionId || sessionId,
        server: call.server,
        tool: call.tool,
        args: call.args,
        caller: call.caller,
      };
      if (call.annotations !== undefined) params['annotations'] = call.annotations;
      try {
        const result = await client.call<AuthorizeResult>('calls.authorize', params, { signal: call.signal });
        return { allowed: true, callId: result.callId };
      } catch (error) {
        if (call.signal.aborted) return { allowed: false, reason: 'cancelled', message: 'the client cancelled the call while it waited for a decision' };
        return denialFrom(error);
      }
    },
    finish(callId, outcome) {
      client
        .call('calls.finish', { callId, outcome: outcome.ok ? 'ok' : 'error', durationMs: Math.round(outcome.durationMs) })
        .catch((error: unknown) => logger.warn('could not report a finished call to the daemon', { error }));
    },
    async close() {
      try {
        await client.call('sessions.end', { sessionId });
      } catch {
        // The daemon may be gone already; its timeouts resolve what is left.
      }
      client.close();
    },
  };
}

/** The pinned config the daemon runs with (servers and policy come from it, never from re-reading config.json). */
export async function fetchPinnedConfig(client: DaemonClient): Promise<{ config: Config; revision: string }> {
  return client.call<{ config: Config; revision: string }>('config.get', {});
}
