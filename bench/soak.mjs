// `npm run soak` (issue 35 item 5): a bounded soak of a real daemon in a temp
// ASSENT_HOME, default 10 minutes (`--duration 60s`, or SOAK_DURATION=90s). It
// drives, all at once: agent hooks of every kind (Claude Code, Codex and Gemini
// CLI event shapes; allowed, denied, asking a person who approves or denies),
// bursts of gateway calls with 32 in flight through a real `assent mcp` in front
// of a fake upstream, an operator deciding every approval from the CLI (a typed
// code in a real terminal) and from the web API (a bearer token) in turn, audit
// export to an HTTPS webhook receiver that goes down and comes back, and a daemon
// restart every few minutes, graceful and kill -9 in turn. It samples the
// daemon's (and the gateway's) resident memory and open descriptors from /proc,
// and heap and event-loop delay from `daemon.status`, and then judges:
// - correctness: 0 audit gaps (`assent audit verify`), 0 lost or doubled effects
//   (the upstream's log and the agents' effects file against the answers and the
//   audit), nothing run that was denied, every decision audited as made, every
//   exported (hostId, seq) delivered, descriptors back to their baseline;
// - resources: RSS growth ≤ 10 % over a daemon's life after warm-up, event-loop
//   delay p99 ≤ 50 ms.
// It prints a summary and writes everything (series included) to
// bench/results/soak-<timestamp>.json. test/integration/faults/soak.test.ts runs
// 60 s of it and asserts the correctness verdicts only.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runApprover, mintToken } from './soak/approver.mjs';
import { connectGateway, driveGateway, IN_FLIGHT } from './soak/gateway.mjs';
import { CLI_ENTRY, SoakHome, auditLines, runCli, sleep, soakConfig, ROOT } from './soak/home.mjs';
import { driveHooks, runHook, shellEvent } from './soak/hooks.mjs';
import { makeLoopbackCertificate, startWebhookReceiver } from './soak/receiver.mjs';
import { judgeApprovals, judgeExports, judgeGateway, judgeHooks, KILL_WINDOW_MS, rssGrowth } from './soak/verdicts.mjs';

export const TARGETS = { rssGrowth: 0.1, eventLoopP99Ms: 50 };
/** The daemon's event-loop window (daemon.status eventLoop.windowMs). */
const EVENT_LOOP_WINDOW_MS = 10_000;
/** Long enough that the receiver has closed its idle keep-alive connections (after 1 s): the idle descriptor count is comparable. */
const IDLE_SETTLE_MS = 3000;

/** "10m", "60s", "90000" (ms) → ms. */
export function parseDuration(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text).trim());
  if (match === null) throw new Error(`not a duration: ${text} (say 60s, 10m or 90000)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms'];
  return Math.round(Number(match[1]) * unit);
}

/** The soak's rates and periods for a run of `durationMs`: moderate, for a 2-core machine. */
export function soakPlan(durationMs, overrides = {}) {
  const long = durationMs >= 300_000;
  return {
    durationMs,
    restartEveryMs: Math.min(150_000, Math.floor(durationMs / 3)),
    outageEveryMs: Math.min(60_000, Math.floor(durationMs / 3)),
    outageMs: Math.min(15_000, Math.floor(durationMs / 8)),
    sampleMs: long ? 5000 : 2000,
    warmupMs: Math.min(30_000, Math.floor(Math.min(150_000, durationMs / 3) / 4)),
    hookWorkers: long ? 3 : 2,
    hookPauseMs: 200,
    hookMix: { allow: 5, deny: 2, 'ask-yes': 1, 'ask-no': 1 },
    gatewayPerBurst: long ? 1000 : 320,
    gatewayEveryMs: 4000,
    ...overrides,
  };
}

function procStats(pid) {
  if (pid === undefined || pid === null) return { rssMb: NaN, fds: NaN };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
    // A process that has exited but is not reaped yet has no VmRSS and no descriptors: not a sample.
    if (!Number.isFinite(rssKb)) return { rssMb: NaN, fds: NaN };
    return { rssMb: Math.round((rssKb / 1024) * 10) / 10, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return { rssMb: NaN, fds: NaN };
  }
}

/** One connection to the daemon, made again after it closed (a restart). */
function daemonConnection(home) {
  let client;
  let connecting;
  const get = async () => {
    if (client !== undefined && !client.closed) return client;
    connecting ??= (async () => {
      const { DaemonClient: Client } = await import(join(ROOT, 'dist', 'heads', 'daemon', 'rpcClient.js'));
      client = await Client.connect({ socketPath: home.socket, autoSpawn: false, timeoutMs: 2000 });
      return client;
    })().finally(() => (connecting = undefined));
    return connecting;
  };
  return {
    get,
    async status() {
      return (await get()).call('daemon.status', {});
    },
    close() {
      client?.close();
      client = undefined;
    },
  };
}

/** Runs the soak; resolves with the report (also written to bench/results unless `write` is false). */
export async function runSoak(options = {}) {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing; run \`npm run build\` first`);
  const plan = soakPlan(options.durationMs ?? 600_000, options.plan);
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const { digestOf } = await import(join(ROOT, 'dist', 'core', 'base', 'canonical.js'));
  const home = new SoakHome();
  const certificate = await makeLoopbackCertificate();
  const key = `soak-${Math.random().toString(36).slice(2)}-0123456789abcdef0123456789abcdef`;
  const secretFile = join(home.root, 'webhook.key');
  const caFile = join(home.root, 'ca.pem');
  writeFileSync(secretFile, key, { mode: 0o600 });
  writeFileSync(caFile, certificate.cert);
  const receiver = await startWebhookReceiver(key, certificate);
  const upstreamLog = join(home.root, 'upstream.log');
  const effectsFile = join(home.root, 'effects.log');
  home.writeConfig(soakConfig({ upstreamLog, receiver, secretFile, caFile }));

  const t0 = performance.now();
  const now = () => Math.round((performance.now() - t0) / 100) / 10;
  const samples = [];
  const lifetimes = [];
  const restarts = [];
  const outages = [];
  const daemon = daemonConnection(home);
  let gateway;
  let failed = true;
  const timers = [];
  try {
    const beginLifetime = async () => {
      const started = await home.startDaemon();
      lifetimes.push({ index: lifetimes.length, pid: started.pid, startedAtS: now() });
    };
    await beginLifetime();
    const token = await mintToken(home.env, home.root);
    let web = { pid: undefined, url: undefined };
    const webUrl = async () => {
      const pid = home.daemon?.pid;
      if (web.pid !== pid || web.url === undefined) web = { pid, url: (await daemon.status()).web.url };
      return web.url;
    };
    gateway = await connectGateway(home.env);
    log(`soak: ${plan.durationMs / 1000} s, home ${home.home}, daemon ${home.daemon.pid}, gateway ${gateway.pid}, receiver ${receiver.url}`);

    // Warm every path once, then let it go idle: the baseline of descriptors.
    await gateway.client.callTool({ name: 'echo', arguments: { n: -1 } });
    await runHook(['claude-code'], shellEvent('claude-code', 'echo soak-allow-warm', 'warm'), home.env, 30_000);
    await sleep(IDLE_SETTLE_MS);
    daemon.close();
    const baseline = { daemonFds: procStats(home.daemon.pid).fds, gatewayFds: procStats(gateway.pid).fds, atS: now() };
    const loadStartS = now();

    const load = new AbortController();
    const operator = new AbortController();
    const hooks = driveHooks({ env: home.env, effectsFile, workers: plan.hookWorkers, pauseMs: plan.hookPauseMs, mix: plan.hookMix, signal: load.signal });
    const calls = driveGateway({ client: gateway.client, perBurst: plan.gatewayPerBurst, everyMs: plan.gatewayEveryMs, signal: load.signal });
    const approver = runApprover({ env: home.env, dir: home.root, token, daemonClient: () => daemon.get(), webUrl, signal: operator.signal });

    let restarting = Promise.resolve();
    const sample = async () => {
      const pid = home.daemon?.pid;
      const entry = { t: now(), lifetime: lifetimes.length - 1, pid, ...procStats(pid), gateway: procStats(gateway.pid), hookCalls: hooks.calls.length, gatewayCalls: calls.calls.length, decisions: approver.decisions.length, receiverUp: receiver.up };
      try {
        const status = await daemon.status();
        entry.heapUsedMb = status.memory?.heapUsedMb;
        entry.heapTotalMb = status.memory?.heapTotalMb;
        entry.eventLoop = status.eventLoop === undefined ? undefined : { currentP99Ms: status.eventLoop.current.p99Ms, currentMaxMs: status.eventLoop.current.maxMs, lastWindow: status.eventLoop.lastWindow };
        entry.exportLag = status.export?.soak?.lag;
        entry.pending = status.approvals?.pendingApprovals;
      } catch {
        entry.status = 'unavailable';
      }
      samples.push(entry);
    };
    timers.push(setInterval(() => void sample(), plan.sampleMs));

    const endLifetime = async (end) => {
      const lifetime = lifetimes[lifetimes.length - 1];
      try {
        const { eventLoop } = await daemon.status();
        lifetime.eventLoop = eventLoop?.sinceStart;
        // The window under way, numbered after the last whole one.
        if (eventLoop !== undefined) lifetime.lastCurrent = { ...eventLoop.current, index: (eventLoop.lastWindow?.index ?? 0) + 1, partial: true };
      } catch {
        lifetime.eventLoop = undefined;
      }
      lifetime.endedAtS = now();
      lifetime.end = end;
    };
    const restart = async (kind) => {
      const at = now();
      await endLifetime(kind);
      daemon.close();
      const stoppedAt = performance.now();
      const exit = kind === 'graceful' ? await home.stopDaemonGracefully() : await home.killDaemon();
      await sleep(500);
      await beginLifetime();
      restarts.push({ atS: at, stoppedAt, kind, exit, downS: Math.round((now() - at) * 10) / 10 });
      log(`soak: ${now()} s restart (${kind}) → daemon ${home.daemon.pid}`);
    };
    let restartCount = 0;
    timers.push(
      setInterval(() => {
        if (load.signal.aborted) return;
        const kind = restartCount++ % 2 === 0 ? 'graceful' : 'kill -9';
        restarting = restarting.then(() => restart(kind)).catch((error) => log(`soak: restart failed: ${error.message}`));
      }, plan.restartEveryMs),
    );
    const outage = async () => {
      const at = now();
      await receiver.stop();
      await sleep(plan.outageMs);
      await receiver.start();
      outages.push({ atS: at, downS: Math.round((now() - at) * 10) / 10 });
      log(`soak: ${now()} s receiver back after ${plan.outageMs / 1000} s down`);
    };
    let outaging = Promise.resolve();
    // Offset from the restarts so the two faults also meet apart.
    const firstOutage = setTimeout(() => {
      outaging = outage();
      timers.push(setInterval(() => (outaging = outaging.then(outage)), plan.outageEveryMs));
    }, Math.floor(plan.outageEveryMs / 2));
    timers.push(firstOutage);

    await sleep(plan.durationMs);
    log(`soak: ${now()} s load stops; settling`);
    load.abort();
    for (const timer of timers) clearInterval(timer);
    clearTimeout(firstOutage);
    await restarting;
    await outaging;
    await receiver.start();
    await Promise.all([hooks.done, calls.done]);
    operator.abort();
    await approver.done;

    // Settle: the audit holds still, the export has caught up, the receiver has it all.
    const hostId = JSON.parse(readFileSync(join(home.home, 'identity.json'), 'utf8')).hostId;
    const allDelivered = (lines) => lines.every((line) => receiver.received.has(`${hostId}:${line.seq}`));
    let audit = [];
    const settleDeadline = performance.now() + 120_000;
    let lastCount = -1;
    for (;;) {
      audit = auditLines(home.auditDir);
      let lag;
      try {
        lag = (await daemon.status()).export?.soak?.lag;
      } catch {
        lag = undefined;
      }
      const stable = audit.length === lastCount;
      lastCount = audit.length;
      if ((stable && lag === 0 && allDelivered(audit)) || performance.now() > settleDeadline) break;
      await sleep(1000);
    }
    await endLifetime('end of soak');
    daemon.close();
    await sleep(IDLE_SETTLE_MS);
    const final = { daemonFds: procStats(home.daemon.pid).fds, gatewayFds: procStats(gateway.pid).fds, atS: now() };
    audit = auditLines(home.auditDir);
    const verify = await runCli(['audit', 'verify', '--json'], home.env, 300_000);
    let verified;
    try {
      verified = JSON.parse(verify.stdout);
    } catch {
      verified = { ok: false, error: { message: `${verify.stdout}${verify.stderr}`.slice(0, 500) } };
    }

    const report = buildReport({
      plan,
      samples,
      lifetimes,
      restarts,
      outages,
      baseline,
      final,
      verified,
      hooks: judgeHooks({ calls: hooks.calls, effectsFile, audit, decisions: approver.decisions, digestOf, kills: restarts.filter((restart) => restart.kind === 'kill -9').map((restart) => restart.stoppedAt) }),
      gateway: { ...judgeGateway({ calls: calls.calls, upstreamLog, audit, digestOf }), bursts: calls.bursts(), inFlight: IN_FLIGHT },
      approvals: judgeApprovals({ decisions: approver.decisions, audit, hookCalls: hooks.calls, digestOf }),
      exports: judgeExports({ audit, receiver, hostId }),
      elapsedS: now(),
      loadStartS,
    });
    failed = !report.verdicts.filter((verdict) => verdict.correctness).every((verdict) => verdict.ok);
    if (failed) report.kept = { home: home.root, daemonStderr: home.daemon?.stderr.slice(-4000), gatewayStderr: gateway.stderr().slice(-4000) };
    if (options.write !== false) report.file = writeReport(report);
    return report;
  } finally {
    for (const timer of timers) clearInterval(timer);
    daemon.close();
    await gateway?.client.close().catch(() => undefined);
    await home.stopDaemonGracefully().catch(() => home.killDaemon());
    await receiver.stop();
    await home.cleanup({ keep: failed && options.keepOnFailure !== false });
  }
}

/**
 * Each event-loop window of a daemon's life (10 s each, the last one partial), from the samples, by its number
 * since the daemon started (the daemon's monotonic timer: the wall clock may jump), with whether it began after
 * the warm-up.
 */
function eventLoopWindows(lifetime, samples, warmupMs) {
  const windows = new Map();
  for (const sample of samples) {
    const window = sample.pid === lifetime.pid ? sample.eventLoop?.lastWindow : undefined;
    if (window !== undefined) windows.set(window.index, window);
  }
  if (lifetime.lastCurrent !== undefined && lifetime.lastCurrent.samples > 0) windows.set(lifetime.lastCurrent.index, lifetime.lastCurrent);
  return [...windows.values()].sort((a, b) => a.index - b.index).map((window) => ({ ...window, afterWarmup: (window.index - 1) * EVENT_LOOP_WINDOW_MS >= warmupMs }));
}

function buildReport({ plan, samples, lifetimes, restarts, outages, baseline, final, verified, hooks, gateway, approvals, exports, elapsedS, loadStartS }) {
  const warmupS = plan.warmupMs / 1000;
  const worst = (values) => (values.length === 0 ? undefined : Math.max(...values));
  for (const lifetime of lifetimes) {
    const own = samples.filter((sample) => sample.pid === lifetime.pid);
    lifetime.rss = rssGrowth(own, lifetime.startedAtS, warmupS);
    lifetime.heapUsed = rssGrowth(own, lifetime.startedAtS, warmupS, 'heapUsedMb');
    const windows = eventLoopWindows(lifetime, samples, plan.warmupMs);
    lifetime.eventLoopWindows = windows;
    lifetime.eventLoopP99AfterWarmupMs = worst(windows.filter((window) => window.afterWarmup).map((window) => window.p99Ms));
  }
  const gatewayRss = rssGrowth(
    samples.map((sample) => ({ t: sample.t, rssMb: sample.gateway.rssMb })),
    loadStartS,
    warmupS,
  );
  const worstGrowth = worst([...lifetimes.map((lifetime) => lifetime.rss?.growth), gatewayRss?.growth].filter((growth) => growth !== undefined));
  const worstP99 = worst(lifetimes.map((lifetime) => lifetime.eventLoopP99AfterWarmupMs).filter((value) => value !== undefined));
  const worstP99WithStart = worst(lifetimes.map((lifetime) => lifetime.eventLoop?.worstWindowP99Ms).filter((value) => value !== undefined));
  const under = (values) => (values.length === 0 ? undefined : { min: Math.min(...values), max: Math.max(...values) });
  const audit = verified?.data ?? verified;
  const effectViolations = { ...prefix('hook', hooks.violations), ...prefix('gateway', gateway.violations) };
  const lostOrDoubled = Object.values(effectViolations).reduce((sum, count) => sum + count, 0);
  const verdicts = [
    { name: 'audit gaps (assent audit verify)', value: audit?.ok === true ? 0 : 1, target: '0', ok: audit?.ok === true, correctness: true },
    { name: 'lost, doubled, unaudited or wrongly run effects (hook + gateway)', value: lostOrDoubled, target: '0', ok: lostOrDoubled === 0, correctness: true },
    { name: `allowed hook calls run whose audit line a kill -9 lost (answered ≤ ${KILL_WINDOW_MS} ms before it)`, value: hooks.lostAtKill.count, target: '0 (a known gap: not asserted)', ok: hooks.lostAtKill.count === 0, correctness: false },
    { name: 'decisions not audited as made', value: approvals.violations.mismatched + approvals.violations.unaudited, target: '0', ok: approvals.violations.mismatched + approvals.violations.unaudited === 0, correctness: true },
    { name: 'exported (hostId, seq) not delivered', value: exports.missing, target: '0', ok: exports.missing === 0 && exports.auditLines > 0, correctness: true },
    { name: 'daemon descriptors after settle over baseline', value: final.daemonFds - baseline.daemonFds, target: '≤ 0', ok: final.daemonFds <= baseline.daemonFds, correctness: true },
    { name: 'gateway descriptors after settle over baseline', value: final.gatewayFds - baseline.gatewayFds, target: '≤ 0', ok: final.gatewayFds <= baseline.gatewayFds, correctness: true },
    { name: 'restarts (graceful and kill -9)', value: restarts.length, target: '≥ 1', ok: restarts.length >= 1, correctness: true },
    { name: 'RSS growth after warm-up (worst daemon life or the gateway)', value: worstGrowth, target: `≤ ${TARGETS.rssGrowth}`, ok: worstGrowth !== undefined && worstGrowth <= TARGETS.rssGrowth, correctness: false },
    { name: 'event-loop delay p99 after warm-up, ms (worst 10 s window)', value: worstP99, target: `≤ ${TARGETS.eventLoopP99Ms}`, ok: worstP99 !== undefined && worstP99 <= TARGETS.eventLoopP99Ms, correctness: false },
    { name: 'event-loop delay p99 with start-up, ms (worst 10 s window)', value: worstP99WithStart, target: '(report)', ok: undefined, correctness: false },
  ];
  const daemonFdsUnderLoad = under(samples.map((sample) => sample.fds).filter(Number.isFinite));
  return {
    kind: 'soak',
    node: process.version,
    cpus: cpus().length,
    startedAt: new Date(Date.now() - elapsedS * 1000).toISOString(),
    elapsedS,
    plan,
    verdicts,
    descriptors: { baseline, final, daemonUnderLoad: daemonFdsUnderLoad, gatewayUnderLoad: under(samples.map((sample) => sample.gateway.fds).filter(Number.isFinite)) },
    memory: { gateway: gatewayRss, lifetimes: lifetimes.map((lifetime) => ({ pid: lifetime.pid, rss: lifetime.rss, heapUsed: lifetime.heapUsed })) },
    lifetimes,
    restarts,
    outages,
    audit,
    hooks,
    gateway,
    approvals,
    exports,
    samples,
  };
}

const prefix = (name, counts) => Object.fromEntries(Object.entries(counts).map(([key, value]) => [`${name}.${key}`, value]));

function writeReport(report) {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** The report's human summary. */
export function summarize(report) {
  const out = [];
  const fmt = (value) => (typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(3)) : String(value ?? '-'));
  out.push(`soak ${report.elapsedS} s on ${report.cpus} cores: ${report.hooks.calls} hook calls, ${report.gateway.calls} gateway calls (${report.gateway.bursts} bursts, ${report.gateway.inFlight} in flight), ${report.approvals.decided} decisions, ${report.restarts.length} restarts, ${report.outages.length} receiver outages, ${report.exports.auditLines} audit lines`);
  const width = Math.max(...report.verdicts.map((verdict) => verdict.name.length));
  for (const verdict of report.verdicts) out.push(`  ${verdict.ok === undefined ? '   ' : verdict.ok ? 'ok ' : 'NO '} ${verdict.name.padEnd(width)}  ${fmt(verdict.value).padStart(8)}  (target ${verdict.target}${verdict.correctness ? '' : ', report only in npm test'})`);
  for (const lifetime of report.lifetimes) {
    out.push(
      `  daemon ${lifetime.pid}: ${lifetime.startedAtS}–${lifetime.endedAtS} s (${lifetime.end}); RSS ${fmt(lifetime.rss?.afterWarmupMb)} → ${fmt(lifetime.rss?.endMb)} MB, heap used ${fmt(lifetime.heapUsed?.afterWarmupMb)} → ${fmt(lifetime.heapUsed?.endMb)} MB; event loop p99 after warm-up ≤ ${fmt(lifetime.eventLoopP99AfterWarmupMs)} ms (with start-up ${fmt(lifetime.eventLoop?.worstWindowP99Ms)}), max ${fmt(lifetime.eventLoop?.maxMs)} ms`,
    );
  }
  out.push(`  gateway RSS ${fmt(report.memory.gateway?.afterWarmupMb)} → ${fmt(report.memory.gateway?.endMb)} MB; descriptors daemon ${report.descriptors.baseline.daemonFds} → ${report.descriptors.final.daemonFds} (under load ${fmt(report.descriptors.daemonUnderLoad?.min)}–${fmt(report.descriptors.daemonUnderLoad?.max)}), gateway ${report.descriptors.baseline.gatewayFds} → ${report.descriptors.final.gatewayFds}`);
  out.push(`  exports: ${report.exports.delivered} delivered of ${report.exports.auditLines}, ${report.exports.duplicates} duplicates, ${report.exports.missing} missing`);
  out.push(`  hooks: ${JSON.stringify(report.hooks.answers)}`);
  out.push(`  gateway: ${JSON.stringify(report.gateway.answers)}`);
  out.push(`  decisions: ${JSON.stringify(report.approvals.byChannel)}; failed ${report.approvals.refused}; on orphaned approvals ${report.approvals.orphaned.decided} (${report.approvals.orphaned.audited} audited)`);
  if (report.file !== undefined) out.push(`written ${report.file}`);
  if (report.kept !== undefined) out.push(`state kept for inspection in ${report.kept.home}`);
  return out.join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--duration');
  const inline = process.argv.find((arg) => arg.startsWith('--duration='));
  const text = inline?.slice('--duration='.length) ?? (flag === -1 ? undefined : process.argv[flag + 1]) ?? process.env.SOAK_DURATION ?? '10m';
  const report = await runSoak({ durationMs: parseDuration(text) });
  console.log(summarize(report));
  process.exitCode = report.verdicts.every((verdict) => verdict.ok !== false) ? 0 : 1;
}
