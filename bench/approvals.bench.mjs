// SPEC §14 rows for the daemon: decision propagation (approvals.decide accepted
// → waiting call resumed), approvals.list and daemon RSS with 10,000 pending
// approvals, and `assent pending` wall time against `node -e 0`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonClient } from '../dist/heads/daemon/rpcClient.js';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'bin', 'assent.js');
const round3 = (v) => Math.round(v * 1000) / 1000;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const PROMPTING = { notifications: false, policy: { default: 'prompt', consentTimeoutSeconds: 1500 } };

async function withDaemon(body, { config = PROMPTING, extraEnv = {} } = {}) {
  const base = mkdtempSync('/tmp/asb-');
  const home = join(base, 'h');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(join(home, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  const env = { ...process.env, ...extraEnv, ASSENT_HOME: home };
  // Started as auto-spawn starts it: plain `node assent.js daemon run`, no V8 flags (SPEC §14).
  const daemon = spawn(process.execPath, [cli, 'daemon', 'run'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  daemon.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 500 && !stderr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
  try {
    return await body({ home, env, daemon, socketPath: join(home, 'daemon.sock') });
  } finally {
    daemon.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  }
}

async function propagation({ socketPath }) {
  const caller = await DaemonClient.connect({ socketPath, autoSpawn: false });
  const operator = await DaemonClient.connect({ socketPath, autoSpawn: false });
  let onRequested;
  operator.onNotification('event', (event) => {
    if (event.kind === 'approval_requested') onRequested?.(event.data.approval.id);
  });
  await operator.call('events.subscribe', { kinds: ['approval_requested'] });
  const samples = [];
  for (let i = 0; i < 300; i += 1) {
    const requested = new Promise((resolve) => (onRequested = resolve));
    const call = caller.call('calls.authorize', { sessionId: 'bench', server: 'b', tool: 't', args: { i } });
    const id = await requested;
    const start = performance.now();
    const decided = operator.call('approvals.decide', { id, behavior: 'allow' });
    await call;
    const resumed = performance.now() - start;
    await decided;
    if (i >= 20) samples.push(resumed);
  }
  caller.close();
  operator.close();
  samples.sort((a, b) => a - b);
  return [
    { name: 'decision propagation p50 (decide sent → call resumed)', value: round3(percentile(samples, 50)), unit: 'ms', target: 5, ok: percentile(samples, 50) <= 5 },
    { name: 'decision propagation p99', value: round3(percentile(samples, 99)), unit: 'ms', target: NaN, targetText: '(report)', ok: undefined },
  ];
}

const rssMbOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
/** Where the daemon's memory is, as daemon.status reports it: the JavaScript heap, and what lives outside it. */
const memoryText = (memory) =>
  memory === undefined ? '' : `; heap ${memory.heapTotalMb} MB (${memory.heapUsedMb} used), external ${memory.externalMb} MB`;

async function tenThousand({ socketPath, daemon }) {
  const reader = await DaemonClient.connect({ socketPath, autoSpawn: false });
  await new Promise((r) => setTimeout(r, 1000));
  const idleMb = rssMbOf(daemon.pid);
  const idleMemory = (await reader.call('daemon.status', {})).memory;
  // A connection may have 1,024 requests in flight, so the waiting calls are spread over 20 connections.
  const callers = [];
  for (let c = 0; c < 20; c += 1) callers.push(await DaemonClient.connect({ socketPath, autoSpawn: false }));
  const N = 10_000;
  const pending = [];
  for (let i = 0; i < N; i += 1) {
    pending.push(callers[i % callers.length].call('calls.authorize', { sessionId: `s${i % 50}`, server: 'fs', tool: 'write_file', args: { path: `/srv/data/file-${i}.txt`, content: 'x'.repeat(64) } }).catch(() => undefined));
  }
  const filingStart = performance.now();
  for (let i = 0; i < 1200; i += 1) {
    const status = await reader.call('daemon.status', {});
    if (status.approvals.pendingApprovals >= N) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const filingMs = performance.now() - filingStart;
  const samples = [];
  let count = 0;
  for (let i = 0; i < 7; i += 1) {
    const start = performance.now();
    const list = await reader.call('approvals.list', {});
    samples.push(performance.now() - start);
    count = list.length;
  }
  samples.sort((a, b) => a - b);
  const rssMb = rssMbOf(daemon.pid);
  const memory = (await reader.call('daemon.status', {})).memory;
  for (const caller of callers) caller.close();
  reader.close();
  return [
    { name: `filing ${N} approvals (durable, one fsync each)`, value: Math.round(filingMs), unit: 'ms', target: NaN, targetText: '(report)', ok: undefined },
    { name: `approvals.list with ${count} pending (median of 7, over the socket)`, value: round3(samples[3]), unit: 'ms', target: 50, ok: samples[3] <= 50 && count === N },
    { name: 'idle daemon RSS (before filing; report)', value: Math.round(idleMb), unit: `MB${memoryText(idleMemory)}`, target: NaN, targetText: '(report)', ok: undefined },
    {
      name: `daemon RSS with ${count} pending, right after filing and listing (daemon started without V8 flags)`,
      value: Math.round(rssMb),
      unit: `MB${memoryText(memory)}`,
      target: 120,
      ok: rssMb <= 120 && count === N,
    },
  ];
}

function wallTime(args, env, runs = 11) {
  const samples = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    execFileSync(process.execPath, args, { env, stdio: 'ignore' });
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(runs / 2)];
}

async function pendingWall({ env }) {
  wallTime([cli, 'pending', '--json'], env, 2);
  const baseline = wallTime(['-e', '0'], env);
  const pending = wallTime([cli, 'pending', '--json'], env);
  return [
    {
      name: '`assent pending` wall time / `node -e 0`',
      value: round3(pending / baseline),
      unit: `× (${pending.toFixed(1)} ms vs ${baseline.toFixed(1)} ms)`,
      target: 1.5,
      ok: pending / baseline <= 1.5,
    },
  ];
}

/**
 * What holding V8's young generation (src/heads/daemon/youngGeneration.ts) costs
 * the call path: two daemons side by side, one holding it and one left to V8's
 * default (ASSENT_YOUNG_GENERATION=grow), their rounds alternated: allowed
 * calls per second at 32 in flight, and decision propagation.
 */
async function youngGenerationCost() {
  const allowing = { notifications: false, servers: { fs: { command: '/bin/true' } }, policy: { default: 'allow', destructive: 'allow' } };
  const rounds = 5;
  const perSide = {};
  const open = async (side, extraEnv) =>
    new Promise((resolve, reject) => {
      withDaemon(async ({ socketPath }) => {
        const clients = [];
        for (let c = 0; c < 4; c += 1) clients.push(await DaemonClient.connect({ socketPath, autoSpawn: false }));
        await new Promise((release) => resolve({ clients, release, socketPath }));
        for (const client of clients) client.close();
      }, { config: allowing, extraEnv }).catch(reject);
    });
  perSide.held = await open('held', {});
  perSide.grown = await open('grown', { ASSENT_YOUNG_GENERATION: 'grow' });
  let k = 0;
  const burst = async ({ clients }) => {
    const n = 4000;
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async (_, w) => {
        while (next < n) {
          next += 1;
          await clients[w % clients.length].call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'read_file', args: { path: `/srv/f${(k += 1)}`, content: 'x'.repeat(64) } });
        }
      }),
    );
    return n / ((performance.now() - start) / 1000);
  };
  const rates = { held: [], grown: [] };
  try {
    for (let round = 0; round < rounds; round += 1) for (const side of round % 2 === 0 ? ['held', 'grown'] : ['grown', 'held']) rates[side].push(await burst(perSide[side]));
  } finally {
    perSide.held.release();
    perSide.grown.release();
  }
  const med = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratio = med(rates.held) / med(rates.grown);
  return [
    {
      name: `allowed calls.authorize per second at 32 in flight, young generation held vs V8's default (median of ${rounds} alternating rounds)`,
      value: round3(ratio),
      unit: `× (${Math.round(med(rates.held))} vs ${Math.round(med(rates.grown))} /s)`,
      target: 0.9,
      targetText: '>= 0.9 (noise)',
      ok: ratio >= 0.9,
    },
  ];
}

export async function benchApprovals() {
  const rows = [];
  rows.push(...(await youngGenerationCost()));
  const held = await withDaemon(propagation);
  const grown = await withDaemon(propagation, { extraEnv: { ASSENT_YOUNG_GENERATION: 'grow' } });
  rows.push(...held, {
    name: "decision propagation p50, young generation held / V8's default (report)",
    value: round3(held[0].value / grown[0].value),
    unit: `× (${held[0].value} vs ${grown[0].value} ms)`,
    target: NaN,
    targetText: '(report)',
    ok: undefined,
  });
  rows.push(...(await withDaemon(pendingWall)));
  rows.push(...(await withDaemon(tenThousand)));
  const grownRss = (await withDaemon(tenThousand, { extraEnv: { ASSENT_YOUNG_GENERATION: 'grow' } })).at(-1);
  rows.push({ ...grownRss, name: `${grownRss.name}, with V8's default young generation (report)`, target: NaN, targetText: '(report)', ok: undefined });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchApprovals(), null, 2));
}
