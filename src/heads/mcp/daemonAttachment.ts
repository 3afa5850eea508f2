// The gate's attachment to the daemon: one connection at a time with its pinned
// config and policy snapshot (kept current by pushes), and the reconnect loop with backoff.
import type { Config } from '../../core/config/config.js';
import { AssentError, errorText } from '../../core/base/errors.js';
import { compilePolicy, type PolicySnapshot } from '../../core/policy/toolPolicy.js';
import type { PolicySnapshotData } from '../../operations/policyOperations.js';
import type { Logger } from '../../service/logger.js';
import type { Timers } from '../../core/base/timers.js';
import type { DaemonClient } from '../daemon/rpcClient.js';

/** The pinned configuration a daemon answers `config.get` with. */
export interface PinnedConfigData {
  config: Config;
  revision: string;
  path: string;
}

/** One daemon connection and what the gate learnt from it. */
export interface Attachment {
  client: DaemonClient;
  snapshot: PolicySnapshot;
  configPath: string;
  pinned: PinnedConfigData;
}

export interface AttachmentLoopOptions {
  logger: Logger;
  timers: Timers;
  /** Opens a new daemon connection after the old one dropped; without it a lost connection stays lost. */
  reconnect?: () => Promise<DaemonClient>;
  /** Backoff between reconnect attempts: the first wait, doubled after each failure up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** The configuration a detached gateway started with; otherwise the first attachment's counts. */
  started?: PinnedConfigData;
  /** Audit records kept for the daemon, said in the log lines. */
  auditBacklog: () => number;
  /** The daemon pushed a policy snapshot and it was adopted. */
  onPolicyUpdated: () => void;
  /** An attachment became current, after the calls waiting for one were woken. */
  onAdopted: () => void;
  /** The current attachment's connection closed (the daemon stopped or was killed). */
  onLost?: () => void;
}

export interface AttachmentLoop {
  /** The attachment calls are decided by; undefined while there is no daemon connection. */
  readonly current: Attachment | undefined;
  /** Whether any daemon connection was adopted yet; until then a detached gate decides by its fallback. */
  readonly attachedOnce: boolean;
  readonly closed: boolean;
  /** Fetches a connection's pinned config and policy and subscribes to its changes. */
  attach(next: DaemonClient): Promise<Attachment>;
  /** Makes an attachment current; called once it is complete. */
  adopt(attachment: Attachment): void;
  /** `waitFirst`: the caller just failed to connect, so the first attempt waits one backoff step too. */
  startReconnect(waitFirst?: boolean): void;
  /** The current attachment, waiting up to `ms` for a reconnect when there is none. */
  within(ms: number, signal?: AbortSignal): Promise<Attachment | undefined>;
  /** Stops reconnecting and wakes every waiting call. */
  close(): void;
}

export function createAttachmentLoop(options: AttachmentLoopOptions): AttachmentLoop {
  const { logger, timers } = options;
  const firstDelay = options.firstDelayMs;
  const maxDelay = options.maxDelayMs;

  let current: Attachment | undefined;
  let first: PinnedConfigData | undefined = options.started;
  let attachedOnce = false;
  let closed = false;
  /** Woken whenever `current` changes or the gate closes: calls waiting for a snapshot. */
  const attachmentWaiters = new Set<() => void>();
  const notifyAttachmentWaiters = (): void => {
    for (const waiter of [...attachmentWaiters]) waiter();
  };

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
        options.onPolicyUpdated();
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
    options.onAdopted();
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
    options.onLost?.();
    logger.warn(
      options.reconnect === undefined
        ? 'lost the connection to the assent daemon; every call is refused from now on (restart the MCP client)'
        : 'lost the connection to the assent daemon; refusing every call until it is back, reconnecting',
      { pendingAuditRecords: options.auditBacklog() },
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
              { attempts: attempt, revision: attachment.pinned.revision, auditRecordsKept: options.auditBacklog() },
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

  return {
    get current() {
      return current;
    },
    get attachedOnce() {
      return attachedOnce;
    },
    get closed() {
      return closed;
    },
    attach,
    adopt: adoptAttachment,
    startReconnect,
    within: attachmentWithin,
    close() {
      closed = true;
      wakeReconnect?.();
      notifyAttachmentWaiters();
    },
  };
}
