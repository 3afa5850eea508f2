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
import { randomBytes } from 'node:crypto';
import { askOnControllingTerminal } from '../../channels/ttyApproval.js';
import { renderApprovalPreview } from '../../core/approvalPreview.js';
import type { Config } from '../../core/config.js';
import { AssentError } from '../../core/errors.js';
import { escapedJson, escapeText } from '../../core/escape.js';
import { compilePolicy, evaluateToolPolicy, type PolicySnapshot } from '../../core/toolPolicy.js';
import { nativeDigestOf } from '../../journal/nativeHash.js';
import type { PolicySnapshotData } from '../../operations/policyOperations.js';
import type { Logger } from '../../service/logger.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import {
  describeDenial,
  describeUnlistedPolicyTool,
  policyToolsNotListed,
  type CallGate,
  type DenialReason,
  type GateCall,
  type GateDecision,
  type UnlistedPolicyTool,
} from './gate.js';

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

const DENIAL_REASONS = new Set<DenialReason>(['policy', 'consent_denied', 'consent_timeout', 'no_consent_channel', 'unavailable', 'cancelled', 'approval_pending']);
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

export interface DaemonGateTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: DaemonGateTimers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

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
  timers?: DaemonGateTimers;
}

/** The pinned configuration a daemon answers `config.get` with. */
export interface PinnedConfigData {
  config: Config;
  revision: string;
  path: string;
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
}

/** One daemon connection and what the gate learnt from it. */
interface Attachment {
  client: DaemonClient;
  snapshot: PolicySnapshot;
  configPath: string;
  pinned: PinnedConfigData;
}

interface QueuedRecord {
  call: SettledCall;
  outcome: 'ok' | 'error' | 'denied';
  durationMs: number | undefined;
  /** The wire record, built once at the first send; null when the call's arguments cannot be digested. */
  params?: Record<string, unknown> | null;
}

const AUDIT_BATCH = 1000;
const AUDIT_FLUSH_MS = 20;
/** How long closing waits for the last audit records and `sessions.end`. */
const CLOSE_WAIT_MS = 2000;

/** The daemon went away (connection closed, or it is shutting down): worth waiting for the next one. */
function isConnectionLoss(error: unknown): boolean {
  return error instanceof AssentError && error.type === 'unavailable';
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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
  const firstDelay = options.reconnectDelayMs?.first ?? 100;
  const maxDelay = options.reconnectDelayMs?.max ?? 10_000;
  const gapWaitMs = options.gapWaitMs ?? 3000;
  const maxBacklog = options.maxAuditBacklog ?? 10_000;

  let current: Attachment | undefined;
  let first: PinnedConfigData | undefined = options.detached?.started;
  /** Whether any daemon connection was adopted yet; until then a detached gate decides by its fallback. */
  let attachedOnce = false;
  let closed = false;
  /** Woken whenever `current` changes or the gate closes: calls waiting for a snapshot. */
  const attachmentWaiters = new Set<() => void>();
  const notifyAttachmentWaiters = (): void => {
    for (const waiter of [...attachmentWaiters]) waiter();
  };

  // ------------------------------------------------------------ upstream tools vs. policy.tools (hardening 5)
  const listedTools = new Map<string, readonly string[]>();
  const warned = new Set<string>();
  let reportedText = '';
  let reportedTo: DaemonClient | undefined;
  const checkUnlistedTools = (): void => {
    try {
      const attached = current;
      if (attached === undefined) return;
      const entries: UnlistedPolicyTool[] = [];
      for (const [server, tools] of listedTools) entries.push(...policyToolsNotListed(attached.snapshot.tools.keys(), server, tools));
      for (const entry of entries) {
        const id = `${entry.key}\u0000${entry.listed.join('\u0000')}`;
        if (warned.has(id)) continue;
        warned.add(id);
        logger.warn(describeUnlistedPolicyTool(entry, attached.configPath), { key: entry.key, server: entry.server });
      }
      const text = JSON.stringify(entries);
      if (text === reportedText && (reportedTo === attached.client || entries.length === 0)) return;
      reportedText = text;
      reportedTo = attached.client;
      attached.client
        .call('sessions.report', { sessionId, policyToolsNotListed: entries })
        .catch((error: unknown) => logger.debug('could not report unlisted policy tools to the daemon', { error: errorText(error) }));
    } catch (error) {
      logger.warn('could not check policy.tools against the upstream tools', { error: errorText(error) });
    }
  };

  // ------------------------------------------------------------ attaching to a daemon connection
  const elicitationOn = (): boolean => options.elicitation ?? current?.pinned.config.channels.elicitation ?? false;
  const ttyOn = (): boolean => options.tty ?? current?.pinned.config.channels.tty ?? false;

  /** Adopts a daemon connection: its pinned config and policy, and every later change pushed to it. */
  const attach = async (next: DaemonClient): Promise<Attachment> => {
    // Filled in once the answers are in; a push that arrives before then is kept for it.
    const state: { attachment?: Attachment; pushed?: PolicySnapshotData } = {};
    next.onNotification('policy', (params) => {
      const data = params as PolicySnapshotData;
      state.pushed = data;
      const attachment = state.attachment;
      if (attachment === undefined) return;
      try {
        attachment.snapshot = compilePolicy(data.policy, data.rules);
        attachment.configPath = data.path;
        logger.info('policy snapshot updated', { revision: data.revision });
        checkUnlistedTools();
      } catch (error) {
        // A snapshot that does not compile must not leave the old one deciding: fail closed.
        logger.error('the daemon pushed a policy snapshot that does not compile; refusing calls until the next one', { error: errorText(error) });
        attachment.snapshot = compilePolicy({ default: 'deny', destructive: 'deny', tools: {} }, []);
      }
    });
    const pinned = await next.call<PinnedConfigData>('config.get', {});
    const data = await next.call<PolicySnapshotData>('policy.get', { watch: true });
    // A push that arrived with the answer is newer than it.
    const latest = state.pushed ?? data;
    const attachment: Attachment = { client: next, snapshot: compilePolicy(latest.policy, latest.rules), configPath: latest.path, pinned };
    state.attachment = attachment;
    if (next.closed) throw new AssentError('unavailable', 'The daemon connection closed while the gateway attached to it.', { details: { reason: 'closed' } });
    return attachment;
  };

  /** Makes an attachment current; called once it is complete. */
  const adoptAttachment = (attachment: Attachment): void => {
    current = attachment;
    attachedOnce = true;
    attachment.client.onClose(() => lost(attachment));
    if (first === undefined) first = attachment.pinned;
    else if (JSON.stringify(attachment.pinned.config.servers) !== JSON.stringify(first.config.servers)) {
      logger.warn(
        'the daemon now runs a confirmed configuration whose servers differ from the ones this gateway started; restart the MCP client to start them',
        { revision: attachment.pinned.revision },
      );
    }
    notifyAttachmentWaiters();
    checkUnlistedTools();
    void flush();
  };

  // ------------------------------------------------------------ losing the daemon and reconnecting
  let reconnecting: Promise<void> | undefined;
  let wakeReconnect: (() => void) | undefined;
  let lastAttemptAt = 0;

  const lost = (attachment: Attachment): void => {
    if (current !== attachment) return;
    current = undefined;
    notifyAttachmentWaiters();
    if (closed) return;
    logger.warn(
      options.reconnect === undefined
        ? 'lost the connection to the assent daemon; every call is refused from now on (restart the MCP client)'
        : 'lost the connection to the assent daemon; refusing every call until it is back, reconnecting',
      { pendingAuditRecords: queue.length },
    );
    startReconnect();
  };

  const sleepUnlessWoken = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        timers.clearTimeout(handle);
        wakeReconnect = undefined;
        resolve();
      };
      const handle = timers.setTimeout(done, ms);
      wakeReconnect = done;
    });

  /** A call arrived in the gap: try now instead of at the end of a long backoff (at most about once a second). */
  const kickReconnect = (): void => {
    if (wakeReconnect !== undefined && performance.now() - lastAttemptAt >= 1000) wakeReconnect();
  };

  /** `waitFirst`: the caller just failed to connect, so the first attempt waits one backoff step too. */
  const startReconnect = (waitFirst = false): void => {
    const connect = options.reconnect;
    if (connect === undefined || closed || reconnecting !== undefined) return;
    reconnecting = (async () => {
      let delay = firstDelay;
      if (waitFirst) {
        lastAttemptAt = performance.now();
        await sleepUnlessWoken(delay);
        delay = Math.min(delay * 2, maxDelay);
      }
      for (let attempt = 1; !closed; attempt += 1) {
        lastAttemptAt = performance.now();
        let next: DaemonClient | undefined;
        try {
          next = await connect();
          if (closed) {
            next.close();
            return;
          }
          const attachment = await attach(next);
          if (attachedOnce) {
            logger.warn('re-attached to the assent daemon; calls are decided by its current policy again', {
              attempts: attempt,
              revision: attachment.pinned.revision,
            });
          } else {
            logger.warn(
              'attached to the assent daemon that now runs: calls are decided by its pinned configuration and rules from now on, prompt calls wait for approval, and every call is audited',
              { attempts: attempt, revision: attachment.pinned.revision, auditRecordsKept: queue.length },
            );
          }
          adoptAttachment(attachment);
          return;
        } catch (error) {
          next?.close();
          if (attempt === 1 || attempt % 10 === 0) {
            logger.warn(
              attachedOnce ? 'could not reach the assent daemon yet; still refusing calls and retrying' : 'no assent daemon to attach to yet; retrying in the background',
              { attempt, retryInMs: delay, error: errorText(error) },
            );
          }
          await sleepUnlessWoken(delay);
          delay = Math.min(delay * 2, maxDelay);
        }
      }
    })()
      .catch((error: unknown) => logger.error('the reconnect loop failed', { error: errorText(error) }))
      .finally(() => {
        reconnecting = undefined;
        // The connection it made may already be gone again.
        if (current === undefined && !closed) startReconnect();
        notifyAttachmentWaiters();
      });
  };

  /** The current attachment, waiting up to `ms` for a reconnect when there is none. */
  const attachmentWithin = (ms: number, signal?: AbortSignal): Promise<Attachment | undefined> => {
    if (current !== undefined || closed || ms <= 0) return Promise.resolve(current);
    kickReconnect();
    return new Promise((resolve) => {
      const done = (): void => {
        timers.clearTimeout(handle);
        signal?.removeEventListener('abort', done);
        attachmentWaiters.delete(check);
        resolve(current);
      };
      const check = (): void => {
        if (current !== undefined || closed || (reconnecting === undefined && options.reconnect === undefined)) done();
      };
      const handle = timers.setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      attachmentWaiters.add(check);
    });
  };

  const gapRefusal = (call: GateCall, what?: string): GateDecision => ({
    allowed: false,
    reason: 'unavailable',
    message: describeDenial('unavailable', {
      server: call.server,
      tool: call.tool,
      hint:
        (what ?? 'The gateway lost its connection to the assent daemon and has no current policy to decide by') +
        (options.reconnect === undefined ? '' : '; it is reconnecting') +
        (options.reconnectHint === undefined ? '' : ` (${options.reconnectHint})`),
    }),
  });

  // ------------------------------------------------------------ audit of locally settled calls
  const settled = new Map<string, SettledCall>();
  /** Calls that run under a handoff proof: their result is recorded with the effect. */
  const effectCalls = new Set<string>();
  let counter = 0;

  // Locally settled calls are audited in batches, off the call path: the digest and
  // the socket write happen after the client already has its answer. A batch the
  // daemon did not take (its connection dropped) stays queued and goes to the next
  // daemon; the backlog is bounded.
  const queue: QueuedRecord[] = [];
  let dropped = 0;
  let flushTimer: unknown;
  let inFlight: Promise<void> | undefined;

  const drop = (count: number, why: string, fields: Record<string, unknown> = {}): void => {
    const before = dropped;
    dropped += count;
    // The first drop, then one line per hundred: a long outage must not flood stderr.
    if (before === 0 || Math.floor(before / 100) !== Math.floor(dropped / 100)) {
      logger.error(`settled calls were not audited: ${why}`, { ...fields, count, droppedSoFar: dropped });
    }
  };

  const encode = (entry: QueuedRecord): Record<string, unknown> | null => {
    if (entry.params !== undefined) return entry.params;
    const { call, outcome, durationMs } = entry;
    try {
      const params: Record<string, unknown> = {
        sessionId: call.sessionId,
        server: call.server,
        tool: call.tool,
        argsSha256: nativeDigestOf(call.args),
        outcome,
        caller: call.caller,
      };
      if (outcome === 'denied') params['deniedReason'] = 'policy';
      if (call.ruleId !== undefined) params['ruleId'] = call.ruleId;
      if (durationMs !== undefined) params['durationMs'] = Math.round(durationMs);
      entry.params = params;
    } catch (error) {
      entry.params = null;
      drop(1, 'the call arguments cannot be canonicalized for their digest', { server: call.server, tool: call.tool, error: errorText(error) });
    }
    return entry.params;
  };

  /** Sends the queue front to back; what the daemon took leaves the queue, a lost connection keeps the rest. */
  const drain = async (): Promise<void> => {
    for (;;) {
      const attached = current;
      if (attached === undefined || queue.length === 0) return;
      const batch = queue.slice(0, AUDIT_BATCH);
      const records = batch.map(encode).filter((params): params is Record<string, unknown> => params !== null);
      try {
        if (records.length > 0) await attached.client.call('calls.record', { records });
        queue.splice(0, batch.length);
        // What arrived meanwhile waits for the timer, so batches stay large (each costs the daemon a
        // write and an fsync); a full batch, or a gateway closing, goes at once.
        if (queue.length >= AUDIT_BATCH || closed) continue;
        return;
      } catch (error) {
        if (isConnectionLoss(error) || attached.client.closed) {
          logger.info('audit records kept until the daemon is back', { count: queue.length });
          return;
        }
        logger.warn('the daemon refused a batch of audit records; sending them one by one', { error: errorText(error) });
      }
      // The daemon refused the batch: it would refuse it again. Find the records it refuses; keep the others.
      for (const entry of batch) {
        const params = entry.params;
        try {
          if (params !== null && params !== undefined) await attached.client.call('calls.record', { records: [params] });
        } catch (error) {
          if (isConnectionLoss(error) || attached.client.closed) return;
          drop(1, 'the daemon refused the record', { server: entry.call.server, tool: entry.call.tool, error: errorText(error) });
        }
        queue.shift();
      }
    }
  };

  /** Sends what is queued; never rejects (it runs from a timer, R-AUD-3: audit never fails a call). */
  const flush = (): Promise<void> => {
    if (flushTimer !== undefined) {
      timers.clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    inFlight ??= drain()
      .catch((error: unknown) => logger.error('sending audit records failed', { error: errorText(error), kept: queue.length }))
      .finally(() => {
        inFlight = undefined;
        if (queue.length > 0 && current !== undefined) scheduleFlush();
      });
    return inFlight;
  };

  const scheduleFlush = (): void => {
    if (flushTimer !== undefined || current === undefined) return;
    flushTimer = timers.setTimeout(() => {
      flushTimer = undefined;
      try {
        void flush();
      } catch (error) {
        logger.error('the audit timer failed', { error: errorText(error) });
      }
    }, AUDIT_FLUSH_MS);
  };

  const record = (call: SettledCall, outcome: 'ok' | 'error' | 'denied', durationMs?: number): void => {
    if (queue.length >= maxBacklog) {
      drop(1, `the daemon has been unreachable for ${maxBacklog} settled calls and the backlog is full`, { server: call.server, tool: call.tool });
      return;
    }
    queue.push({ call, outcome, durationMs });
    if (queue.length >= AUDIT_BATCH && current !== undefined) void flush();
    else scheduleFlush();
  };

  // ------------------------------------------------------------ the other channels of a waiting call
  /** A call on the current daemon connection; refused at once when there is none. */
  const daemonCall = <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    const attached = current;
    if (attached === undefined) {
      return Promise.reject(new AssentError('unavailable', `No daemon connection right now; ${method} was not sent.`, { details: { reason: 'closed' } }));
    }
    return attached.client.call<T>(method, params);
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
      await daemonCall('approvals.decide', { id: approvalId, behavior: approve ? 'allow' : 'deny', channel: 'elicitation' });
    } catch (error) {
      // Cancelled because another channel won, or the client failed: the other channels still decide.
      if (!signal.aborted) logger.info('elicitation channel gave no decision', { approvalId, error: errorText(error) });
    }
  };

  const askThroughTerminal = async (call: GateCall, approvalId: string, expiresAt: number, signal: AbortSignal): Promise<void> => {
    try {
      const preview = renderApprovalPreview(
        { id: approvalId, sessionId: call.sessionId || sessionId, kind: 'tool', server: call.server, tool: call.tool, args: call.args, requestedAt: now(), expiresAt, caller: call.caller },
        now(),
      );
      const answer = await askOnControllingTerminal({ preview, random: (n) => randomBytes(n), signal });
      if (answer !== 'allow' || signal.aborted) return;
      await daemonCall('approvals.decide', { id: approvalId, behavior: 'allow', channel: 'tty' });
    } catch (error) {
      logger.info('tty channel could not decide', { approvalId, error: errorText(error) });
    }
  };

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
      if (elicit !== undefined) void askThroughElicitation(elicit, call, approvalId, elicitAbort.signal);
      if (tty) void askThroughTerminal(call, approvalId, expiresAt ?? now(), elicitAbort.signal);
    });
    try {
      const result = await attached.client.call<AuthorizeResult>('calls.authorize', { ...params, requestKey }, { signal: call.signal });
      if (result.replay !== undefined) return { allowed: true, replay: replayResult(call, result.replay, result.consent?.approvalId) };
      if (result.effectId !== undefined) effectCalls.add(result.callId);
      return { allowed: true, callId: result.callId };
    } catch (error) {
      if (call.signal.aborted) return cancelled;
      if (!isConnectionLoss(error)) return denialFrom(call, error, attached.configPath);
      if (approvalId === undefined) return gapRefusal(call, 'The connection to the assent daemon dropped before it filed an approval for this call');
      // R-D-7: the daemon went away while this call waited; its approval survives in the
      // journal. Wait for the next daemon (until the approval's deadline) and re-attach.
      const deadline = (expiresAt ?? now() + 30_000) + 1000;
      let lastError: unknown = error;
      for (let attempt = 0; attempt < 5 && !call.signal.aborted; attempt += 1) {
        const next = await attachmentWithin(Math.max(0, deadline - now()), call.signal);
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
        ? gapRefusal(call, `The assent daemon went away while this call waited for approval ${approvalId} and did not come back in time`)
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
    const local: SettledCall = { sessionId: call.sessionId || sessionId, server: call.server, tool: call.tool, args: call.args, caller: call.caller };
    if (decision.allowed) {
      counter += 1;
      const callId = `g${counter.toString(36)}`;
      settled.set(callId, local);
      return { allowed: true, callId };
    }
    if (decision.reason === 'policy') {
      record(local, 'denied');
      return decision;
    }
    // Only a daemon can decide this call: one the operator just started is picked up now, not after the backoff.
    const attached = await attachmentWithin(gapWaitMs, call.signal);
    if (call.signal.aborted) return cancelled;
    return attached === undefined ? decision : gate.authorize(call);
  };

  let pinned: PinnedConfigData;
  if (options.client !== undefined) {
    const initial = await attach(options.client);
    adoptAttachment(initial);
    pinned = initial.pinned;
  } else if (options.detached !== undefined) {
    pinned = options.detached.started;
    startReconnect(true);
  } else {
    throw new AssentError('internal', 'connectDaemonGate needs a daemon connection or a detached start');
  }
  const detached = options.detached;

  const gate: DaemonGate = {
    pinned,
    get attached() {
      return current !== undefined;
    },
    get auditBacklog() {
      return queue.length;
    },
    get auditDropped() {
      return dropped;
    },
    async authorize(call) {
      if (!attachedOnce && detached !== undefined) return authorizeDetached(call, detached);
      // No current snapshot (the daemon went away): nothing is decided from an old one.
      const attached = current ?? (await attachmentWithin(gapWaitMs, call.signal));
      if (attached === undefined) return call.signal.aborted ? cancelled : gapRefusal(call);
      const verdict = evaluateToolPolicy(
        attached.snapshot,
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
          message: describeDenial('policy', { server: call.server, tool: call.tool, key: verdict.key ?? 'policy.default', configPath: attached.configPath }),
        };
      }
      return authorizeWithDaemon(call, attached, local);
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
      daemonCall('calls.finish', params).catch((error: unknown) =>
        logger.warn('could not report a finished call to the daemon; a restarted daemon audits it as uncertain', { callId, error: errorText(error) }),
      );
    },
    toolsListed(server, tools) {
      // Until a daemon is attached, the fallback's own check speaks for the configuration it decides by.
      if (!attachedOnce) detached?.fallback.toolsListed?.(server, tools);
      listedTools.set(server, [...tools]);
      checkUnlistedTools();
    },
    async close() {
      closed = true;
      wakeReconnect?.();
      notifyAttachmentWaiters();
      const attached = current;
      // Bounded: a daemon that stopped reading must not keep the gateway from exiting.
      let handle: unknown;
      const giveUp = new Promise<void>((resolve) => (handle = timers.setTimeout(resolve, CLOSE_WAIT_MS)));
      try {
        await Promise.race([
          (async () => {
            await flush();
            await attached?.client.call('sessions.end', { sessionId });
          })(),
          giveUp,
        ]);
      } catch {
        // The daemon may be gone already; its timeouts resolve what is left.
      } finally {
        timers.clearTimeout(handle);
      }
      if (queue.length > 0) logger.warn('the gateway closed with settled calls the daemon was never told of', { count: queue.length });
      attached?.client.close();
    },
  };
  return gate;
}
