// Approvals and their votes written once for both engines (issue 21 item 2):
// the compiled statements differ only where the engines truly do, one mapper
// reads both engines' rows, the deciding algorithm is one function whose
// statements come from the compiled set, and both stores behave the same.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { AssentError } from '../../../src/core/base/errors.js';
import * as approvalVotes from '../../../src/journal/approvalVotes.js';
import { rowToApproval, type ApprovalRow } from '../../../src/journal/journalRecords.js';
import { Journal } from '../../../src/journal/journal.js';
import { COMPILED } from '../../../src/journal/sql/compiled.js';
import type { Engine } from '../../../src/journal/sql/prepared.js';
import { SqliteSteps } from '../../../src/journal/sql/sqliteSteps.js';
import { runStepsSync, type Step, type StepResult, type Steps } from '../../../src/journal/sql/steps.js';
import type { DecisionWrites } from '../../../src/journal/store.js';
import { sampleApproval as approval, closeStoreServers, HOST_A, openStoreFixture, STORE_KINDS, type StoreFixture } from '../../helpers/stores.js';

const srcDir = path.join(import.meta.dirname, '../../../src');
const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];

describe('the approval statements, compiled once for both engines', () => {
  const q = COMPILED.approvals;
  const placeholders = (sql: string): string => sql.replace(/\$\d+/g, '?');

  it('read the same text on both engines but for the placeholders, the row lock and the shared store dropping raw arguments (R-TEAM-6)', () => {
    expect(Object.keys(q.postgres)).toEqual(Object.keys(q.sqlite));
    for (const name of Object.keys(q.sqlite) as (keyof typeof q.sqlite)[]) {
      const postgres = placeholders(q.postgres[name].sql).replace(/ for update$/, '').replace(', "args" = null, "action" = null', '');
      expect(postgres, name).toBe(q.sqlite[name].sql);
    }
    expect(q.postgres.lockApprovalById.sql).toMatch(/ for update$/);
    expect(q.sqlite.lockApprovalById.sql).not.toMatch(/for update/);
    expect(q.postgres.resolveApproval.sql).toContain('"args" = null, "action" = null');
    expect(q.sqlite.resolveApproval.sql).not.toContain('"args" = null');
    // The compare-and-set from pending, on both.
    for (const engine of ENGINES) expect(q[engine].resolveApproval.sql).toMatch(/where "id" = (\?|\$\d+) and "state" = (\?|\$\d+)$/);
  });

  it('no engine file writes an approval statement of its own', () => {
    const code = (file: string): string => fs.readFileSync(path.join(srcDir, file), 'utf8').replace(/^\s*(\/\/|\/?\*).*$/gm, '');
    expect(code('journal/postgres/postgresApprovals.ts')).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE)\b/);
    for (const file of ['journal/journal.ts', 'journal/sqliteStore.ts', 'journal/postgres/postgresApprovals.ts']) {
      expect(code(file), file).not.toMatch(/\b(FROM|INTO|UPDATE)\s+approval(s|_votes)\b/i);
    }
  });
});

describe('one approval mapper for both engines', () => {
  // A row as each engine returns it: SQLite's flags are 0/1, PostgreSQL's booleans.
  const row = (handoff: number | boolean, fourEyes: number | boolean): ApprovalRow => [
    'abcde', 's1', 'tool', 'fs', 'write_file', '{"path":"/tmp/x"}', null, 'f'.repeat(64), 1000, 61_000, '{"pid":1}', handoff, 'pending', null, null, null, null,
    'me@a', HOST_A, fourEyes, 2, null, null, 'passkey',
  ];

  it('reads a SQLite row (0/1) and a PostgreSQL row (booleans) into the same record', () => {
    expect(rowToApproval(row(1, 1))).toEqual(rowToApproval(row(true, true)));
    expect(rowToApproval(row(0, 0))).toEqual(rowToApproval(row(false, false)));
    expect(rowToApproval(row(true, true))).toMatchObject({ handoff: true, fourEyes: true, quorum: 2, owner: 'me@a', hostId: HOST_A, presence: 'passkey' });
    const unset = rowToApproval(row(false, 0));
    expect(unset.handoff).toBe(false);
    expect(unset.fourEyes).toBeUndefined();
  });
});

/** Runs the deciding algorithm with a scripted engine, recording each statement it issues. */
function decideScripted(engine: Engine, answers: { record?: ApprovalRow; resolved: boolean }, writes: DecisionWrites) {
  const q = COMPILED.approvals[engine];
  const ctx: approvalVotes.ApprovalContext = { q, isUniqueViolation: () => false, defaultHostId: null };
  const issued: string[] = [];
  const execute = (step: Step): StepResult => {
    const name = Object.entries(q).find(([, prepared]) => prepared === step.query)?.[0] ?? step.query.sql;
    issued.push(name);
    if (name === 'lockApprovalById' || name === 'approvalById') return { rows: answers.record === undefined ? [] : [answers.record], changes: 0 };
    if (name === 'resolveApproval') return { rows: [], changes: answers.resolved ? 1 : 0 };
    return { rows: [], changes: 1 };
  };
  let local = 0;
  const run = () =>
    runStepsSync(
      approvalVotes.decideApproval(ctx, 'abcde', ({ record, votes }) => ({ writes: { ...writes, localWrite: () => (local += 1) }, result: { state: record?.state, votes: votes.length } })),
      execute,
    );
  return { run, issued, local: () => local };
}

describe('the deciding algorithm, one function for both engines', () => {
  const pending: ApprovalRow = ['abcde', 's1', 'tool', null, null, null, null, 'f'.repeat(64), 1, 2, '{}', 0, 'pending', null, null, null, null, null, null, 0, 2, null, null, null];
  const vote = { approvalId: 'abcde', principal: 'me@a', channel: 'cli', scope: 'call' as const, votedAt: 5 };

  it.each(ENGINES)('reads under the row lock, then the votes, writes the vote and the resolution, and only then the local write (%s)', (engine) => {
    const scripted = decideScripted(engine, { record: pending, resolved: true }, { vote, resolution: { state: 'approved', decidedAt: 5 } });
    expect(scripted.run()).toEqual({ state: 'pending', votes: 0 });
    expect(scripted.issued).toEqual(['lockApprovalById', 'votesOf', 'insertVote', 'resolveApproval']);
    expect(scripted.local()).toBe(1);
  });

  it.each(ENGINES)('a resolution that loses the compare-and-set is a conflict naming the state, and the local write never runs (%s)', (engine) => {
    const scripted = decideScripted(engine, { record: pending, resolved: false }, { resolution: { state: 'denied', decidedAt: 5 } });
    expect(() => scripted.run()).toThrow(AssentError);
    expect(scripted.issued).toEqual(['lockApprovalById', 'votesOf', 'resolveApproval', 'approvalById']);
    expect(scripted.local()).toBe(0);
  });

  it.each(ENGINES)('with nothing to write, no vote, no resolution and no local write (%s)', (engine) => {
    const scripted = decideScripted(engine, { resolved: false }, {});
    expect(scripted.run()).toEqual({ state: undefined, votes: 0 });
    expect(scripted.issued).toEqual(['lockApprovalById']);
    expect(scripted.local()).toBe(0);
  });
});

describe('the SQLite step runner\u2019s raw rows', () => {
  it('refuses to read one compiled query both as arrays and as objects', () => {
    const dir = fs.mkdtempSync(path.join(process.env['TMPDIR'] ?? '/tmp', 'assent-raw-'));
    const journal = Journal.open(path.join(dir, 'journal.db'));
    try {
      const steps = new SqliteSteps((journal as unknown as { db: ConstructorParameters<typeof SqliteSteps>[0] }).db);
      const query = COMPILED.approvals.sqlite.approvalById;
      function* raw(): Steps<readonly unknown[]> {
        return (yield { query, values: { id: 'x' }, raw: true }).rows;
      }
      function* objects(): Steps<readonly unknown[]> {
        return (yield { query, values: { id: 'x' } }).rows;
      }
      expect(steps.run(raw())).toEqual([]);
      expect(() => steps.run(objects())).toThrow(/both as arrays and as objects/);
    } finally {
      journal.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(STORE_KINDS)('approvals written once behave the same on both engines (%s)', (kind) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await openStoreFixture(kind, new FakeClock(1_000));
  });
  afterEach(async () => {
    await fixture.close();
  });
  afterAll(async () => {
    await closeStoreServers();
  });

  it('keeps the flags, the quorum and the limit as filed; an approval filed without a host is this host\u2019s only in a shared store', async () => {
    const { store } = fixture;
    await store.insertApproval(approval({ id: 'aaaaa', handoff: true, fourEyes: true, quorum: 3, hostId: 'h1' }));
    await store.insertApproval(approval({ id: 'bbbbb', requestedAt: 1001 }));
    const other = await fixture.openAnother();
    expect(await other.getApproval('aaaaa')).toMatchObject({ handoff: true, fourEyes: true, quorum: 3, hostId: 'h1' });
    const plain = await other.getApproval('bbbbb');
    expect(plain?.handoff).toBe(false);
    expect(plain?.fourEyes).toBeUndefined();
    expect(plain?.quorum).toBeUndefined();
    expect(plain?.hostId).toBe(kind === 'postgres' ? HOST_A : undefined);
    expect((await other.listApprovals()).map((a) => a.id)).toEqual(['aaaaa', 'bbbbb']);
    expect((await other.listApprovals({ limit: 1 })).map((a) => a.id)).toEqual(['aaaaa']);
    expect(await other.listApprovals({ state: 'pending', limit: 0 })).toEqual([]);
  });

  it('a decision that loses to an earlier resolution is a conflict that names the state it found', async () => {
    const { store } = fixture;
    await store.insertApproval(approval({ id: 'ccccc' }));
    expect(await store.resolveApproval('ccccc', { state: 'denied', decidedAt: 2 })).toBe(true);
    await expect(store.decideApproval('ccccc', () => ({ writes: { resolution: { state: 'approved', decidedAt: 3 } }, result: undefined }))).rejects.toMatchObject({
      type: 'conflict',
      details: { state: 'denied' },
    });
  });
});
