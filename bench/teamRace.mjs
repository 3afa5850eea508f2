// The cross-host proof race of R-J-3 / R-TEAM-1 / SPEC §14, shared by
// test/e2e/teamRace.test.ts and `npm run bench`: worker processes spread over
// the daemons of two hosts (one team database, handoff mode) send the identical
// retry of one approved call per round; the effect (a line appended by the
// process that was let through) is counted from the file itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const DIST = join(import.meta.dirname, '..', 'dist');

/**
 * `sockets` are the hosts' daemon sockets (handoff on); each round the first
 * files a handoff approval, the last approves it, then `workers` processes
 * (round-robin over the sockets) race. Returns counts from the effects file.
 */
export async function runTeamProofRace({ sockets, rounds = 200, workers = 8 }) {
  const { DaemonClient } = await import(join(DIST, 'heads', 'daemon', 'rpcClient.js'));
  const dir = mkdtempSync(join(tmpdir(), 'assent-team-race-'));
  const effectsFile = join(dir, 'effects.log');
  const children = [];
  const filer = await DaemonClient.connect({ socketPath: sockets[0], autoSpawn: false });
  const approver = await DaemonClient.connect({ socketPath: sockets[sockets.length - 1], autoSpawn: false });
  try {
    const lines = [];
    for (let i = 0; i < workers; i += 1) {
      const socket = sockets[i % sockets.length];
      const child = spawn(process.execPath, [join(import.meta.dirname, 'teamRaceWorker.mjs'), DIST, socket, effectsFile, `w${i}`], { stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      const queue = [];
      const waiting = [];
      createInterface({ input: child.stdout }).on('line', (line) => {
        const next = waiting.shift();
        if (next) next(line);
        else queue.push(line);
      });
      lines.push(() => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve))));
    }
    await Promise.all(lines.map((next) => next()));

    let consumed = 0;
    let replays = 0;
    let errors = 0;
    const errorReasons = new Set();
    for (let round = 0; round < rounds; round += 1) {
      const args = { path: `/srv/race/${round}.txt`, content: `round ${round}` };
      const refusal = await filer.call('calls.authorize', { sessionId: 'race-filer', server: 'fs', tool: 'write_file', args }).then(
        () => undefined,
        (error) => error,
      );
      const approvalId = refusal?.details?.approvalId;
      if (refusal?.details?.reason !== 'approval_pending' || typeof approvalId !== 'string') throw new Error(`round ${round}: no handoff approval was filed (${refusal?.message ?? 'the call was let through'})`);
      await approver.call('approvals.decide', { id: approvalId, behavior: 'allow' });
      const message = `${JSON.stringify({ round, args })}\n`;
      for (const child of children) child.stdin.write(message);
      const reports = await Promise.all(lines.map((next) => next().then((line) => JSON.parse(line))));
      for (const report of reports) {
        if (report.outcome === 'consumed') consumed += 1;
        else if (report.outcome === 'replay') replays += 1;
        else {
          errors += 1;
          errorReasons.add(report.error);
        }
      }
    }
    const perRound = new Map();
    let text = '';
    try {
      text = readFileSync(effectsFile, 'utf8');
    } catch {
      // No effect at all.
    }
    for (const line of text.split('\n').filter(Boolean)) {
      const round = Number(line.split(' ')[0]);
      perRound.set(round, (perRound.get(round) ?? 0) + 1);
    }
    let doubleEffects = 0;
    let missingEffects = 0;
    for (let round = 0; round < rounds; round += 1) {
      const count = perRound.get(round) ?? 0;
      if (count > 1) doubleEffects += count - 1;
      if (count === 0) missingEffects += 1;
    }
    return { rounds, workers, hosts: sockets.length, doubleEffects, missingEffects, consumed, replays, errors, errorReasons: [...errorReasons] };
  } finally {
    for (const child of children) child.stdin.end();
    await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
    filer.close();
    approver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
