// Assembles the approval side of one daemon: journal, audit log, pinned config,
// event bus, notifier and the approval service, and the operations that expose
// them. Everything with a lifetime is closed by the daemon's shutdown hook.
import { randomBytes } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { disabledNotifier, createOsNotifier, type Notifier } from '../channels/notifier.js';
import type { Clock } from '../core/clock.js';
import type { RandomBytes } from '../core/ids.js';
import { AuditLog } from '../journal/auditLog.js';
import { inspectConfigFile, loadConfigFile } from '../journal/configFile.js';
import { Journal } from '../journal/journal.js';
import type { DaemonContext } from '../heads/daemon/daemonMain.js';
import { approvalOperations } from '../operations/approvalOperations.js';
import { configOperations } from '../operations/configOperations.js';
import type { Operation } from '../operations/operation.js';
import { ApprovalService, type PinnedConfig, type Timers } from './approvalService.js';
import { EventBus } from './eventBus.js';

export interface ApprovalRuntimeOptions {
  clock?: Clock;
  random?: RandomBytes;
  timers?: Timers;
  notifier?: Notifier;
}

const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

/** Loads config.json and pins it, refusing to start on an invalid file (R-CFG-1, R-CFG-4). */
export function pinConfig(path: string): PinnedConfig {
  const loaded = loadConfigFile(path);
  return { config: loaded.config, revision: loaded.revision, path };
}

export interface ApprovalRuntime {
  service: ApprovalService;
  journal: Journal;
  bus: EventBus;
  operations: Operation[];
}

export function createApprovalRuntime(ctx: DaemonContext, options: ApprovalRuntimeOptions = {}): ApprovalRuntime {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? ((n: number) => randomBytes(n));
  const pinned = pinConfig(ctx.paths.config);
  const journal = Journal.open(ctx.paths.journal, { clock });
  const audit = new AuditLog({
    dir: ctx.paths.auditDir,
    clock,
    retentionDays: pinned.config.auditRetentionDays,
    onFailure: (error) => ctx.logger.warn('audit write failed', { error }),
  });
  audit.prune();
  const bus = new EventBus(journal, () => clock.now());
  const notifier = options.notifier ?? (pinned.config.notifications ? createOsNotifier() : disabledNotifier);
  const serviceOptions: ConstructorParameters<typeof ApprovalService>[0] = {
    journal,
    audit,
    bus,
    clock,
    random,
    notifier,
    logger: ctx.logger.child({ component: 'approvals' }),
    config: pinned,
    principal: ctx.principal,
  };
  if (options.timers !== undefined) serviceOptions.timers = options.timers;
  const service = new ApprovalService(serviceOptions);
  service.start();

  // R-CFG-4: a changed config.json is noticed and reported, never applied silently.
  let lastSeenRevision = pinned.revision;
  let watcher: FSWatcher | undefined;
  const checkConfigFile = (): void => {
    try {
      const current = inspectConfigFile(ctx.paths.config);
      if (current.revision !== lastSeenRevision) {
        lastSeenRevision = current.revision;
        if (current.revision !== service.config.revision) {
          bus.publish('config_changed', { revision: current.revision, applied: false, pinnedRevision: service.config.revision });
          ctx.logger.info('config.json changed on disk; not applied until `assent config reload` is confirmed');
        }
      }
    } catch (error) {
      ctx.logger.warn('config.json could not be read', { error });
    }
  };
  try {
    watcher = watch(dirname(ctx.paths.config), { persistent: false }, (_event, file) => {
      if (file === null || file === basename(ctx.paths.config)) checkConfigFile();
    });
  } catch (error) {
    ctx.logger.warn('cannot watch config.json for changes', { error });
  }

  bus.publish('daemon_started', { pid: process.pid, configRevision: pinned.revision });
  ctx.status['approvals'] = () => service.status();
  ctx.status['config'] = () => {
    let fileRevision: string | undefined;
    try {
      fileRevision = inspectConfigFile(ctx.paths.config).revision;
    } catch {
      fileRevision = undefined;
    }
    return { pinnedRevision: service.config.revision, fileRevision, changedOnDisk: fileRevision !== service.config.revision, path: ctx.paths.config };
  };
  ctx.onShutdown(async () => {
    watcher?.close();
    await service.shutdown();
    journal.close();
  });

  const operations = [
    ...approvalOperations({ service, journal, bus, auditDir: ctx.paths.auditDir, random, now: () => clock.now() }),
    ...configOperations({ service, configPath: ctx.paths.config }),
  ];
  return { service, journal, bus, operations };
}
