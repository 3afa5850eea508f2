// One build's store figure for bench/store.bench.mjs, in its own process (as a
// daemon would run it): `node storeWorker.mjs <dist> consume|list` prints the
// durable consumptions per second, or the median ms of listing 10,000 pending
// approvals, from a journal in a temp dir composed as the daemon composes it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, task] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(dist, file)).href);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'asb-store-'));
const { Journal } = await load('journal/journal.js');
const { SqliteStore } = await load('journal/sqliteStore.js');
const journal = Journal.open(join(dir, 'journal.db'));
const store = SqliteStore.open(journal, 'a'.repeat(32));
const now = Date.now();
let figure;
try {
  if (task === 'consume') {
    // A steady rate: 2,000 consumptions, so that the first hundred or so, run
    // while V8 still compiles the store's code lazily (each up to 60 µs more on
    // either build), weigh little; at 300 they made a tenth of the figure.
    const count = 2000;
    const hashes = [];
    for (let i = 0; i < count; i += 1) {
      const hash = randomBytes(32).toString('hex');
      hashes.push(hash);
      await store.insertProof({
        id: `p${i}`, hash, approvalId: `a${i}`, principal: 'owner', sessionId: 's', actionKind: 'exec', actionDigest: `d${i}`, revision: 'r1',
        decision: 'allow', channel: 'cli', audience: 'cli', issuedAt: now, expiresAt: now + 600_000, state: 'issued',
      });
    }
    const start = performance.now();
    for (let i = 0; i < count; i += 1) await store.consume(hashes[i], { principal: 'owner', audience: 'cli', actionDigest: `d${i}`, revision: 'r1', now: now + 1 }, `e${i}`);
    figure = count / ((performance.now() - start) / 1000);
  } else if (task === 'list') {
    await Promise.all(
      Array.from({ length: 10_000 }, (_, i) =>
        store.insertApproval({
          id: `ap${i}`, sessionId: `s${i % 50}`, kind: 'tool', server: 'fs', tool: 'write_file', args: { path: `/srv/data/file-${i}.txt`, content: 'x'.repeat(64) },
          argsSha256: 'd'.repeat(64), requestedAt: now + i, expiresAt: now + 3_600_000, caller: { pid: 1 }, handoff: false, state: 'pending', hostId: 'a'.repeat(32),
        }),
      ),
    );
    const samples = [];
    for (let i = 0; i < 5; i += 1) {
      const start = performance.now();
      const list = await store.listApprovals({ state: 'pending' });
      samples.push(performance.now() - start);
      if (list.length !== 10_000) throw new Error(`listed ${list.length} approvals, not 10000`);
    }
    figure = median(samples);
  } else {
    throw new Error(`unknown task ${task}: consume or list`);
  }
} finally {
  await store.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(figure));
