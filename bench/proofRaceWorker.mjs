// One racer of the proof race (R-J-3): a separate OS process with its own
// connection to journal.db. For every round it reads a proof from stdin, tries
// to consume it, and when it wins performs the effect itself: appending one
// line to the effects file. The parent counts those lines, not our reports.
import { appendFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

const [dist, dbPath, effectsFile] = process.argv.slice(2);
const { ProofStore } = await import(`${dist}/journal/proofs.js`);
const { newEffectId, proofHash } = await import(`${dist}/core/approval/proof.js`);

const store = ProofStore.open(dbPath, { busyTimeoutMs: 30_000 });
const random = (n) => randomBytes(n);
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line === '') continue;
  const { round, proof, digest } = JSON.parse(line);
  let report;
  try {
    const outcome = store.consume(proofHash(proof), { principal: 'owner', audience: 'cli', actionDigest: digest, revision: 'r1', now: Date.now() }, newEffectId(random));
    if (outcome.kind === 'consumed') {
      appendFileSync(effectsFile, `${round} ${process.pid}\n`);
      store.finishEffect(outcome.effect.id, { state: 'completed', at: Date.now() });
    }
    report = { round, outcome: outcome.kind, effectId: outcome.effect.id, state: outcome.effect.state };
  } catch (error) {
    report = { round, outcome: 'error', error: String(error?.type ?? error?.message ?? error) };
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
store.close();
