// R-TEAM-3: four-eyes and quorum are judged inside the deciding transaction.
// Four OS processes, each with its own connection to one store (journal.db, or a
// PostgreSQL database as the hosts of a team share it) and its own principal,
// decide the same quorum-of-2 approval at the same moment, 50 rounds:
// each round exactly one decision records the first approval, exactly one meets
// the quorum and resolves it, and the others are told it was already decided.
// Read-then-write outside one transaction would let two read "no approvals yet"
// (nobody resolves) or both resolve.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/journal.js';
import { SqliteStore } from '../../src/journal/sqliteStore.js';
import type { Store } from '../../src/journal/store.js';
import { closeStoreServers, HOST_A, openPostgresStore, sharedPostgres, STORE_KINDS, type StoreKind } from '../helpers/stores.js';
import { REPO_ROOT, requireBuiltCli } from '../helpers/daemon.js';

const DIST = join(REPO_ROOT, 'dist');

/** A decider process: reads approval ids on stdin, decides each as its principal, answers one JSON line each. */
const DECIDER = `
const [{ Journal }, { SqliteStore }, { PostgresStore }, { resolveDatabaseUrl }, { ApprovalQueue }, { DEFAULT_CONFIG }, { realTimers }, { silentLogger }] = await Promise.all([
  import(${JSON.stringify(join(DIST, 'journal', 'journal.js'))}),
  import(${JSON.stringify(join(DIST, 'journal', 'sqliteStore.js'))}),
  import(${JSON.stringify(join(DIST, 'journal', 'postgres', 'postgresStore.js'))}),
  import(${JSON.stringify(join(DIST, 'journal', 'postgres', 'databaseUrl.js'))}),
  import(${JSON.stringify(join(DIST, 'service', 'approvalQueue.js'))}),
  import(${JSON.stringify(join(DIST, 'core', 'config', 'config.js'))}),
  import(${JSON.stringify(join(DIST, 'core', 'base', 'timers.js'))}),
  import(${JSON.stringify(join(DIST, 'service', 'logger.js'))}),
]);
const { createInterface } = await import('node:readline');
const [kind, location, principal] = process.argv.slice(1);
const hostId = Buffer.from(principal.padEnd(16, '.')).toString('hex').slice(0, 32);
const store = kind === 'postgres'
  ? await PostgresStore.open({ database: resolveDatabaseUrl({ kind: 'postgres', url: location }), hostId })
  : SqliteStore.open(Journal.open(location), hostId);
const clock = { now: () => Date.now(), monotonic: () => performance.now() };
const ctx = {
  store, hostName: principal, clock, timers: realTimers, logger: silentLogger, principal, hostId: 'h-' + principal, proofs: undefined,
  audit: { append() {}, flush: async () => {} }, bus: { publish() {} }, notifier: { notify() {} },
  random: (n) => new Uint8Array(n), pinned: () => ({ config: DEFAULT_CONFIG, revision: 'r', path: '' }), snapshot: () => undefined, stopping: () => false,
  presence: () => ({ exact: new Map(), globs: [] }),
};
const queue = new ApprovalQueue(ctx);
process.stdout.write('ready\\n');
for await (const id of createInterface({ input: process.stdin })) {
  let answer;
  try {
    answer = { result: (await queue.decide({ id, behavior: 'allow', channel: 'cli', principal })).result };
  } catch (error) {
    answer = { error: error.type ?? String(error) };
  }
  process.stdout.write(JSON.stringify(answer) + '\\n');
}
`;

interface Decider {
  child: ChildProcessWithoutNullStreams;
  next(): Promise<string>;
}

function startDecider(kind: StoreKind, location: string, principal: string): Promise<Decider> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', DECIDER, kind, location, principal], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else queued.push(line);
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const line = queued.shift();
      if (line !== undefined) return resolve(line);
      const timer = setTimeout(() => reject(new Error(`decider ${principal} did not answer: ${stderr}`)), 15_000);
      waiting.push((value) => {
        clearTimeout(timer);
        resolve(value);
      });
      return undefined;
    });
  return next().then((ready) => {
    if (ready !== 'ready') throw new Error(`decider ${principal} did not start: ${ready} ${stderr}`);
    return { child, next };
  });
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});
afterAll(closeStoreServers);

describe.each(STORE_KINDS)('R-TEAM-3 quorum in the deciding transaction (%s)', (kind) => {
  it('R-TEAM-3 4 processes with distinct principals approve one quorum-of-2 approval at once x 50 rounds: one partial, one resolved, the rest conflict', async () => {
    requireBuiltCli();
    const dir = mkdtempSync('/tmp/as-quorum-');
    const path = join(dir, 'journal.db');
    const journal = Journal.open(path);
    const location = kind === 'postgres' ? await (await sharedPostgres()).createDatabase('quorum') : path;
    const store: Store = kind === 'postgres' ? await openPostgresStore(location, HOST_A) : SqliteStore.open(journal, HOST_A);
    const deciders = await Promise.all(['alice@a', 'bob@b', 'carol@c', 'dave@d'].map((principal) => startDecider(kind, location, principal)));
    cleanup = async () => {
      for (const decider of deciders) decider.child.kill('SIGKILL');
      await store.close();
      journal.close();
      rmSync(dir, { recursive: true, force: true });
    };
    for (let round = 0; round < 50; round += 1) {
      const id = `r${round}`;
      const now = Date.now();
      await store.insertApproval({
        id,
        sessionId: 's',
        kind: 'tool',
        server: 'fs',
        tool: 'write_file',
        args: {},
        argsSha256: 'v1:sha256:0',
        requestedAt: now,
        expiresAt: now + 60_000,
        caller: {},
        handoff: false,
        state: 'pending',
        owner: 'agent@a',
        quorum: 2,
      });
      for (const decider of deciders) decider.child.stdin.write(`${id}\n`);
      const answers = (await Promise.all(deciders.map((decider) => decider.next()))).map((line) => JSON.parse(line) as { result?: string; error?: string });
      const tally = answers.map((answer) => answer.result ?? answer.error).sort();
      expect(tally, `round ${round}`).toEqual(['conflict', 'conflict', 'partial', 'resolved']);
      expect((await store.getApproval(id))?.state).toBe('approved');
      expect(await store.listApprovalVotes(id)).toHaveLength(2);
    }
  }, 120_000);
});
