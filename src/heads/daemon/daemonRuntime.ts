// The daemon's composition root: builds the journal, audit log, pinned config,
// event bus, notifier, the approval and proof services, every operation over
// them, and the HTTP head, handing each what it needs. Nothing below the heads
// assembles anything. Everything with a lifetime is closed by a shutdown hook.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../core/config/config.js';
import { AssentError } from '../../core/base/errors.js';
import { loadConfigFile } from '../../journal/configFile.js';
import { pinFromJournal, pinWrites, PINNED_CONFIG_KEY, type InvalidConfirmedConfig, type StoredPin } from '../../journal/confirmedConfig.js';
import { hostIdentityOf } from '../../journal/hostIdentity.js';
import { refuseLostJournal, refuseTornAuditTail } from '../../journal/stateDamage.js';
import { Journal } from '../../journal/journal.js';
import { sqliteStoreParts } from '../../journal/sqliteStore.js';
import { composeStore, type Store, type StoreParts } from '../../journal/store.js';
import type { DaemonContext } from '../../operations/daemonContext.js';
import { daemonOperations } from '../../operations/daemonOperations.js';
import { isWildcardHost, machineAddresses, startHttpHead, type HttpHead } from '../http/httpServer.js';
import type { TlsMaterial } from '../http/tlsCertificate.js';
import { isLoopbackListen, parseListen } from '../../core/config/webConfig.js';
import { WebAuth } from '../../service/webAuth.js';
import { agentOperations } from '../../operations/agentOperations.js';
import { approvalOperations, eventMatches } from '../../operations/approvalOperations.js';
import { configOperations } from '../../operations/configOperations.js';
import { policyOperations } from '../../operations/policyOperations.js';
import { AuditSpoolReader, spoolDirOf } from '../../operations/auditSpool.js';

/** How often the daemon reads spool files no gateway told it of (a hook's refusals). */
const SPOOL_SWEEP_MS = 30_000;
import type { Operation } from '../../operations/operation.js';
import { webOperations } from '../../operations/webOperations.js';
import { proofOperations } from '../../operations/proofOperations.js';
import { passkeyOperations } from '../../operations/passkeyOperations.js';
import { AgentActionService } from '../../service/agentActions.js';
import { ApprovalService, realTimers, type PinnedConfig } from '../../service/approvalService.js';
import { AuditMirror } from '../../service/auditMirror.js';
import { ProofService } from '../../service/proofService.js';
import { systemClock } from '../../service/systemClock.js';
import type { StorageGuard } from '../../service/storageGuard.js';
import { AuditLog, type WrittenLine } from '../../journal/auditLog.js';
import { readAuditLines } from '../../journal/auditReaders.js';
import type { Notifier } from '../../channels/notifier.js';
import type { RandomBytes } from '../../core/base/ids.js';
import { createAuditExportRuntime } from './auditExportRuntime.js';
import { wireStorage } from './storageWiring.js';
import { EventBus } from '../../service/eventBus.js';
import { registerSecret } from '../../service/logger.js';
import {
  registerStatus,
  watchConfigFile,
  wireAgents,
  wireNotifier,
  wireWebAuth,
  type ApprovalRuntimeOptions,
  type LateBindings,
  type RuntimeBase,
} from './runtimeWiring.js';

export type { ApprovalRuntimeOptions } from './runtimeWiring.js';


/** The approval page's static files: web/ at the package root, three levels above src/heads/daemon or dist/heads/daemon. */
export const WEB_ROOT = fileURLToPath(new URL('../../../web/', import.meta.url));

/** Records the configuration the operator confirmed, so a restart runs it again (R-CFG-4). */
export function storePinnedConfig(journal: Journal, pin: StoredPin): void {
  for (const [key, value] of pinWrites(journal.readMeta(PINNED_CONFIG_KEY), pin)) journal.writeMeta(key, value);
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
  if (stored !== undefined) return pinFromJournal(stored, path, journal.path);
  const loaded = loadConfigFile(path);
  storePinnedConfig(journal, { revision: loaded.revision, text: loaded.text ?? null });
  return { config: loaded.config, revision: loaded.revision, path };
}

export interface ApprovalRuntime {
  service: ApprovalService;
  agents: AgentActionService;
  /** The local journal.db: it keeps this host's pinned configuration (R-CFG-4), and in SQLite mode everything else too. */
  journal: Journal;
  /** Where approvals, proofs, events, rules and tokens live (R-TEAM-1). */
  store: Store;
  /** Settles once leftover effects are reconciled, rules loaded and pending approvals restored; nothing is served before. */
  ready: Promise<void>;
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


function openBase(ctx: DaemonContext, options: ApprovalRuntimeOptions, check = false): RuntimeBase {
  const clock = options.clock ?? systemClock;
  const journal = Journal.open(ctx.paths.journal, { clock, check });
  const pinned = pinConfig(ctx.paths.config, journal);
  // R-TEAM-3: this host's id and label, fixed for the daemon's lifetime; local decisions are `<os user>@<host.name>`.
  const host = hostIdentityOf(ctx.paths, pinned.config);
  ctx.principal = host.principal;
  ctx.status['host'] = () => ({ id: host.hostId, name: host.name, principal: host.principal });
  return { clock, journal, pinned, host };
}

/**
 * The runtime over the embedded journal, built at once (in-process tests use
 * it); `ready` settles when it has caught up with what a previous run left.
 */
export function createApprovalRuntime(ctx: DaemonContext, options: ApprovalRuntimeOptions = {}): ApprovalRuntime {
  const base = openBase(ctx, options);
  return assembleRuntime(ctx, options, base, composeStore(sqliteStoreParts(base.journal, base.host.hostId)));
}

/**
 * The daemon's runtime: on the store its pinned configuration names (the
 * journal connection is part of it, R-TEAM-6), ready before anything is served.
 * A team database that cannot be reached stops the start with `unavailable`,
 * naming it without its password (R-TEAM-7).
 */
export async function openApprovalRuntime(ctx: DaemonContext, options: ApprovalRuntimeOptions = {}): Promise<ApprovalRuntime> {
  // Damaged state stops the start, naming the file and its repair (stateDamage.ts says why): a torn audit
  // tail, a journal.db emptied after use, and (Journal.open's quick_check) a journal SQLite cannot read.
  refuseTornAuditTail(ctx.paths.auditDir);
  refuseLostJournal(ctx.paths);
  const base = openBase(ctx, options, true);
  let store: Store;
  try {
    store = composeStore(await openStoreParts(ctx, base));
  } catch (error) {
    base.journal.close();
    throw error;
  }
  const runtime = assembleRuntime(ctx, options, base, store);
  await runtime.ready;
  return runtime;
}

/** Each concern of the store the pinned configuration names: the embedded journal, or the team database. */
async function openStoreParts(ctx: DaemonContext, base: RuntimeBase): Promise<StoreParts> {
  const journalConfig = base.pinned.config.journal;
  if (journalConfig.kind !== 'postgres') return sqliteStoreParts(base.journal, base.host.hostId);
  const [{ resolveDatabaseUrl }, { openPostgresStoreParts }] = await Promise.all([
    import('../../journal/postgres/databaseUrl.js'),
    import('../../journal/postgres/postgresStore.js'),
  ]);
  const database = resolveDatabaseUrl(journalConfig);
  // The last line of defence: nothing logs the URL, but the logger masks its password anyway.
  for (const secret of database.secrets) registerSecret(secret);
  const logger = ctx.logger.child({ component: 'team-database' });
  const parts = await openPostgresStoreParts({
    database,
    hostId: base.host.hostId,
    now: () => base.clock.now(),
    log: (level, message, fields) => logger[level](message, fields),
  });
  logger.info('using the team database', { database: database.display, hostId: base.host.hostId });
  return parts;
}

// The audit log and the approval service are built here, in the composition root, and nowhere else (R-ARCH-3).

/** The audit side (R-AUD-*, R-TEAM-4): the team mirror, the export sinks with their metrics, and the audit log feeding both. */
function wireAudit(ctx: DaemonContext, options: ApprovalRuntimeOptions, base: RuntimeBase, store: Store, pendingApprovals: () => number) {
  const { clock, pinned, host } = base;
  // R-TEAM-4: in team mode every line of this host's chain is also a row of the shared `audit` table.
  const mirror = store.shared ? new AuditMirror({ store, timers: options.timers ?? realTimers, logger: ctx.logger.child({ component: 'audit-mirror' }) }) : undefined;
  // R-AUD-4..6: export sinks read the day files forward from their cursors; metrics count each line written.
  const exports = createAuditExportRuntime({
    sinks: pinned.config.audit.export,
    auditDir: ctx.paths.auditDir,
    cursors: store,
    host: { id: host.hostId, name: host.name },
    timers: options.timers ?? realTimers,
    now: () => clock.now(),
    logger: ctx.logger.child({ component: 'audit-export' }),
    pending: pendingApprovals,
    // No sink reads past the last line synced: a batch the disk refused is cut back out of the file (issue 35).
    durableSeq: () => audit.durableSeq(),
  });
  // Issue 35: while the state directory's device takes no writes, no call is allowed; the audit log holds its records.
  const storage = wireStorage(ctx, base, options.timers ?? realTimers, () => audit);
  ctx.status['storage'] = () => storage.guard.status();
  const audit = new AuditLog({
    dir: ctx.paths.auditDir,
    clock,
    retentionDays: pinned.config.auditRetentionDays,
    onFailure: (error) => storage.auditFailed(error),
    onRecovered: (info) => storage.auditRecovered(info),
    onWritten: (lines: readonly WrittenLine[]) => {
      mirror?.add(lines);
      exports.written(lines);
    },
    neededFrom: () => exports.exporter.neededFrom(),
  });
  ctx.status['export'] = () => exports.exporter.status();
  const unwatchMirror =
    mirror === undefined
      ? undefined
      : store.watch((change) => {
          if (change.kind === 'connection' && change.state === 'restored') mirror.kick();
        });
  audit.prune();
  // Calls gateways settled and spooled but no daemon read (a gateway killed -9, a daemon that stopped): audited now, once.
  const spool = new AuditSpoolReader({ append: (record) => audit.append(record), flushed: () => audit.durable(), principal: ctx.principal, now: () => clock.now(), logger: ctx.logger.child({ component: 'audit-spool' }) });
  spool.ingestDir(spoolDirOf(ctx.paths.home));
  // A hook that found no daemon (or was refused by this one before it decided) spooled its refusal: read within half a minute.
  const sweep = setInterval(() => spool.ingestDir(spoolDirOf(ctx.paths.home)), SPOOL_SWEEP_MS);
  sweep.unref();
  // Lines written while this host was away from the database (or before it joined the team) are copied first.
  const catchUp = async (): Promise<void> => {
    if (mirror !== undefined) mirror.add(readAuditLines(ctx.paths.auditDir, await store.lastAuditSeq()));
  };
  const close = async (): Promise<void> => {
    clearInterval(sweep);
    await audit.close();
    await exports.exporter.close();
    unwatchMirror?.();
    await mirror?.flush();
  };
  return { mirror, exports, audit, spool, catchUp, close, storage: storage.guard };
}

/** The proof service (R-J-*) and the approval service over the store. */
function wireApprovals(
  ctx: DaemonContext,
  options: ApprovalRuntimeOptions,
  base: RuntimeBase,
  parts: { store: Store; audit: AuditLog; bus: EventBus; notifier: Notifier; random: RandomBytes; late: LateBindings; storage: StorageGuard },
): { service: ApprovalService; proofs: ProofService } {
  const { clock, pinned, host } = base;
  const { store, audit, bus, notifier, random, late, storage } = parts;
  const proofs = new ProofService({
    store,
    audit,
    bus,
    clock,
    random,
    logger: ctx.logger.child({ component: 'proofs' }),
    principal: ctx.principal,
    // R-TEAM-6: in team mode a proof belongs to the team, so any host may consume it.
    ...(store.shared ? { proofPrincipal: `team:${store.instanceId}` } : {}),
    ttlSeconds: () => late.config().approvals.proofTtlSeconds,
  });
  const serviceOptions: ConstructorParameters<typeof ApprovalService>[0] = {
    store,
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
    storage,
  };
  if (options.timers !== undefined) serviceOptions.timers = options.timers;
  const service = new ApprovalService(serviceOptions);
  late.config = () => service.config.config;
  return { service, proofs };
}

/** The HTTP head (R-WEB-1, R-REM-2): started on demand, moved by a confirmed reload, its state in `daemon status`. */
function wireHttp(
  ctx: DaemonContext,
  base: RuntimeBase,
  parts: { service: ApprovalService; webAuth: WebAuth; bus: EventBus; exports: ReturnType<typeof createAuditExportRuntime>; late: LateBindings },
) {
  const { service, webAuth, bus, exports, late } = parts;
  let http: Promise<HttpHead> | undefined;
  let httpError: string | undefined;
  let httpHead: HttpHead | undefined;
  let tls: TlsMaterial | undefined;
  late.pageUrl = () => httpHead?.url;
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
          // A reload whose address could not be bound leaves the page here, and says why.
          ...(httpError === undefined ? {} : { error: httpError }),
        }
      : { url: null, error: httpError ?? 'not started' };

  /** R-REM-2: the certificate for `web.tls`, naming the listen host or, for a wildcard listen, every address of this machine. */
  const tlsFor = async (web: Config['web']): Promise<TlsMaterial | undefined> => {
    if (web.tls === undefined) return undefined;
    const host = parseListen(web.listen)?.host ?? '';
    const hosts = isWildcardHost(host) ? machineAddresses() : [host, 'localhost', '127.0.0.1', '::1'];
    // Loaded only for a page served over TLS: the certificate code is no weight on a loopback page.
    const { loadTlsMaterial } = await import('../http/tlsCertificate.js');
    return loadTlsMaterial(web.tls, { stateDir: ctx.paths.home, hosts, now: () => base.clock.now() });
  };
  /** Binds `web.listen` with its certificate and the app over `registry`; rejects when the address cannot be bound. */
  const startHead = async (web: Config['web'], registry: () => readonly Operation[]): Promise<{ head: HttpHead; material: TlsMaterial | undefined }> => {
    const httpLogger = ctx.logger.child({ head: 'http' });
    const material = await tlsFor(web);
    if (material !== undefined) ctx.logger.info('web page certificate', { source: material.source, fingerprint: material.fingerprint });
    const head = await startHttpHead(
      web.listen,
      // The app (and the web framework) loads at the page's first request (httpServer.ts).
      async (address, ownAddresses, connections) =>
        (await import('../http/httpApp.js')).createHttpApp({
          connections,
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
          metrics: {
            render: () => exports.metrics.render(),
            contentType: exports.metrics.contentType,
            // Without a token only on loopback, and not behind a proxy, whose requests come from loopback too.
            open: () => isLoopbackListen(service.config.config.web.listen) && service.config.config.web.publicUrl === undefined,
          },
        }),
      material === undefined ? { logger: httpLogger } : { logger: httpLogger, tls: { cert: material.cert, key: material.key } },
    );
    return { head, material };
  };
  /** What the page is served with now: its listen address and TLS setting, and the registry it serves. */
  let serving: { web: Config['web']; registry: () => readonly Operation[] } | undefined;
  const serveHttp = async (registry: () => readonly Operation[]): Promise<HttpHead | undefined> => {
    const web = service.config.config.web;
    serving = { web, registry };
    http ??= startHead(web, registry).then(({ head, material }) => {
      tls = material;
      return head;
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
  /**
   * A confirmed reload that changes `web.listen` or `web.tls` moves the page
   * (issue 20): the new listener is bound first, and only once it is up is the
   * old one closed; if it cannot be bound, the page stays where it was and
   * `daemon status` says why.
   */
  let rebinding = Promise.resolve();
  const rebindHttp = (): Promise<void> => {
    rebinding = rebinding.then(async () => {
      const current = serving;
      const web = service.config.config.web;
      if (current === undefined || (current.web.listen === web.listen && JSON.stringify(current.web.tls) === JSON.stringify(web.tls))) return;
      const old = httpHead;
      try {
        const { head, material } = await startHead(web, current.registry);
        serving = { web, registry: current.registry };
        http = Promise.resolve(head);
        httpHead = head;
        tls = material;
        httpError = undefined;
        ctx.logger.info('web page moved', { url: head.url, ...(old === undefined ? {} : { was: old.url }) });
        await old?.close();
      } catch (error) {
        httpError = `${web.listen} could not be served (${(error as Error).message})${old === undefined ? '' : `; the page stays on ${old.url}`}`;
        ctx.logger.warn('web page not moved', { listen: web.listen, error: (error as Error).message });
      }
    });
    return rebinding;
  };
  const close = async (): Promise<void> => {
    const head = await http?.catch(() => undefined);
    await head?.close();
  };
  return { page, serveHttp, rebindHttp, close };
}

/**
 * The composition root's steps, in order: the store's status, the audit side,
 * the bus and notifier, the proof and approval services, start-up catch-up,
 * the agents, the configuration watch, status, web sign-in and passkeys, the
 * HTTP head, the shutdown hooks and the operations served.
 */
function assembleRuntime(ctx: DaemonContext, options: ApprovalRuntimeOptions, base: RuntimeBase, store: Store): ApprovalRuntime {
  const { clock, journal, pinned, host } = base;
  const random = options.random ?? ((n: number) => randomBytes(n));
  const late: LateBindings = { config: () => pinned.config, pageUrl: () => undefined };
  ctx.status['journal'] = () => ({ ...store.describe(), available: store.available() });
  let pendingApprovals = (): number => 0;
  const auditSide = wireAudit(ctx, options, base, store, () => pendingApprovals());
  const { audit, exports, mirror } = auditSide;
  const bus = new EventBus(store, () => clock.now(), (error) => ctx.logger.warn('an event could not be stored; it was delivered live only', { error }));
  const notifier = wireNotifier(ctx, options, base, late);
  const { service, proofs } = wireApprovals(ctx, options, base, { store, audit, bus, notifier, random, late, storage: auditSide.storage });
  pendingApprovals = () => Number(service.status()['pendingApprovals'] ?? 0);
  // R-TEAM-6: the team learns which revision this host runs, which its proofs bind.
  const announce = (revision: string): Promise<void> => store.announceHost({ name: host.name, revision, at: clock.now() });
  // R-J-5: before any call is served, effects a crash left without an outcome become uncertain (this host's only, R-TEAM-6).
  const ready = announce(pinned.revision)
    .then(auditSide.catchUp)
    .then(() => proofs.reconcile())
    .then(() => service.start())
    // Not awaited by calls: delivery runs beside them from here on.
    .then(() => void exports.exporter.start());
  const agents = wireAgents(ctx, options, base, service);
  /** Why the daemon runs fail-closed, while it still does (until a reload applies config.json). */
  const confirmedInvalid = (): InvalidConfirmedConfig | undefined =>
    pinned.invalid !== undefined && service.config.revision === pinned.revision ? pinned.invalid : undefined;
  const watcher = watchConfigFile(ctx, base, service, bus);
  const started = ready.then(() => bus.publish('daemon_started', { pid: process.pid, configRevision: pinned.revision })).then(() => undefined);
  registerStatus(ctx, base, { service, agents, mirror, confirmedInvalid });
  const { webAuth, passkeys } = wireWebAuth(ctx, options, base, { store, service, notifier, random });
  const http = wireHttp(ctx, base, { service, webAuth, bus, exports, late });

  // Registered before the service's own hook so no request reaches a closed journal.
  ctx.onShutdown(http.close);
  ctx.onShutdown(async () => {
    watcher?.close();
    await service.shutdown();
    await auditSide.close();
    await store.close();
    journal.close();
  });

  const operations = [
    ...webOperations({ auth: webAuth, page: http.page }),
    ...approvalOperations({ service, store, bus, auditDir: ctx.paths.auditDir, random, now: () => clock.now() }),
    ...agentOperations({ agents }),
    ...configOperations({
      service,
      configPath: ctx.paths.config,
      onApplied: (pin) => {
        storePinnedConfig(journal, pin);
        void http.rebindHttp();
        announce(pin.revision).catch((error: unknown) => ctx.logger.warn('could not tell the team database the new configuration revision', { error }));
      },
      confirmedInvalid,
    }),
    ...policyOperations({ service, bus, audit, principal: ctx.principal, now: () => clock.now(), spool: auditSide.spool }),
    ...proofOperations({ service, proofs, store }),
    ...passkeyOperations({ passkeys }),
  ];
  return { service, agents, journal, store, ready: started, bus, webAuth, operations, serveHttp: http.serveHttp };
}

/** Every operation the daemon serves, a plain concatenation of the families, with the HTTP head serving the same registry. */
export async function allOperations(ctx: DaemonContext): Promise<Operation[]> {
  const runtime = await openApprovalRuntime(ctx);
  const operations = [...daemonOperations(ctx), ...runtime.operations];
  void runtime.serveHttp(() => operations);
  return operations;
}
