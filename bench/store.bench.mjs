// Issue 21 item 2's guard: the SQLite figures before and after the store was
// written once for both engines, side by side in one run. The build of the
// commit before that change (BEFORE) is made once into a temp dir (git archive
// + the checkout's node_modules + tsc) and kept there for later runs; then
// three rounds measure both builds side by side, their samples interleaved:
// decision propagation
// (approvals.decide sent → waiting call resumed, over the daemon's socket),
// durable proof consumptions per second (the store's consume, fsync each) and
// listing 10,000 pending approvals from the store (the store's part of
// `approvals.list`). A figure may be worse after by noise only (10 %). Run
// alone: `node bench/store.bench.mjs` after `npm run build`.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const BEFORE = '2a184de';
const root = join(import.meta.dirname, '..');
const ROUNDS = 3;
const NOISE = 1.1;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round3 = (v) => Math.round(v * 1000) / 1000;

/** dist/ of BEFORE, built once into the temp dir and reused while it is there. */
function buildBefore() {
  const dir = join(tmpdir(), `assent-bench-${BEFORE}`);
  // Reused only while its node_modules link still reaches a checkout's packages (a link to a removed checkout does not).
  if (existsSync(join(dir, 'dist', 'heads', 'daemon', 'daemonRuntime.js')) && existsSync(join(dir, 'node_modules', 'commander'))) return join(dir, 'dist');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${root}" archive ${BEFORE} src web tsconfig.json tsconfig.build.json package.json | tar -x -C "${dir}"`], { stdio: 'inherit' });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'dist');
}

const load = (dist, file) => import(pathToFileURL(join(dist, file)).href);

/** A daemon of `dist`, with a caller and an operator connected: `sample()` is one decide → resume in ms. */
async function propagationProbe(dist, socketPath) {
  const { DaemonClient } = await load(dist, 'heads/daemon/rpcClient.js');
  const caller = await DaemonClient.connect({ socketPath, autoSpawn: false });
  const operator = await DaemonClient.connect({ socketPath, autoSpawn: false });
  let onRequested;
  operator.onNotification('event', (event) => {
    if (event.kind === 'approval_requested') onRequested?.(event.data.approval.id);
  });
  await operator.call('events.subscribe', { kinds: ['approval_requested'] });
  let i = 0;
  return {
    async sample() {
      const requested = new Promise((resolve) => (onRequested = resolve));
      const call = caller.call('calls.authorize', { sessionId: 'bench', server: 'b', tool: 't', args: { i: (i += 1) } });
      const id = await requested;
      const start = performance.now();
      const decided = operator.call('approvals.decide', { id, behavior: 'allow' });
      await call;
      const elapsed = performance.now() - start;
      await decided;
      return elapsed;
    },
    close() {
      caller.close();
      operator.close();
    },
  };
}

/** One store figure of `dist`, measured in a process of its own (bench/storeWorker.mjs). */
function storeFigure(dist, task) {
  return JSON.parse(execFileSync(process.execPath, [join(import.meta.dirname, 'storeWorker.mjs'), dist, task], { encoding: 'utf8' }));
}

/**
 * One round: both builds side by side, their samples interleaved (one decision
 * at a time; the store figures each in a process of its own, two per build),
 * the order flipped each time, so that the load of a shared machine falls on
 * both alike.
 */
async function round(builds) {
  const sides = ['before', 'after'];
  const result = {};
  const daemons = {};
  for (const side of sides) {
    daemons[side] = await startDaemon(builds[side]);
    daemons[side].probe = await propagationProbe(builds[side], daemons[side].socketPath);
  }
  try {
    const decisions = { before: [], after: [] };
    for (let i = 0; i < 120; i += 1) for (const side of i % 2 === 0 ? sides : [...sides].reverse()) decisions[side].push(await daemons[side].probe.sample());
    const consumptions = { before: [], after: [] };
    const listings = { before: [], after: [] };
    for (let i = 0; i < 2; i += 1) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) consumptions[side].push(storeFigure(builds[side], 'consume'));
      for (const side of i % 2 === 0 ? [...sides].reverse() : sides) listings[side].push(storeFigure(builds[side], 'list'));
    }
    for (const side of sides) {
      result[side] = {
        propagation: median(decisions[side].slice(10)),
        // The best of a round's runs: on a loaded machine the load only ever adds, so the best is closest to the build's own cost.
        consumptions: Math.max(...consumptions[side]),
        list: Math.min(...listings[side]),
      };
    }
    return result;
  } finally {
    for (const side of sides) {
      daemons[side].probe.close();
      daemons[side].stop();
    }
  }
}

async function startDaemon(dist) {
  const base = mkdtempSync('/tmp/asb-store-');
  const home = join(base, 'h');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ notifications: false, policy: { default: 'prompt', consentTimeoutSeconds: 1500 } }), { mode: 0o600 });
  const daemon = spawn(process.execPath, [join(dist, 'bin', 'assent.js'), 'daemon', 'run'], { env: { ...process.env, ASSENT_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  daemon.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 500 && !stderr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
  if (!stderr.includes('listening on')) throw new Error(`the daemon of ${dist} did not start: ${stderr}`);
  return {
    socketPath: join(home, 'daemon.sock'),
    stop() {
      daemon.kill('SIGKILL');
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export async function benchStore() {
  const builds = { before: buildBefore(), after: join(root, 'dist') };
  const rounds = [];
  for (let i = 0; i < ROUNDS; i += 1) rounds.push(await round(builds));
  const row = (name, unit, key, higherIsBetter) => {
    const before = median(rounds.map((r) => r.before[key]));
    const after = median(rounds.map((r) => r.after[key]));
    const ratio = higherIsBetter ? before / after : after / before;
    return {
      name: `${name}: ${round3(before)} before (${BEFORE}) vs ${round3(after)} after, median of ${ROUNDS} rounds interleaved`,
      value: round3(ratio),
      unit: `× worse after (${unit})`,
      target: NOISE,
      targetText: `<= ${NOISE} (noise)`,
      ok: ratio <= NOISE,
    };
  };
  return [
    row('SQLite decision propagation p50', 'ms', 'propagation', false),
    row('SQLite durable proof consumptions per second', '/s', 'consumptions', true),
    row('SQLite store listing 10,000 pending approvals', 'ms', 'list', false),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchStore(), null, 2));
}
