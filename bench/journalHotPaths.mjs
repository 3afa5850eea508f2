// The embedded journal's hot paths, two builds side by side in one process:
// recordCallInProgress + endCallInProgress (each MCP call through the gateway)
// and appendEvent, in short rounds whose order alternates, on a journal in
// BENCH_DIR (default the temp dir: fsync each; /dev/shm leaves only the CPU).
//   node bench/journalHotPaths.mjs <before dist> [<after dist>, default ./dist]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [beforeDist, afterDist = join(import.meta.dirname, '..', 'dist')] = process.argv.slice(2);
if (beforeDist === undefined) throw new Error('usage: node bench/journalHotPaths.mjs <before dist> [<after dist>]');
const PER_ROUND = Number(process.env.PER_ROUND ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const base = process.env.BENCH_DIR ?? tmpdir();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const call = (i) => ({ callId: `c${i}`, sessionId: 's', server: 'srv', tool: 'tool', argsSha256: 'a'.repeat(64), caller: { pid: 1 }, channel: 'tty', waitedForConsentMs: 0.4, authorizedAt: 1_700_000_000_000 + i });
const event = { kind: 'call_allowed', ts: 1, sessionId: 's', data: { server: 'srv', tool: 'tool' } };

const builds = [];
for (const dist of [beforeDist, afterDist]) {
  const { Journal } = await import(pathToFileURL(join(resolve(dist), 'journal', 'journal.js')).href);
  const dir = mkdtempSync(join(base, 'assent-hot-'));
  builds.push({ dist, dir, journal: Journal.open(join(dir, 'journal.db')), pairs: [], events: [] });
}
try {
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      let start = performance.now();
      for (let i = 0; i < PER_ROUND; i += 1) {
        build.journal.recordCallInProgress(call(i));
        if (!build.journal.endCallInProgress(`c${i}`)) throw new Error(`call c${i} was not in progress`);
      }
      build.pairs.push(performance.now() - start);
      start = performance.now();
      for (let i = 0; i < PER_ROUND; i += 1) build.journal.appendEvent(event);
      build.events.push(performance.now() - start);
    }
  }
  const [before, after] = builds;
  const rate = (ms) => Math.round((PER_ROUND / ms) * 1000);
  console.log(`${ROUNDS} rounds of ${PER_ROUND} in ${base}, medians:`);
  console.log(`  record+end pairs: before ${rate(median(before.pairs))}/s, after ${rate(median(after.pairs))}/s, after/before time ${(median(after.pairs) / median(before.pairs)).toFixed(3)}`);
  console.log(`  appendEvent:      before ${rate(median(before.events))}/s, after ${rate(median(after.events))}/s, after/before time ${(median(after.events) / median(before.events)).toFixed(3)}`);
} finally {
  for (const build of builds) {
    build.journal.close();
    rmSync(build.dir, { recursive: true, force: true });
  }
}
