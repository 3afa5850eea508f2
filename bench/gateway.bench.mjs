// SPEC §14: allow-path cost of `assent mcp`, measured side by side in one run
// against three references that call the same upstream tool (server-everything
// `echo`) with the same SDK client: the upstream directly, a byte-copying relay
// (the floor of any Node stdio proxy) and a naive SDK proxy (SDK Server →
// SDK Client). Sequential calls are interleaved in blocks so machine noise hits
// every side alike; throughput is measured with 32 calls in flight, in rounds
// that alternate between the sides (every other round in the reverse order, so a
// change of machine load over a round hits both ends alike), each round followed by a pause of SETTLE_MS so
// work a side leaves behind (assent's audit, which waits for a burst to end and then
// goes to the daemon) is done before the next side is measured, not during it.
// A fourth reference, the least auditing proxy (refs/auditingProxy.mjs), does per call only what
// any proxy that gates and audits must: parse and re-serialize the request, match the answer by
// id, spool a digest of the arguments; it shows how much of the gap to the relay is inherent.
// BENCH_GATEWAY_LOCAL=1 adds a reference side: assent without a daemon (local gate,
// nothing audited), to show what audit costs. BENCH_GATEWAY_CPU_PROF=<dir> writes a
// CPU profile of the assent gateway (node --cpu-prof) into <dir>, to see where a call's time goes.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const assentBin = join(root, 'dist/bin/assent.js');
const everythingBin = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const upstreamArgv = [process.execPath, everythingBin, 'stdio'];

/**
 * SPEC §14: p50 overhead ≤ 2 × the relay floor's overhead + 0.05 ms; at 32 in flight, throughput ≥ 90 % of the least
 * auditing proxy's (parse, re-serialize, digest, spool: the work any auditing gateway must do) and ≥ 75 % of the byte
 * relay's (the floor of any Node stdio proxy: it parses nothing), measured in the same run. Each share is the median
 * over rounds (≥ 3) of assent's rate over the reference's in the same round, so load that changes between rounds
 * (a shared machine) cancels out.
 */
const OVERHEAD_FACTOR = 2;
const OVERHEAD_SLACK_MS = 0.05;
const AUDITING_PROXY_SHARE = 0.9;
const RELAY_SHARE = 0.75;
const MIN_ROUNDS = 3;
const IN_FLIGHT = 32;
/** Pause after each side's throughput round: the deferred audit of a burst (≤ 20 ms after it) and the daemon's write of it fit well inside. */
const SETTLE_MS = 250;

const percentile = (sorted, p) => sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
const round = (value) => Math.round(value * 1000) / 1000;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function connect(command, args, env = getDefaultEnvironment()) {
  const client = new Client({ name: 'assent-bench', version: '1.0.0' });
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  transport.stderr?.resume();
  await client.connect(transport);
  return client;
}

let sequence = 0;
const echo = (client) => client.callTool({ name: 'echo', arguments: { message: `m${sequence++}` } });

async function timeSequential(client, count, into) {
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    await echo(client);
    into.push(performance.now() - start);
  }
}

/** Calls per second with `IN_FLIGHT` calls outstanding at every moment. */
async function throughput(client, total) {
  let issued = 0;
  const start = performance.now();
  const worker = async () => {
    while (issued < total) {
      issued += 1;
      await echo(client);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return total / ((performance.now() - start) / 1000);
}

async function startDaemon(home) {
  // BENCH_DAEMON_CPU_PROF=<dir>: a CPU profile of the daemon, which shares the cores with the gateway.
  const profile = process.env.BENCH_DAEMON_CPU_PROF;
  const profiling = profile === undefined || profile === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profile)];
  const daemon = spawn(process.execPath, [...profiling, assentBin, 'daemon', 'run'], { env: { ...process.env, ASSENT_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  daemon.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 500 && !stderr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
  if (!stderr.includes('listening on')) throw new Error(`the bench daemon did not start: ${stderr}`);
  return daemon;
}

/** Rows `{ name, value, unit, target, ok }` for the bench runner. */
export async function benchGateway({ calls = 2000, block = 100, warmup = 300, rounds = 11, perRound = 4000 } = {}) {
  if (rounds < MIN_ROUNDS) throw new Error(`the gateway bench needs at least ${MIN_ROUNDS} throughput rounds (SPEC §14 medians), got ${rounds}`);
  const home = mkdtempSync(join(tmpdir(), 'assent-bench-mcp-'));
  chmodSync(home, 0o700);
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({ servers: { everything: { command: upstreamArgv[0], args: upstreamArgv.slice(1) } }, policy: { default: 'allow', destructive: 'allow' }, notifications: false }),
    { mode: 0o600 },
  );
  // The gateway runs as users run it: with a daemon, settling allow from the daemon's
  // policy snapshot and reporting each call for audit afterwards.
  const daemon = await startDaemon(home);
  const sides = [];
  try {
    sides.push({ name: 'direct', client: await connect(upstreamArgv[0], upstreamArgv.slice(1)) });
    sides.push({ name: 'relay floor', client: await connect(process.execPath, [join(root, 'bench/refs/byteRelay.mjs'), ...upstreamArgv]) });
    sides.push({ name: 'naive SDK proxy', client: await connect(process.execPath, [join(root, 'bench/refs/naiveProxy.mjs'), ...upstreamArgv]) });
    sides.push({ name: 'least auditing proxy', client: await connect(process.execPath, [join(root, 'bench/refs/auditingProxy.mjs'), ...upstreamArgv]) });
    const profile = process.env.BENCH_GATEWAY_CPU_PROF;
    const profiling = profile === undefined || profile === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profile)];
    // BENCH_GATEWAY_NODE_FLAGS: node flags for the assent side only, to try a V8 setting before building it in.
    const nodeFlags = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
    sides.push({
      name: 'assent',
      client: await connect(process.execPath, [...nodeFlags, ...profiling, assentBin, 'mcp'], { ...getDefaultEnvironment(), ASSENT_HOME: home, ASSENT_NO_AUTOSPAWN: '1' }),
    });
    if (process.env.BENCH_GATEWAY_LOCAL === '1') {
      const noDaemon = { ...getDefaultEnvironment(), ASSENT_HOME: home, ASSENT_NO_AUTOSPAWN: '1', ASSENT_SOCKET: join(home, 'no-daemon.sock') };
      sides.push({ name: 'assent without daemon (no audit)', client: await connect(process.execPath, [assentBin, 'mcp'], noDaemon) });
    }
    for (const side of sides) {
      side.ms = [];
      side.rates = [];
      await timeSequential(side.client, warmup, []);
      await throughput(side.client, perRound / 4);
    }
    for (let done = 0; done < calls; done += block) {
      for (const side of sides) await timeSequential(side.client, Math.min(block, calls - done), side.ms);
    }
    for (let r = 0; r < rounds; r += 1) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        side.rates.push(await throughput(side.client, perRound));
        await new Promise((settle) => setTimeout(settle, SETTLE_MS));
      }
    }
  } finally {
    await Promise.allSettled(sides.map((side) => side.client.close()));
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    rmSync(home, { recursive: true, force: true });
  }

  const rows = [];
  for (const side of sides) {
    side.ms.sort((a, b) => a - b);
    side.p50 = percentile(side.ms, 50);
    side.p99 = percentile(side.ms, 99);
    side.mean = side.ms.reduce((sum, v) => sum + v, 0) / side.ms.length;
    side.rate = median(side.rates);
    const report = { target: NaN, targetText: '(report)' };
    rows.push({ name: `gateway ${side.name}: p50 (n=${calls})`, value: round(side.p50), unit: 'ms', ...report });
    rows.push({ name: `gateway ${side.name}: p99`, value: round(side.p99), unit: 'ms', ...report });
    rows.push({ name: `gateway ${side.name}: mean`, value: round(side.mean), unit: 'ms', ...report });
    rows.push({ name: `gateway ${side.name}: calls/s, ${IN_FLIGHT} in flight (median of ${rounds})`, value: Math.round(side.rate), unit: 'calls/s', ...report });
  }
  const [direct, relay, naive, leastAuditing, assent, ...extra] = sides;
  const overhead = (side) => side.p50 - direct.p50;
  const relayOverhead = Math.max(0, overhead(relay));
  const overheadTarget = OVERHEAD_FACTOR * relayOverhead + OVERHEAD_SLACK_MS;
  rows.push({ name: 'gateway relay floor: p50 overhead over direct', value: round(overhead(relay)), unit: 'ms', target: NaN, targetText: '(reference)' });
  rows.push({ name: 'gateway naive SDK proxy: p50 overhead over direct', value: round(overhead(naive)), unit: 'ms', target: NaN, targetText: '(reference)' });
  rows.push({
    name: 'gateway assent: p50 overhead over direct (allow path)',
    value: round(overhead(assent)),
    unit: 'ms',
    target: round(overheadTarget),
    targetText: `≤ ${round(overheadTarget)} (2 × relay + 0.05)`,
    ok: overhead(assent) <= overheadTarget,
  });
  for (const side of extra) {
    rows.push({ name: `gateway ${side.name}: p50 overhead over direct`, value: round(overhead(side)), unit: 'ms', target: NaN, targetText: '(reference)' });
  }
  for (const side of [relay, naive, leastAuditing, assent, ...extra]) {
    rows.push({ name: `gateway ${side.name}: throughput share of direct, ${IN_FLIGHT} in flight`, value: round(side.rate / direct.rate), unit: 'ratio', target: NaN, targetText: '(reference)' });
  }
  // Paired by round: each round's rate over the reference's in the same round, then the median.
  const shareOf = (side, reference) => median(side.rates.map((rate, index) => rate / reference.rates[index]));
  for (const side of [naive, leastAuditing, assent, ...extra]) {
    const share = shareOf(side, relay);
    rows.push({
      name: `gateway ${side.name}: throughput share of the relay floor, ${IN_FLIGHT} in flight (median of ${rounds} rounds)`,
      value: round(share),
      unit: 'ratio',
      ...(side === assent ? { target: RELAY_SHARE, targetText: `≥ ${RELAY_SHARE} of the relay`, ok: share >= RELAY_SHARE } : { target: NaN, targetText: '(reference)' }),
    });
  }
  for (const side of [assent, ...extra]) {
    const share = shareOf(side, leastAuditing);
    rows.push({
      name: `gateway ${side.name}: throughput share of the least auditing proxy, ${IN_FLIGHT} in flight (median of ${rounds} rounds)`,
      value: round(share),
      unit: 'ratio',
      ...(side === assent
        ? { target: AUDITING_PROXY_SHARE, targetText: `≥ ${AUDITING_PROXY_SHARE} of the least auditing proxy`, ok: share >= AUDITING_PROXY_SHARE }
        : { target: NaN, targetText: '(reference)' }),
    });
  }
  return rows;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.table(await benchGateway());
}
