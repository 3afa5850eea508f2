// The daemon-backed gate (R-D-5, SPEC §10 design note). The gateway holds the
// daemon's pinned policy snapshot (pushed to it on every change), settles allow
// and deny itself with the same pure evaluation, and reports those calls to the
// daemon afterwards for audit. Only `prompt` goes through `calls.authorize`,
// which waits for a human on any channel. A snapshot is only as current as the
// connection it came with: when the daemon goes away the gate refuses every
// call, reconnects (auto-spawn restarts the daemon), fetches config and rules
// again, re-attaches waiting calls and sends the audit records it kept. A
// gateway that found no daemon at start runs the same gate detached: its
// fallback decides until the same loop attaches it to a daemon.
// This file is the facade (authorize, finish, close); beside it: the attachment loop
// (daemonAttachment.ts), the audit queue (auditQueue.ts), the approval channels (approvalChannels.ts).
import { AssentError, errorText } from '../../core/base/errors.js';
import { decidingPolicyKey } from '../../core/policy/policyKey.js';
import { evaluateToolPolicy, gatewayCallLevel, type PolicySnapshot } from '../../core/policy/toolPolicy.js';
import type { Logger } from '../../service/logger.js';
import { realTimers, type Timers } from '../../core/base/timers.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import { createApprovalChannels } from './approvalChannels.js';
import { createAuditQueue, type SettledCall } from './auditQueue.js';
import type { AuditSpool } from './auditSpool.js';
import { denialFrom, gapRefusal, isConnectionLoss, replayResult, type AuthorizeResult } from './daemonAnswers.js';
import { createAttachmentLoop, type Attachment, type PinnedConfigData } from './daemonAttachment.js';
import { describeDenial, type CallGate, type GateCall, type GateDecision } from './gate.js';
import { createUnlistedToolsCheck } from './unlistedToolsCheck.js';

export type { PinnedConfigData } from './daemonAttachment.js';

/** The timers the gate takes: the same shape the services take. */
export type DaemonGateTimers = Timers;

/**
 * How a gateway that found no daemon at start decides until it first attaches
 * to one (R-MCP-5): by the configuration last confirmed with the daemon, or by
 * refusing every call when not even that can be read.
 */
export interface DetachedStart {
  /** The configuration the gateway's servers come from. */
  started: PinnedConfigData;
  /**
   * Decides calls until the first attachment. Its allow and `policy` deny are
   * final (and audited once a daemon takes the record); any other refusal means
   * only a daemon could decide, so the call first waits briefly for one.
   */
  fallback: CallGate;
}

export interface DaemonGateOptions {
  /** The daemon connection to attach to. Absent with `detached`: the gate then attaches in the background. */
  client?: DaemonClient;
  /** A gateway without a daemon at start: keeps trying `reconnect` with the usual backoff and decides by this meanwhile. */
  detached?: DetachedStart;
  sessionId: string;
  logger: Logger;
  now?: () => number;
  /** `channels.elicitation`: also ask through the MCP client's form (R-MCP-6). Default: the daemon's pinned config. */
  elicitation?: boolean;
  /** `channels.tty`: also ask on the controlling terminal, when one can be opened (R-MCP-7). Default: the daemon's pinned config. */
  tty?: boolean;
  /**
   * Opens a new daemon connection after the old one dropped (auto-spawning the daemon
   * like any client unless ASSENT_NO_AUTOSPAWN=1). Without it a lost connection
   * leaves the gate refusing every call.
   */
  reconnect?: () => Promise<DaemonClient>;
  /** Said in the refusal of a call that arrives while the gate reconnects (e.g. that auto-spawn is off). */
  reconnectHint?: string;
  /** Backoff between reconnect attempts: the first wait, doubled after each failure up to `max`. */
  reconnectDelayMs?: { first: number; max: number };
  /** How long a call that arrives with no current policy snapshot waits for a reconnect before it is refused. */
  gapWaitMs?: number;
  /** Audit records kept while the daemon cannot be reached; beyond it new records are dropped, counted and logged. */
  maxAuditBacklog?: number;
  /** Where settled calls are written within milliseconds for the daemon to read (auditSpool.ts); absent, their records wait in memory. */
  spool?: AuditSpool;
  /** Issue 35: why the device holding ASSENT_HOME cannot keep a call's record now (full); meanwhile every call is refused, audited. */
  storage?: () => string | undefined;
  timers?: DaemonGateTimers;
}

export interface DaemonGate extends CallGate {
  /**
   * The configuration the gateway's servers come from: the pinned config of the
   * daemon the gate first attached to, or for a detached start `detached.started`.
   */
  readonly pinned: PinnedConfigData;
  /** Whether the gate holds a current policy snapshot from a live daemon connection. */
  readonly attached: boolean;
  /** Settled calls waiting to be reported for audit (kept across a lost connection). */
  readonly auditBacklog: number;
  /** Settled calls never reported: backlog full, arguments that cannot be digested, or refused by the daemon. */
  readonly auditDropped: number;
  /** Calls the gate allowed itself whose end (finish or withdraw) it has not heard yet; each holds its arguments and holds back the audit. */
  readonly openCalls: number;
}

/** A call as its audit record keeps it until it is sent, rated as the daemon rates the calls it decides (R-POL-10). */
function settledCall(call: GateCall, sessionId: string, policy: Pick<PolicySnapshot, 'toolRisk'>): SettledCall {
  const risk = gatewayCallLevel(policy, call.server, call.tool, call.annotations);
  const local: SettledCall = { sessionId: call.sessionId || sessionId, server: call.server, tool: call.tool, args: call.args, caller: call.caller, risk };
  if (call.argsSize !== undefined) local.argsSize = call.argsSize;
  return local;
}

/** How long closing waits for the last audit records and `sessions.end`. */
const CLOSE_WAIT_MS = 2000;

/**
 * Connects the gate: fetches the daemon's pinned config and policy snapshot and
 * subscribes to its changes. When the connection drops, the gate refuses every
 * call (it has no current snapshot), reconnects with backoff, fetches config and
 * rules again, re-attaches waiting calls and sends the audit records it kept.
 */
export async function connectDaemonGate(options: DaemonGateOptions): Promise<DaemonGate> {
  const { sessionId, logger } = options;
  const now = options.now ?? Date.now;
  const timers = options.timers ?? realTimers;
  const gapWaitMs = options.gapWaitMs ?? 3000;

  const checks = createUnlistedToolsCheck({ sessionId, logger, current: () => attachments.current });
  const attachments = createAttachmentLoop({
    logger,
    timers,
    ...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
    firstDelayMs: options.reconnectDelayMs?.first ?? 100,
    maxDelayMs: options.reconnectDelayMs?.max ?? 10_000,
    ...(options.detached === undefined ? {} : { started: options.detached.started }),
    auditBacklog: () => audit.backlog,
    onPolicyUpdated: () => checks.check(),
    onAdopted: () => {
      checks.check();
      void audit.flush();
    },
    // What a gap keeps (refusals, the audit backlog) survives V8's scavenges, which then grow the young generation for good.
    onLost: () => void import('../../service/youngGeneration.js').then((young) => young.holdYoungGeneration()),
  });
  const audit = createAuditQueue({
    logger,
    timers,
    maxBacklog: options.maxAuditBacklog ?? 10_000,
    client: () => attachments.current?.client,
    closing: () => attachments.closed,
    // Allowed calls still running: their audit waits until the burst is over (R-AUD-3: never on the call path).
    busy: () => settled.size > 0,
    started: () => counter,
    ...(options.spool === undefined ? {} : { spool: options.spool }),
  });
  const reconnects = options.reconnect !== undefined;
  const gapContext = options.reconnectHint === undefined ? { reconnects } : { reconnects, hint: options.reconnectHint };
  /**
   * A call refused because no daemon could decide it is audited like one the gate settled (R-AUD-1: one line per
   * gated call): spooled with the time it was refused, read in by the next daemon, `decidedHow` `unavailable`.
   */
  const auditRefusal = (call: GateCall, reason: 'unavailable' | 'no_consent_channel'): void => {
    const local = settledCall(call, sessionId, attachments.current?.snapshot ?? heldPolicy);
    local.deniedReason = reason;
    audit.record(local, 'denied');
  };
  const refuseInGap = (call: GateCall, what?: string): GateDecision => {
    auditRefusal(call, 'unavailable');
    return gapRefusal(call, gapContext, what);
  };

  const elicitationOn = (): boolean => options.elicitation ?? attachments.current?.pinned.config.channels.elicitation ?? false;
  const ttyOn = (): boolean => options.tty ?? attachments.current?.pinned.config.channels.tty ?? false;

  const settled = new Map<string, SettledCall>();
  /** Calls that run under a handoff proof: their result is recorded with the effect. */
  const effectCalls = new Set<string>();
  let counter = 0;

  /** A call on the current daemon connection; refused at once when there is none. */
  const daemonCall = <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    const attached = attachments.current;
    if (attached === undefined) {
      return Promise.reject(new AssentError('unavailable', `No daemon connection right now; ${method} was not sent.`, { details: { reason: 'closed' } }));
    }
    return attached.client.call<T>(method, params);
  };
  const channels = createApprovalChannels({ sessionId, logger, now, decide: (params) => daemonCall('approvals.decide', params) });

  // ------------------------------------------------------------ prompt: through the daemon
  const cancelled: GateDecision = { allowed: false, reason: 'cancelled', message: 'the client cancelled the call while it waited for a decision' };

  const authorizeWithDaemon = async (call: GateCall, attached: Attachment, local: SettledCall): Promise<GateDecision> => {
    const params: Record<string, unknown> = { sessionId: local.sessionId, server: call.server, tool: call.tool, args: call.args, caller: call.caller };
    if (call.annotations !== undefined) params['annotations'] = call.annotations;
    const elicitAbort = new AbortController();
    const elicit = elicitationOn() ? call.elicit : undefined;
    const tty = ttyOn();
    // The approval id arrives as soon as it is filed: the other channels need it,
    // and so does re-attaching after a daemon restart.
    counter += 1;
    const requestKey = `e${counter.toString(36)}`;
    let approvalId: string | undefined;
    let expiresAt: number | undefined;
    const stopListening = attached.client.onNotification('calls.pending', (notification) => {
      const pending = notification as { requestKey?: string; approval?: { id?: string; expiresAt?: number } };
      if (pending.requestKey !== requestKey || typeof pending.approval?.id !== 'string') return;
      approvalId = pending.approval.id;
      expiresAt = pending.approval.expiresAt;
      if (elicit !== undefined) void channels.askThroughElicitation(elicit, call, approvalId, elicitAbort.signal);
      if (tty) void channels.askThroughTerminal(call, approvalId, expiresAt ?? now(), elicitAbort.signal);
    });
    try {
      const result = await attached.client.call<AuthorizeResult>('calls.authorize', { ...params, requestKey }, { signal: call.signal });
      if (result.replay !== undefined) return { allowed: true, replay: replayResult(call, result.replay, result.consent?.approvalId) };
      if (result.effectId !== undefined) effectCalls.add(result.callId);
      return { allowed: true, callId: result.callId };
    } catch (error) {
      if (call.signal.aborted) return cancelled;
      if (!isConnectionLoss(error)) return denialFrom(call, error, attached.configPath);
      if (approvalId === undefined) return refuseInGap(call, 'The connection to the assent daemon dropped before it filed an approval for this call');
      // R-D-7: the daemon went away while this call waited; its approval survives in the
      // journal. Wait for the next daemon (until the approval's deadline) and re-attach.
      const deadline = (expiresAt ?? now() + 30_000) + 1000;
      let lastError: unknown = error;
      for (let attempt = 0; attempt < 5 && !call.signal.aborted; attempt += 1) {
        const next = await attachments.within(Math.max(0, deadline - now()), call.signal);
        if (call.signal.aborted) return cancelled;
        if (next === undefined) break;
        try {
          const result = await next.client.call<AuthorizeResult>('calls.resume', { ...params, approvalId }, { signal: call.signal });
          return { allowed: true, callId: result.callId };
        } catch (resumeError) {
          if (call.signal.aborted) return cancelled;
          if (!isConnectionLoss(resumeError)) return denialFrom(call, resumeError, next.configPath);
          lastError = resumeError;
        }
      }
      return isConnectionLoss(lastError)
        ? refuseInGap(call, `The assent daemon went away while this call waited for approval ${approvalId} and did not come back in time`)
        : denialFrom(call, lastError, attached.configPath);
    } finally {
      // Whichever channel won, a form still open on the client is withdrawn (R-MCP-6).
      elicitAbort.abort();
      stopListening();
    }
  };

  // ------------------------------------------------------------ before the first daemon (detached start)
  const authorizeDetached = async (call: GateCall, detached: DetachedStart): Promise<GateDecision> => {
    const decision = await detached.fallback.authorize(call);
    // Cancelled while the fallback decided: nothing is settled for a call that will not run.
    if (call.signal.aborted) return cancelled;
    const local = settledCall(call, sessionId, heldPolicy);
    if (decision.allowed) {
      counter += 1;
      const callId = `g${counter.toString(36)}`;
      settled.set(callId, local);
      return { allowed: true, callId };
    }
    if (decision.reason === 'policy') {
      audit.record(local, 'denied');
      return decision;
    }
    // Only a daemon can decide this call: one the operator just started is picked up now, not after the backoff.
    const attached = await attachments.within(gapWaitMs, call.signal);
    if (call.signal.aborted) return cancelled;
    if (attached !== undefined) return gate.authorize(call);
    if (decision.reason === 'unavailable' || decision.reason === 'no_consent_channel') auditRefusal(call, decision.reason);
    return decision;
  };

  /** Allow and deny from the snapshot of a live connection, recorded as `authorize` records them; undefined for `prompt`. */
  const settleFromSnapshot = (call: GateCall, attached: Attachment): GateDecision | undefined => {
    const verdict = evaluateToolPolicy(
      attached.snapshot,
      call.annotations === undefined
        ? { server: call.server, tool: call.tool, args: call.args }
        : { server: call.server, tool: call.tool, args: call.args, annotations: call.annotations },
      now(),
    );
    if (verdict.decision === 'prompt') return undefined;
    const local = settledCall(call, sessionId, attached.snapshot);
    if (verdict.ruleId !== undefined) local.ruleId = verdict.ruleId;
    const policyKey = decidingPolicyKey(verdict);
    if (policyKey !== undefined) local.policyKey = policyKey;
    if (verdict.decision === 'allow') {
      counter += 1;
      const callId = `g${counter.toString(36)}`;
      settled.set(callId, local);
      return { allowed: true, callId };
    }
    audit.record(local, 'denied');
    return {
      allowed: false,
      reason: 'policy',
      message: describeDenial('policy', { server: call.server, tool: call.tool, key: verdict.key ?? 'policy.default', configPath: attached.configPath }),
    };
  };

  /** The last policy the gate held: a refusal in a gap is rated by it, as the daemon would have rated the call. */
  let heldPolicy: Pick<PolicySnapshot, 'toolRisk'> = { toolRisk: new Map(Object.entries(options.detached?.started.config.policy.toolRisk ?? {})) };
  let pinned: PinnedConfigData;
  if (options.client !== undefined) {
    const initial = await attachments.attach(options.client);
    attachments.adopt(initial);
    pinned = initial.pinned;
  } else if (options.detached !== undefined) {
    pinned = options.detached.started;
    attachments.startReconnect(true);
  } else {
    throw new AssentError('internal', 'connectDaemonGate needs a daemon connection or a detached start');
  }
  const detached = options.detached;

  const gate: DaemonGate = {
    pinned,
    get attached() {
      return attachments.current !== undefined;
    },
    get auditBacklog() {
      return audit.backlog;
    },
    get auditDropped() {
      return audit.dropped;
    },
    get openCalls() {
      return settled.size;
    },
    async authorize(call) {
      const disk = options.storage?.();
      if (disk !== undefined) auditRefusal(call, 'unavailable');
      if (disk !== undefined) return { allowed: false, reason: 'unavailable', message: describeDenial('unavailable', { server: call.server, tool: call.tool, hint: disk }) };
      if (!attachments.attachedOnce && detached !== undefined) return authorizeDetached(call, detached);
      // No current snapshot (the daemon went away): nothing is decided from an old one.
      let attached = attachments.current;
      if (attached === undefined) {
        // Only a call that had to wait reads its signal (the fast path makes none): cancelled meanwhile, it is not settled.
        attached = await attachments.within(gapWaitMs, call.signal);
        if (call.signal.aborted) return cancelled;
        if (attached === undefined) return refuseInGap(call);
      }
      heldPolicy = attached.snapshot;
      return settleFromSnapshot(call, attached) ?? authorizeWithDaemon(call, attached, settledCall(call, sessionId, attached.snapshot));
    },
    finish(callId, outcome) {
      const local = settled.get(callId);
      if (local !== undefined) {
        settled.delete(callId);
        audit.record(local, outcome.ok ? 'ok' : 'error', outcome.durationMs);
        return;
      }
      const params: Record<string, unknown> = { callId, outcome: outcome.ok ? 'ok' : 'error', durationMs: Math.round(outcome.durationMs) };
      if (effectCalls.delete(callId) && outcome.result !== undefined) params['result'] = outcome.result;
      daemonCall('calls.finish', params).catch((error: unknown) =>
        logger.warn('could not report a finished call to the daemon; a restarted daemon audits it as uncertain', { callId, error: errorText(error) }),
      );
    },
    withdraw(callId) {
      const local = settled.get(callId);
      if (local !== undefined) {
        settled.delete(callId);
        audit.record(local, 'cancelled');
        return;
      }
      // Allowed by the daemon (a prompt, a handoff retry): it holds the call open until it hears the end.
      effectCalls.delete(callId);
      daemonCall('calls.finish', { callId, outcome: 'cancelled' }).catch((error: unknown) =>
        logger.warn('could not report a withdrawn call to the daemon; a restarted daemon audits it as uncertain', { callId, error: errorText(error) }),
      );
    },
    recordsResult(callId) {
      return effectCalls.has(callId);
    },
    toolsListed(server, tools) {
      // Until a daemon is attached, the fallback's own check speaks for the configuration it decides by.
      if (!attachments.attachedOnce) detached?.fallback.toolsListed?.(server, tools);
      checks.toolsListed(server, tools);
    },
    toolsOffered(tools) {
      checks.toolsOffered(tools);
    },
    async close() {
      attachments.close();
      const attached = attachments.current;
      // Bounded: a daemon that stopped reading must not keep the gateway from exiting.
      let handle: unknown;
      const giveUp = new Promise<void>((resolve) => (handle = timers.setTimeout(resolve, CLOSE_WAIT_MS)));
      try {
        await Promise.race([
          (async () => {
            await audit.close();
            await attached?.client.call('sessions.end', { sessionId });
          })(),
          giveUp,
        ]);
      } catch {
        // The daemon may be gone already; its timeouts resolve what is left.
      } finally {
        timers.clearTimeout(handle);
      }
      if (audit.backlog > 0) logger.warn('the gateway closed with settled calls the daemon was never told of', { count: audit.backlog });
      attached?.client.close();
    },
  };
  return gate;
}
