// The daemon's composition root: builds the journal, audit log, pinned config,
// event bus, notifier, the approval and proof services, every operation over
// them, and the HTTP head, handing each what it needs. Nothing below the heads
// assembles anything. Everything with a lifetime is closed by a shutdown hook.
import { randomBytes } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { combineNotifiers, disabledNotifier, createOsNotifier, type Notifier } from '../../channels/notifier.js';
import { createPushNotifier } from '../../channels/pushNotifier.js';
import { pushTargetsOf } from '../../core/notificationsConfig.js';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import { AssentError } from '../../core/errors.js';
import type { RandomBytes } from '../../core/ids.js';
import { AuditLog } from '../../journal/auditLog.js';
import { inspectConfigFile, loadConfigFile } from '../../journal/configFile.js';
import { encodePin, pinFromJournal, PINNED_CONFIG_KEY, type InvalidConfirmedConfig, type StoredPin } from '../../journal/confirmedConfig.js';
import { hostIdentityOf } from '../../journal/hostIdentity.js';
import { Journal } from '../../journal/journal.js';
import { ProofStore } from '../../journal/proofs.js';
import type { DaemonContext } from '../../operations/daemonContext.js';
import { daemonOperations } from '../../operations/daemonOperations.js';
import { createHttpApp } from '../http/httpApp.js';
import { isWildcardHost, machineAddresses, startHttpHead, type HttpHead } from '../http/httpServer.js';
import { loadTlsMaterial, type TlsMaterial } from '../http/tlsCertificate.js';
import { parseListen } from '../../core/webConfig.js';
import { WebAuth } from '../../service/webAuth.js';
import { agentOperations } from '../../operations/agentOperations.js';
import { approvalOperations, eventMatches } from '../../operations/approvalOperations.js';
import { configOperations } from '../../operations/configOperations.js';
import { policyOperations } from '../../operations/policyOperations.js';
import type { Operation } from '../../operations/operation.js';
import { webOperations } from '../../operations/webOperations.js';
import { proofOperations } from '../../operations/proofOperations.js';
import { passkeyOperations } from '../../operations/passkeyOperations.js';
import { PasskeyService, relyingPartyOf } from '../../service/passkeys.js';
import { AgentActionService } from '../../service/agentActions.js';
import { AgentJudge } from '../../shell/agentJudge.js';
import { ProofService } from '../../service/proofService.js';
import { ApprovalService, type PinnedConfig, type Timers } from '../../service/approvalService.js';
import { EventBus } from '../../service/eventBus.js';
import { pageUrlOf } from '../../service/pushLinks.js';

export interface ApprovalRuntimeOptions {
  clock?: Clock;
  random?: RandomBytes;
  timers?: Timers;
  notifier?: Notifier;
  /** Lifetime of web pairing codes (default 120 s, R-WEB-2). */
  pairingTtlMs?: number;
}

/** The approval page's static files: web/ at the package root, three levels above src/heads/daemon or dist/heads/daemon. */
export const WEB_ROOT = fileURLToPath(new URL('../../../web/', import.meta.url));

const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };


/** Records the configuration the operator confirmed, so a restart runs it again (R-CFG-4). */
export function storePinnedConfig(journal: Journal, pin: StoredPin): void {
  journal.writeMeta(PINNED_CONFIG_KEY, encodePin(pin));
}

/**
 * The configuration a daemon runs: the revision last confirmed (stored in the
 * journal), not whatever config.json says now. Only the very first start pins
 * the file as it is; after that a changed file is reported and waits for
 * `assent config reload` — also across restarts, so stopping the daemon is no
 * way around the review (R-CFG-4). Refuses to start on an invalid file. A
 * stored revision that no longer validates (an upgrade tightened the rules)
 * does not stop the daemon: it runs fail-closed and `invalid` says why, so
 * `assent config reload` can replace it.
 */
export function pinConfig(path: string, journal: Journal): PinnedConfig & { invalid?: InvalidConfirmedConfig } {
  const stored = journal.readMeta(PINNED_CONFIG_KEY);
  if (stored !== undefined) return pinFromJournal(stored, path);
  const loaded = loadConfigFile(path);
  storePinnedConfig(journal, { revision: loaded.revision, text: loaded.text ?? null });
  return { config: loaded.config, revision: loaded.revision, path };
}

export interface ApprovalRuntime {
  service: ApprovalService;
  agents: AgentActionService;
  journal: Journal;
  bus: EventBus;
  webAuth: WebAuth;
  operations: Operation[];
  /**
   * Starts the HTTP head on `web.listen` serving the given registry (R-WEB-1).
   * Separate from construction so in-process tests need no port. A port that
   * cannot be bound is logged and reported in daemon.status; the daemon runs on.
   */
  serveHttp(operations: () => readonly Operation[]): Promise<HttpHead | undefined>;
}

export function createApprovalRuntime(ctx: DaemonContext, options: ApprovalRuntimeOptions = {}): ApprovalRuntime {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? ((n: number) => randomBytes(n));
  const journal = Journal.open(ctx.paths.journal, { clock });
  const pinned = pinConfig(ctx.paths.config, journal);
  // R-TEAM-3: this host's id and label, fixed for the daemon's lifetime; local decisions are `<os user>@<host.name>`.
  const host = hostIdentityOf(ctx.paths, pinned.config);
  ctx.principal = host.principal;
  ctx.status['host'] = () => ({ id: host.hostId, name: host.name, principal: host.principal });
  const audit = new AuditLog({
    dir: ctx.paths.auditDir,
    clock,
    retentionDays: pinned.config.auditRetentionDays,
    onFailure: (error) => ctx.logger.warn('audit write failed', { error }),
  });
  audit.prune();
  const bus = new EventBus(journal, () => clock.now());
  // Pushes read the configuration in force at each send, so a confirmed reload applies to the next one.
  let configInForce = (): Config => pinned.config;
  const notifier =
    options.notifier ??
    combineNotifiers({
      os: pinned.config.notifications.os ? createOsNotifier() : disabledNotifier,
      push: createPushNotifier({
        targets: () => pushTargetsOf(configInForce().notifications),
        host: () => host.name,
        pageUrl: () => pageUrlOf(configInForce(), httpHead?.url),
        onFailure: (target, reason) => ctx.logger.warn('push notification failed; further failures are counted in `assent daemon status`', { target, reason }),
      }),
    });
  const proofStore = ProofStore.open(ctx.paths.journal);
  let proofTtlSeconds = (): number => pinned.config.approvals.proofTtlSeconds;
  const proofs = new ProofService({
    store: proofStore,
    journal,
    audit,
    bus,
    clock,
    random,
    logger: ctx.logger.child({ component: 'proofs' }),
    principal: ctx.principal,
    ttlSeconds: () => proofTtlSeconds(),
  });
  // R-J-5: before any call is served, effects a crash left without an outcome become uncertain.
  proofs.reconcile();
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
    hostId: host.hostId,
    proofs,
  };
  if (options.timers !== undefined) serviceOptions.timers = options.timers;
  const service = new ApprovalService(serviceOptions);
  service.start();
  const judge = new AgentJudge({ env: process.env, assentHome: ctx.paths.home });
  // The bash grammar loads now, so the first shell action pays nothing for it (SPEC §14).
  judge.ready().catch((error: unknown) => ctx.logger.warn('the bash grammar could not be loaded; shell actions will fail closed', { error }));
  const agents = new AgentActionService({ approvals: service, clock, logger: ctx.logger.child({ component: 'agents' }), judge });
  proofTtlSeconds = () => service.config.config.approvals.proofTtlSeconds;
  configInForce = () => service.config.config;
  /** Why the daemon runs fail-closed, while it still does (until a reload applies config.json). */
  const confirmedInvalid = (): InvalidConfirmedConfig | undefined =>
    pinned.invalid !== undefined && service.config.revision === pinned.revision ? pinned.invalid : undefined;
  if (pinned.invalid !== undefined) ctx.logger.warn(pinned.invalid.message, { problems: pinned.invalid.problems });

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
  // Edited while no daemon ran? Say so now, not only at the next edit.
  lastSeenRevision = '';
  checkConfigFile();
  if (pinned.invalid !== undefined) {
    bus.publish('config_changed', { applied: false, pinnedRevision: pinned.revision, confirmedInvalid: pinned.invalid });
  } else if (lastSeenRevision !== pinned.revision) {
    ctx.logger.warn('config.json differs from the confirmed configuration; the daemon runs the confirmed one until `assent config reload`');
  }
  try {
    watcher = watch(dirname(ctx.paths.config), { persistent: false }, (_event, file) => {
      if (file === null || file === basename(ctx.paths.config)) checkConfigFile();
    });
  } catch (error) {
    ctx.logger.warn('cannot watch config.json for changes', { error });
  }

  bus.publish('daemon_started', { pid: process.pid, configRevision: pinned.revision });
  ctx.status['approvals'] = () => ({ ...service.status(), ...agents.status() });
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
    };
  };
  const webAuth = new WebAuth({
    tokens: journal,
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
  let http: Promise<HttpHead> | undefined;
  let httpError: string | undefined;
  let httpHead: HttpHead | undefined;
  let tls: TlsMaterial | undefined;
  /** The page as `assent web` names it: web.publicUrl when a proxy fronts it, else the bound address; and the certificate served. */
  const page = async (): Promise<{ url: string; fingerprint?: string }> => {
    if (http === undefined) throw new AssentError('unavailable', 'This daemon does not serve the web page; start it with `assent daemon run`.');
    const head = await http;
    const publicUrl = service.config.config.web.publicUrl;
    // Through a proxy the browser sees the proxy's certificate, not ours: no fingerprint to compare then.
    if (publicUrl !== undefined) return { url: publicUrl };
    return tls === undefined ? { url: head.url } : { url: head.url, fingerprint: tls.fingerprint };
  };
  ctx.status['web'] = () =>
    httpHead !== undefined
      ? {
          url: httpHead.url,
          sessions: webAuth.sessionCount,
          rememberedDevices: webAuth.rememberedDeviceCount,
          ...(tls === undefined ? {} : { fingerprint: tls.fingerprint }),
        }
      : { url: null, error: httpError ?? 'not started' };
  /** R-REM-2: the certificate for `web.tls`, naming the listen host or, for a wildcard listen, every address of this machine. */
  const tlsFor = async (web: Config['web']): Promise<TlsMaterial | undefined> => {
    if (web.tls === undefined) return undefined;
    const host = parseListen(web.listen)?.host ?? '';
    const hosts = isWildcardHost(host) ? machineAddresses() : [host, 'localhost', '127.0.0.1', '::1'];
    return loadTlsMaterial(web.tls, { stateDir: ctx.paths.home, hosts, now: () => clock.now() });
  };
  const serveHttp = async (registry: () => readonly Operation[]): Promise<HttpHead | undefined> => {
    const httpLogger = ctx.logger.child({ head: 'http' });
    const web = service.config.config.web;
    http ??= tlsFor(web).then((material) => {
      tls = material;
      if (material !== undefined) ctx.logger.info('web page certificate', { source: material.source, fingerprint: material.fingerprint });
      return startHttpHead(
        web.listen,
        (address, ownAddresses) =>
          createHttpApp({
            operations: registry,
            auth: webAuth,
            bus,
            listenAddress: address,
            web: () => service.config.config.web,
            scheme: material === undefined ? 'http' : 'https',
            ownAddresses,
            logger: httpLogger,
            webRoot: WEB_ROOT,
            eventMatches,
          }),
        material === undefined ? { logger: httpLogger } : { logger: httpLogger, tls: { cert: material.cert, key: material.key } },
      );
    });
    try {
      httpHead = await http;
      ctx.logger.info('web page listening', { url: httpHead.url });
      return httpHead;
    } catch (error) {
      httpError = (error as Error).message;
      ctx.logger.warn('web page not served', { error: httpError });
      return undefined;
    }
  };

  // Registered before the service's own hook so no request reaches a closed journal.
  ctx.onShutdown(async () => {
    const head = await http?.catch(() => undefined);
    await head?.close();
  });

  ctx.onShutdown(async () => {
    watcher?.close();
    await service.shutdown();
    await audit.close();
    proofStore.close();
    journal.close();
  });

  const operations = [
    ...webOperations({ auth: webAuth, page }),
    ...approvalOperations({ service, journal, bus, auditDir: ctx.paths.auditDir, random, now: () => clock.now() }),
    ...agentOperations({ agents }),
    ...configOperations({ service, configPath: ctx.paths.config, onApplied: (pin) => storePinnedConfig(journal, pin), confirmedInvalid }),
    ...policyOperations({ service, bus, audit, principal: ctx.principal, now: () => clock.now() }),
    ...proofOperations({ service, proofs }),
    ...passkeyOperations({ passkeys }),
  ];
  return { service, agents, journal, bus, webAuth, operations, serveHttp };
}

/** Every operation the daemon serves, a plain concatenation of the families, with the HTTP head serving the same registry. */
export function allOperations(ctx: DaemonContext): Operation[] {
  const runtime = createApprovalRuntime(ctx);
  const operations = [...daemonOperations(ctx), ...runtime.operations];
  void runtime.serveHttp(() => operations);
  return operations;
}
