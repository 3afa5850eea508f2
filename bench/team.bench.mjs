// SPEC §14 rows for team mode (R-TEAM-2): two hosts — separate ASSENT_HOMEs and
// daemons — on one real PostgreSQL server (Debian's binaries, started here in a
// temp dir by test/helpers/postgres.ts): the cross-host decision propagation
// (`approvals.decide` sent on host B → the call waiting on host A resumed, pushed
// with LISTEN/NOTIFY) over 50 rounds, and the proof race over both daemons.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerImport } from 'vite';
import { DaemonClient } from '../dist/heads/daemon/rpcClient.js';
import { runTeamProofRace } from './teamRace.mjs';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'bin', 'assent.js');
const round3 = (v) => Math.round(v * 1000) / 1000;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function withTeam(config, body) {
  const { module } = await runnerImport(join(root, 'test', 'helpers', 'postgres.ts'));
  const server = await module.startPostgres({ durable: true });
  const base = mkdtempSync('/tmp/asb-team-');
  const daemons = [];
  try {
    const url = await server.createDatabase('bench');
    const hosts = [];
    for (const name of ['host-a', 'host-b']) {
      const home = join(base, name);
      mkdirSync(home, { mode: 0o700 });
      writeFileSync(join(home, 'config.json'), JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, host: { name }, journal: { kind: 'postgres', url }, ...config }), { mode: 0o600 });
      const daemon = spawn(process.execPath, [cli, 'daemon', 'run'], { env: { ...process.env, ASSENT_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
      daemons.push(daemon);
      let stderr = '';
      daemon.stderr.on('data', (d) => (stderr += d));
      for (let i = 0; i < 500 && !stderr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
      if (!stderr.includes('listening on')) throw new Error(`the daemon of ${name} did not start: ${stderr}`);
      hosts.push({ name, home, socketPath: join(home, 'daemon.sock') });
    }
    return await body(hosts);
  } finally {
    for (const daemon of daemons) daemon.kill('SIGKILL');
    await server.remove();
    rmSync(base, { recursive: true, force: true });
  }
}

async function crossHostPropagation([a, b]) {
  const caller = await DaemonClient.connect({ socketPath: a.socketPath, autoSpawn: false });
  const operator = await DaemonClient.connect({ socketPath: b.socketPath, autoSpawn: false });
  let onRequested;
  // Host B hears of A's approval through the team database, as `assent watch` on B would.
  operator.onNotification('event', (event) => {
    if (event.kind === 'approval_requested') onRequested?.(event.data.approval.id);
  });
  await operator.call('events.subscribe', { kinds: ['approval_requested'] });
  const samples = [];
  for (let i = 0; i < 60; i += 1) {
    const requested = new Promise((resolve) => (onRequested = resolve));
    const call = caller.call('calls.authorize', { sessionId: 'bench', server: 'b', tool: 't', args: { i } });
    const id = await requested;
    const start = performance.now();
    const decided = operator.call('approvals.decide', { id, behavior: 'allow' });
    await call;
    const resumed = performance.now() - start;
    await decided;
    if (i >= 10) samples.push(resumed);
  }
  caller.close();
  operator.close();
  samples.sort((x, y) => x - y);
  return [
    { name: `cross-host decision propagation p50 over ${samples.length} rounds (decide sent on B → call resumed on A)`, value: round3(percentile(samples, 50)), unit: 'ms', target: 50, ok: percentile(samples, 50) <= 50 },
    { name: 'cross-host decision propagation p99', value: round3(percentile(samples, 99)), unit: 'ms', target: NaN, targetText: '(report)', ok: undefined },
  ];
}

export async function benchTeam() {
  const rows = [];
  rows.push(...(await withTeam({ policy: { default: 'prompt', consentTimeoutSeconds: 1500 } }, crossHostPropagation)));
  const race = await withTeam({ approvals: { handoff: true }, policy: { default: 'prompt' } }, (hosts) => runTeamProofRace({ sockets: hosts.map((h) => h.socketPath), rounds: 200, workers: 8 }));
  rows.push({
    name: `double effects, ${race.workers} processes over ${race.hosts} team daemons x ${race.rounds} rounds on one proof each`,
    value: race.doubleEffects,
    unit: 'effects',
    target: 0,
    targetText: '0',
    ok: race.doubleEffects === 0 && race.missingEffects === 0 && race.errors === 0,
  });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchTeam(), null, 2));
}
