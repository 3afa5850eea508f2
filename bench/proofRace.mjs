// The proof race of R-J-3 / SPEC §14, shared by test/integration/proofRace.test.ts
// and `npm run bench`: N worker processes race to consume one proof per round;
// the effect (a line appended by the winner) is counted from the file itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const DIST = join(import.meta.dirname, '..', 'dist');

async function openStores(dbPath) {
  const { Journal } = await import(join(DIST, 'journal', 'journal.js'));
  const { ProofStore } = await import(join(DIST, 'journal', 'proofs.js'));
  const journal = Journal.open(dbPath);
  const store = ProofStore.open(dbPath, { busyTimeoutMs: 30_000 });
  return { journal, store };
}

function proofRecord(core, round, proof, digest) {
  const random = (n) => randomBytes(n);
  const now = Date.now();
  return {
    id: core.newProofId(random),
    hash: core.proofHash(proof),
    approvalId: `race-${round}`,
    principal: 'owner',
    sessionId: 'race',
    actionKind: 'exec',
    actionDigest: digest,
    revision: 'r1',
    decision: 'allow',
    channel: 'cli',
    audience: 'cli',
    issuedAt: now,
    expiresAt: now + 300_000,
    state: 'issued',
  };
}

/**
 * Runs `rounds` rounds of `workers` processes racing on one fresh proof each.
 * Returns counts taken from the effects file (doubleEffects, missingEffects) and
 * from the workers' reports (consumed, replays, errors).
 */
export async function runProofRace({ rounds = 200, workers = 8 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'assent-race-'));
  const dbPath = join(dir, 'journal.db');
  const effectsFile = join(dir, 'effects.log');
  const core = await import(join(DIST, 'core', 'approval', 'proof.js'));
  const { digestOf } = await import(join(DIST, 'core', 'base', 'canonical.js'));
  const { journal, store } = await openStores(dbPath);
  const children = [];
  try {
    const lines = [];
    for (let i = 0; i < workers; i += 1) {
      const child = spawn(process.execPath, [join(import.meta.dirname, 'proofRaceWorker.mjs'), DIST, dbPath, effectsFile], { stdio: ['pipe', 'pipe', 'inherit'] });
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
    for (let round = 0; round < rounds; round += 1) {
      const proof = core.newProof((n) => randomBytes(n));
      const digest = digestOf({ executable: '/bin/true', cwd: '/', args: [String(round)], env: {} });
      store.insertProof(proofRecord(core, round, proof, digest));
      const message = `${JSON.stringify({ round, proof, digest })}\n`;
      for (const child of children) child.stdin.write(message);
      const reports = await Promise.all(lines.map((next) => next().then((line) => JSON.parse(line))));
      for (const report of reports) {
        if (report.outcome === 'consumed') consumed += 1;
        else if (report.outcome === 'replay') replays += 1;
        else errors += 1;
      }
    }
    const perRound = new Map();
    for (const line of readFileSync(effectsFile, 'utf8').split('\n').filter(Boolean)) {
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
    return { rounds, workers, doubleEffects, missingEffects, consumed, replays, errors };
  } finally {
    for (const child of children) child.stdin.end();
    await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
    store.close();
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Durable consumptions per second from one process: each one a BEGIN IMMEDIATE transaction committed with fsync. */
export async function measureConsumptionRate({ count = 2000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'assent-rate-'));
  const dbPath = join(dir, 'journal.db');
  const core = await import(join(DIST, 'core', 'approval', 'proof.js'));
  const { digestOf } = await import(join(DIST, 'core', 'base', 'canonical.js'));
  const { journal, store } = await openStores(dbPath);
  try {
    const digest = digestOf({ executable: '/bin/true', cwd: '/', args: [], env: {} });
    const proofs = [];
    for (let i = 0; i < count; i += 1) {
      const proof = core.newProof((n) => randomBytes(n));
      store.insertProof(proofRecord(core, i, proof, digest));
      proofs.push(proof);
    }
    const random = (n) => randomBytes(n);
    const started = performance.now();
    for (const proof of proofs) {
      const outcome = store.consume(core.proofHash(proof), { principal: 'owner', audience: 'cli', actionDigest: digest, revision: 'r1', now: Date.now() }, core.newEffectId(random));
      if (outcome.kind !== 'consumed') throw new Error('a fresh proof was not consumed');
    }
    const seconds = (performance.now() - started) / 1000;
    return { count, perSecond: count / seconds };
  } finally {
    store.close();
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
