// The daemon-backed gate (R-D-5, SPEC §10 design note). The gateway holds the
// daemon's pinned policy snapshot (pushed to it on every change), settles allow
// and deny itself with the same pure evaluation, and reports those calls to the
// daemon afterwards for audit. Only `prompt` goes through `calls.authorize`,
// which waits for a human on any channel. Without a daemon the gateway uses its
// local gate instead, where prompt fails closed (R-MCP-5).
import { randomBytes } from 'node:crypto';
import { askOnControllingTerminal } from '../../channels/ttyApproval.js';
import { renderApprovalPreview } from '../../core/approvalPreview.js';
import { digestOf } from '../../core/canonical.js';
import type { Config } from '../../core/config.js';
import { AssentError } from '../../core/errors.js';
import { escapedJson, escapeText } from '../../core/escape.js';
import { compilePolicy, evaluateToolPolicy, type PolicySnapshot } from '../../core/toolPolicy.js';
import type { PolicySnapshotData } from '../../operations/policyOperations.js';
import type { Logger } from '../../service/logger.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import { describeDenial, type CallGate, type DenialReason, type GateCall, type GateDecision } from './gate.js';

interface AuthorizeResult {
  callId: string;
  consent?: { channel: string; approvalId?: string };
  /** Handoff retry: the effect whose intent the daemon recorded; its result goes back with calls.finish. */
  effectId?: string;
  /** Handoff retry of a call that already ran: its recorded disposition (R-J-4). */
  replay?: { effectId: string; state: string; result?: unknown };
}

/** The client's answer to an identical retry: the recorded tool result, or a text naming the recorded state. */
function replayResult(call: GateCall, replay: NonNullable<AuthorizeResult['replay']>, approvalId: string | undefined): Record<string, unknown> {
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

interface SettledCall {
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  ruleId?: string;
  caller: Record<string, unknown>;
}

const DENIAL_REASONS = new Set<DenialReason>(['policy', 'consent_denied', 'consent_timeout', 'no_consent_channel', 'cancelled', 'approval_pending']);
/** Denials nobody decided (R-D-6): the daemon names them in `details.detail`; the agent must not read them as a refusal. */
const LIFECYCLE_DETAILS = new Set<DenialReason>(['shutdown', 'session_ended']);

function denialFrom(call: GateCall, error: unknown, configPath: string): GateDecision {
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
    let message = describeDenial(reason, {
      server: call.server,
      tool: call.tool,
      configPath,
      ...(key === undefined ? {} : { key }),
      ...(approvalId === undefined ? {} : { approvalId }),
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

export interface DaemonGateOptions {
  client: DaemonClient;
  sessionId: string;
  logger: Logger;
  now?: () => number;
  /** `channels.elicitation`: also ask through the MCP client's form (R-MCP-6), racing the other channels. */
  elicitation?: boolean;
  /** `channels.tty`: also ask on the controlling terminal, when one can be opened (R-MCP-7). */
  tty?: boolean;
  /** Opens a new daemon connection after the old one dropped, so waiting calls re-attach (R-D-7). */
  reconnect?: () => Promise<DaemonClient>;
}

/** The form an MCP client shows for the elicitation channel: the complete escaped call and one yes/no. */
export function elicitationRequest(call: GateCall, approvalId: string): Record<string, unknown> {
  return {
    message:
      `assent: approval ${approvalId}. ${escapeText(`${call.server}/${call.tool}`)} wants to run with exactly these arguments:\n` +
      `${escapedJson(call.args, 2)}\nApprove this exact call once?`,
    requestedSchema: {
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve this exact call', description: 'true runs it once; false denies it' } },
      required: ['approve'],
    },
  };
}

/** Connects the gate: fetches the pinned policy and subscribes to its changes. */
export async function connectDaemonGate(options: DaemonGateOptions): Promise<CallGate> {
  const { sessionId, logger } = options;
  const now = options.now ?? Date.now;
  let client = options.client;
  let snapshot: PolicySnapshot = compilePolicy({ default: 'deny', destructive: 'deny', tools: {}, consentTimeoutSeconds: 90 }, []);
  let configPath = '';
  const useSnapshot = (data: PolicySnapshotData): void => {
    snapshot = compilePolicy(data.policy, data.rules);
    configPath = data.path;
  };
  /** Adopts a daemon connection: its pinned policy, and every later change pushed to it. */
  const attach = async (next: DaemonClient): Promise<void> => {
    useSnapshot(await next.call<PolicySnapshotData>('policy.get', { watch: true }));
    next.onNotification('policy', (params) => {
      useSnapshot(params as PolicySnapshotData);
      logger.info('policy snapshot updated', { revision: (params as PolicySnapshotData).revision });
    });
    client = next;
  };
  await attach(client);
  let reconnecting: Promise<DaemonClient | undefined> | undefined;
  /** After the daemon went away: one new connection (auto-spawn restarts it), shared by every waiting call. */
  const reconnect = (): Promise<DaemonClient | undefined> => {
    const connect = options.reconnect;
    if (connect === undefined) return Promise.resolve(undefined);
    reconnecting ??= (async () => {
      for (let attempt = 0; attempt < 40; attempt += 1) {
        try {
          const next = await connect();
          await attach(next);
          logger.info('re-attached to the assent daemon');
          return next;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      return undefined;
    })().finally(() => {
      reconnecting = undefined;
    });
    return reconnecting;
  };
  const settled = new Map<string, SettledCall>();
  /** Calls that run under a handoff proof: their result is recorded with the effect. */
  const effectCalls = new Set<string>();
  let counter = 0;

  // Locally settled calls are audited in batches, off the call path: the digest
  // and the socket write happen after the client already has its answer.
  const queue: { call: SettledCall; outcome: 'ok' | 'error' | 'denied'; durationMs: number | undefined }[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  const flush = (): Promise<unknown> => {
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = undefined;
    if (queue.length === 0) return Promise.resolve();
    const records = queue.splice(0, 1000).map(({ call, outcome, durationMs }) => {
      const params: Record<string, unknown> = {
        sessionId: call.sessionId,
        server: call.server,
        tool: call.tool,
        argsSha256: digestOf(call.args),
        outcome,
        caller: call.caller,
      };
      if (outcome === 'denied') params['deniedReason'] = 'policy';
      if (call.ruleId !== undefined) params['ruleId'] = call.ruleId;
      if (durationMs !== undefined) params['durationMs'] = Math.round(durationMs);
      return params;
    });
    const sent = client.call('calls.record', { records }).catch((error: unknown) => logger.warn('could not report calls to the daemon for audit', { error, count: records.length }));
    return queue.length > 0 ? sent.then(flush) : sent;
  };
  const record = (call: SettledCall, outcome: 'ok' | 'error' | 'denied', durationMs?: number): void => {
    queue.push({ call, outcome, durationMs });
    if (queue.length >= 1000) void flush();
    else if (flushTimer === undefined) {
      flushTimer = setTimeout(() => void flush(), 20);
      flushTimer.unref?.();
    }
  };

  const askThroughElicitation = async (
    elicit: NonNullable<GateCall['elicit']>,
    call: GateCall,
    approvalId: string,
    signal: AbortSignal,
  ): Promise<void> => {
    try {
      const answer = await elicit(elicitationRequest(call, approvalId), signal);
      if (signal.aborted || answer['action'] === 'cancel') return;
      const content = answer['content'] as Record<string, unknown> | undefined;
      const approve = answer['action'] === 'accept' && content?.['approve'] === true;
      await client.call('approvals.decide', { id: approvalId, behavior: approve ? 'allow' : 'deny', channel: 'elicitation' });
    } catch (error) {
      // Cancelled because another channel won, or the client failed: the other channels still decide.
      if (!signal.aborted) logger.info('elicitation channel gave no decision', { approvalId, error: error instanceof Error ? error.message : String(error) });
    }
  };

  const askThroughTerminal = async (call: GateCall, approvalId: string, expiresAt: number, signal: AbortSignal): Promise<void> => {
    const preview = renderApprovalPreview(
      { id: approvalId, sessionId: call.sessionId || sessionId, kind: 'tool', server: call.server, tool: call.tool, args: call.args, requestedAt: now(), expiresAt, caller: call.caller },
      now(),
    );
    const answer = await askOnControllingTerminal({ preview, random: (n) => randomBytes(n), signal });
    if (answer !== 'allow' || signal.aborted) return;
    await client
      .call('approvals.decide', { id: approvalId, behavior: 'allow', channel: 'tty' })
      .catch((error: unknown) => logger.info('tty channel could not decide', { approvalId, error: error instanceof Error ? error.message : String(error) }));
  };

  return {
    async authorize(call) {
      const verdict = evaluateToolPolicy(
        snapshot,
        call.annotations === undefined
          ? { server: call.server, tool: call.tool, args: call.args }
          : { server: call.server, tool: call.tool, args: call.args, annotations: call.annotations },
        now(),
      );
      const local: SettledCall = { sessionId: call.sessionId || sessionId, server: call.server, tool: call.tool, args: call.args, caller: call.caller };
      if (verdict.ruleId !== undefined) local.ruleId = verdict.ruleId;
      if (verdict.decision === 'allow') {
        counter += 1;
        const callId = `g${counter.toString(36)}`;
        settled.set(callId, local);
        return { allowed: true, callId };
      }
      if (verdict.decision === 'deny') {
        record(local, 'denied');
        return {
          allowed: false,
          reason: 'policy',
          message: describeDenial('policy', { server: call.server, tool: call.tool, key: verdict.key ?? 'policy.default', configPath }),
        };
      }
      const params: Record<string, unknown> = {
        sessionId: local.sessionId,
        server: call.server,
        tool: call.tool,
        args: call.args,
        caller: call.caller,
      };
      if (call.annotations !== undefined) params['annotations'] = call.annotations;
      const elicitAbort = new AbortController();
      const elicit = options.elicitation === true ? call.elicit : undefined;
      // The approval id arrives as soon as it is filed: the other channels need it,
      // and so does re-attaching after a daemon restart.
      counter += 1;
      const requestKey = `e${counter.toString(36)}`;
      params['requestKey'] = requestKey;
      let approvalId: string | undefined;
      const stopListening = client.onNotification('calls.pending', (notification) => {
        const pending = notification as { requestKey?: string; approval?: { id?: string; expiresAt?: number } };
        if (pending.requestKey !== requestKey || typeof pending.approval?.id !== 'string') return;
        approvalId = pending.approval.id;
        if (elicit !== undefined) void askThroughElicitation(elicit, call, approvalId, elicitAbort.signal);
        if (options.tty === true) void askThroughTerminal(call, approvalId, pending.approval.expiresAt ?? now(), elicitAbort.signal);
      });
      const cancelled: GateDecision = { allowed: false, reason: 'cancelled', message: 'the client cancelled the call while it waited for a decision' };
      try {
        const result = await client.call<AuthorizeResult>('calls.authorize', params, { signal: call.signal });
        if (result.replay !== undefined) return { allowed: true, replay: replayResult(call, result.replay, result.consent?.approvalId) };
        if (result.effectId !== undefined) effectCalls.add(result.callId);
        return { allowed: true, callId: result.callId };
      } catch (error) {
        if (call.signal.aborted) return cancelled;
        const next = error instanceof AssentError && error.type === 'unavailable' && approvalId !== undefined ? await reconnect() : undefined;
        if (next === undefined || approvalId === undefined) return denialFrom(call, error, configPath);
        // R-D-7: the daemon restarted while this call waited; its approval survived in the journal.
        const { requestKey: _requestKey, ...resumeParams } = params;
        try {
          const result = await next.call<AuthorizeResult>('calls.resume', { ...resumeParams, approvalId }, { signal: call.signal });
          return { allowed: true, callId: result.callId };
        } catch (resumeError) {
          return call.signal.aborted ? cancelled : denialFrom(call, resumeError, configPath);
        }
      } finally {
        // Whichever channel won, a form still open on the client is withdrawn (R-MCP-6).
        elicitAbort.abort();
        stopListening();
      }
    },
    finish(callId, outcome) {
      const local = settled.get(callId);
      if (local !== undefined) {
        settled.delete(callId);
        record(local, outcome.ok ? 'ok' : 'error', outcome.durationMs);
        return;
      }
      const params: Record<string, unknown> = { callId, outcome: outcome.ok ? 'ok' : 'error', durationMs: Math.round(outcome.durationMs) };
      if (effectCalls.delete(callId) && outcome.result !== undefined) params['result'] = outcome.result;
      client
        .call('calls.finish', params)
        .catch((error: unknown) => logger.warn('could not report a finished call to the daemon', { error }));
    },
    async close() {
      try {
        await flush();
        await client.call('sessions.end', { sessionId });
      } catch {
        // The daemon may be gone already; its timeouts resolve what is left.
      }
      client.close();
    },
  };
}

/** The pinned config the daemon runs with (servers and policy come from it, never from re-reading config.json). */
export async function fetchPinnedConfig(client: DaemonClient): Promise<{ config: Config; revision: string; path: string }> {
  return client.call<{ config: Config; revision: string; path: string }>('config.get', {});
}
