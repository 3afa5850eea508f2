// The daemon's smaller wiring steps, each wiring one concern for the
// composition root (daemonRuntime.ts `assembleRuntime`, which itself builds the
// audit log and the services, R-ARCH-3): the notifier, the agents, the watch on
// config.json, daemon status, and web sign-in with passkeys.
import { homedir } from 'node:os';
import { EventLoopDelay } from './eventLoopDelay.js';
import { hostConfiner } from './hostConfiner.js';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { combineNotifiers, disabledNotifier, createOsNotifier, type Notifier } from '../../channels/notifier.js';
import { createPushNotifier } from '../../channels/pushNotifier.js';
import type { Clock } from '../../core/base/clock.js';
import type { RandomBytes } from '../../core/base/ids.js';
import type { Config } from '../../core/config/config.js';
import { pushTargetsOf } from '../../core/config/notificationsConfig.js';
import { settingsFromNextStart } from '../../core/config/restartSettings.js';
import { inspectConfigFile } from '../../journal/configFile.js';
import type { InvalidConfirmedConfig } from '../../journal/confirmedConfig.js';
import type { hostIdentityOf } from '../../journal/hostIdentity.js';
import type { Journal } from '../../journal/journal.js';
import type { Store } from '../../journal/store.js';
import type { DaemonContext } from '../../operations/daemonContext.js';
import { AgentActionService } from '../../service/agentActions.js';
import { ApprovalService, realTimers, type PinnedConfig, type Timers } from '../../service/approvalService.js';
import { AuditMirror } from '../../service/auditMirror.js';
import type { EventBus } from '../../service/eventBus.js';
import { PasskeyService, relyingPartyOf } from '../../service/passkeys.js';
import { pageUrlOf } from '../../service/pushLinks.js';
import { WebAuth } from '../../service/webAuth.js';
import { AgentJudge } from '../../shell/agentJudge.js';

export interface ApprovalRuntimeOptions {
  clock?: Clock;
  random?: RandomBytes;
  timers?: Timers;
  notifier?: Notifier;
  /** Lifetime of web pairing codes (default 120 s, R-WEB-2). */
  pairingTtlMs?: number;
}

/** What every runtime starts from: the local journal, the configuration it pinned, and this host. */
export interface RuntimeBase {
  clock: Clock;
  journal: Journal;
  pinned: PinnedConfig & { invalid?: InvalidConfirmedConfig };
  host: ReturnType<typeof hostIdentityOf>;
}

/** What the steps wire late: read through here by what was built before them (the notifier, proof lifetimes). */
export interface LateBindings {
  /** The configuration in force: the pinned one until the approval service exists, then the service's. */
  config: () => Config;
  /** The page's URL once the HTTP head listens. */
  pageUrl: () => string | undefined;
}

/** OS and push notifications; pushes read the configuration in force at each send, so a confirmed reload applies to the next one. */
export function wireNotifier(ctx: DaemonContext, options: ApprovalRuntimeOptions, base: RuntimeBase, late: LateBindings): Notifier {
  if (options.notifier !== undefined) return options.notifier;
  return combineNotifiers({
    os: base.pinned.config.notifications.os ? createOsNotifier() : disabledNotifier,
    push: createPushNotifier({
      targets: () => pushTargetsOf(late.config().notifications),
      host: () => base.host.name,
      pageUrl: () => pageUrlOf(late.config(), late.pageUrl()),
      onFailure: (target, reason) => ctx.logger.warn('push notification failed; further failures are counted in `assent daemon status`', { target, reason }),
    }),
  });
}

/**
 * The agents' actions (hooks): the shell judge. Its bash grammar (a wasm module, about 7 MB resident) is loaded by
 * the first shell action, which waits for it once: a daemon that gates only MCP calls never holds it (SPEC §14).
 */
export function wireAgents(ctx: DaemonContext, options: ApprovalRuntimeOptions, base: RuntimeBase, service: ApprovalService): AgentActionService {
  const judge = new AgentJudge({ env: process.env, assentHome: ctx.paths.home });
  const confiner = hostConfiner({ home: homedir(), assentHome: ctx.paths.home, assentSocket: ctx.paths.socket });
  ctx.status['confinement'] = () => confiner.status();
  // R-SH-14: the sandbox is checked once, just after start (two short spawns), and the log says whether commands run confined.
  setTimeout(() => {
    const status = confiner.status();
    if (status.available) ctx.logger.info('confined runs are on', { bwrap: status.bwrap, version: status.version });
    else ctx.logger.warn('confined runs are off: commands that run project code ask a person', { reason: status.reason });
  }, 0).unref();
  return new AgentActionService({ approvals: service, clock: base.clock, logger: ctx.logger.child({ component: 'agents' }), judge, timers: options.timers ?? realTimers, confiner });
}

/** R-CFG-4: a changed config.json is noticed and reported, never applied silently; returns the watcher to close. */
export function watchConfigFile(ctx: DaemonContext, base: RuntimeBase, service: ApprovalService, bus: EventBus): FSWatcher | undefined {
  const { pinned } = base;
  if (pinned.invalid !== undefined) ctx.logger.warn(pinned.invalid.message, { problems: pinned.invalid.problems });
  let lastSeenRevision = pinned.revision;
  const checkConfigFile = (): void => {
    try {
      const current = inspectConfigFile(ctx.paths.config);
      if (current.revision !== lastSeenRevision) {
        lastSeenRevision = current.revision;
        if (current.revision !== service.config.revision) {
          void bus.publish('config_changed', { revision: current.revision, applied: false, pinnedRevision: service.config.revision });
          ctx.logger.info('config.json changed on disk; not applied until `assent config reload` is confirmed');
        }
      }
    } catch (error) {
      ctx.logger.warn('config.json could not be read', { error });
    }
  };
  // Edited while no daemon ran? Say so now, not only at the next edit.
  lastSeenRevision = '';
  checkConfigFile();
  if (pinned.invalid !== undefined) {
    void bus.publish('config_changed', { applied: false, pinnedRevision: pinned.revision, confirmedInvalid: pinned.invalid });
  } else if (lastSeenRevision !== pinned.revision) {
    ctx.logger.warn('config.json differs from the confirmed configuration; the daemon runs the confirmed one until `assent config reload`');
  }
  try {
    return watch(dirname(ctx.paths.config), { persistent: false }, (_event, file) => {
      if (file === null || file === basename(ctx.paths.config)) checkConfigFile();
    });
  } catch (error) {
    ctx.logger.warn('cannot watch config.json for changes', { error });
    return undefined;
  }
}

/** `daemon status` for the approvals, the configuration (pinned, on disk, what applies from the next start) and the event loop's delay. */
export function registerStatus(ctx: DaemonContext, base: RuntimeBase, parts: { service: ApprovalService; agents: AgentActionService; mirror: AuditMirror | undefined; confirmedInvalid: () => InvalidConfirmedConfig | undefined }): void {
  const { service, agents, mirror, confirmedInvalid } = parts;
  const eventLoop = new EventLoopDelay();
  eventLoop.start();
  ctx.onShutdown(() => eventLoop.stop());
  ctx.status['eventLoop'] = () => eventLoop.status();
  ctx.status['approvals'] = () => ({ ...service.status(), ...agents.status(), ...(mirror === undefined ? {} : { auditRows: mirror.status() }) });
  ctx.status['config'] = () => {
    let fileRevision: string | undefined;
    try {
      fileRevision = inspectConfigFile(ctx.paths.config).revision;
    } catch {
      fileRevision = undefined;
    }
    const invalid = confirmedInvalid();
    return {
      pinnedRevision: service.config.revision,
      fileRevision,
      changedOnDisk: fileRevision !== service.config.revision,
      path: ctx.paths.config,
      ...(invalid === undefined ? {} : { confirmedInvalid: invalid }),
      // Confirmed, but used from the next daemon start (journal, host.name, …).
      fromNextStart: settingsFromNextStart(base.pinned.config, service.config.config),
    };
  };
}

/** Web sign-in (bearer tokens in the store, remembered devices in this host's journal) and passkeys (R-WEB-*, R-REM-*). */
export function wireWebAuth(
  ctx: DaemonContext,
  options: ApprovalRuntimeOptions,
  base: RuntimeBase,
  parts: { store: Store; service: ApprovalService; notifier: Notifier; random: RandomBytes },
): { webAuth: WebAuth; passkeys: PasskeyService } {
  const { clock, journal } = base;
  const { store, service, notifier, random } = parts;
  const tokens = {
    instanceId: () => store.instanceId,
    insertToken: (token: Parameters<Store['insertToken']>[0]) => store.insertToken(token),
    findTokenByHash: (hash: string) => store.findTokenByHash(hash),
    getToken: (id: string) => store.getToken(id),
    listTokens: () => store.listTokens(),
    revokeToken: (id: string, at: number) => store.revokeToken(id, at),
  };
  const webAuth = new WebAuth({
    tokens,
    devices: journal,
    clock,
    random,
    deviceTtlMs: () => service.config.config.web.deviceTtlDays * 86_400_000,
    ...(options.pairingTtlMs === undefined ? {} : { pairingTtlMs: options.pairingTtlMs }),
  });
  const passkeys = new PasskeyService({
    store: journal,
    approvals: service,
    clock,
    random,
    logger: ctx.logger.child({ component: 'passkeys' }),
    notifier,
    relyingParty: () => relyingPartyOf(service.config.config.web.publicUrl),
  });
  ctx.status['passkeys'] = () => passkeys.status();
  return { webAuth, passkeys };
}
