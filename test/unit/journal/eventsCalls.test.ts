// Issue 21 item 2: the event log, the calls in progress, the export cursors, the
// instance's settings and the team's hosts are one set of operations
// (src/journal/eventsCalls.ts) over queries written once (sql/eventQueries.ts),
// run by both engines. The recording and ending of a call, and the appending of
// an event, run on every MCP call or decision: each stays one statement.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as ops from '../../../src/journal/eventsCalls.js';
import { Journal } from '../../../src/journal/journal.js';
import { bind } from '../../../src/journal/sql/prepared.js';
import type { Step, Steps } from '../../../src/journal/sql/steps.js';
import { closeStoreServers, HOST_A, HOST_B, openStoreFixture, STORE_KINDS, type StoreFixture } from '../../helpers/stores.js';

const clock = { now: () => 1_000, monotonic: () => 1 };
let fixture: StoreFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});
afterAll(closeStoreServers);

const call = (callId: string, authorizedAt: number) => ({ callId, sessionId: 's', server: 'fs', tool: 'w', argsSha256: 'v1:sha256:00', caller: { pid: 1 }, waitedForConsentMs: 2.6, authorizedAt });

describe.each(STORE_KINDS)('the event log, calls in progress and hosts written once (%s)', (kind) => {
  it('R-D-9 the seq the insert returns is the one the log reads back, growing across connections; a limit is floored and never negative', async () => {
    fixture = await openStoreFixture(kind, clock);
    const other = await fixture.openAnother(HOST_B);
    const first = await fixture.store.appendEvent({ kind: 'a', ts: 1, data: { n: 1 } });
    const second = await other.appendEvent({ kind: 'b', ts: 2, sessionId: 's2', data: {} });
    const third = await fixture.store.appendEvent({ kind: 'c', ts: 3, data: { nested: { ok: true } } });
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    expect((await other.eventsSince(0, 10)).map((event) => event.seq)).toEqual([first, second, third]);
    expect(await fixture.store.eventsSince(first, 1.9)).toEqual([{ seq: second, kind: 'b', ts: 2, sessionId: 's2', data: {} }]);
    expect(await fixture.store.eventsSince(0, 0)).toEqual([]);
    expect(await fixture.store.eventsSince(0, -5)).toEqual([]);
    expect(await fixture.store.eventsSince(third, 10)).toEqual([]);
  });

  it('R-J-5 calls in progress are listed oldest first (then by id); a call id in progress already is refused and the first record kept', async () => {
    fixture = await openStoreFixture(kind, clock);
    const { store } = fixture;
    await store.recordCallInProgress(call('c3', 20));
    await store.recordCallInProgress(call('c2', 10));
    await store.recordCallInProgress(call('c1', 20));
    await expect(store.recordCallInProgress({ ...call('c2', 99), tool: 'other' })).rejects.toThrow();
    const listed = await store.listCallsInProgress();
    expect(listed.map((each) => each.callId)).toEqual(['c2', 'c1', 'c3']);
    expect(listed[0]).toEqual({ ...call('c2', 10), waitedForConsentMs: 3 });
    expect(await store.endCallInProgress('c1')).toBe(true);
    expect(await store.endCallInProgress('c1')).toBe(false);
    expect(await store.endCallInProgress('never')).toBe(false);
    expect((await store.listCallsInProgress()).map((each) => each.callId)).toEqual(['c2', 'c3']);
  });

  it('R-AUD-5 an export cursor acknowledged at the same seq again, or earlier, stays where it is', async () => {
    fixture = await openStoreFixture(kind, clock);
    const { store } = fixture;
    await store.advanceExportCursor('siem', 7, 1);
    await store.advanceExportCursor('siem', 7, 2);
    await store.advanceExportCursor('siem', 6, 3);
    expect(await store.exportCursor('siem')).toBe(7);
    await store.advanceExportCursor('siem', 8, 4);
    expect(await store.exportCursor('siem')).toBe(8);
  });

  it('R-TEAM-6 hosts: the team database keeps one row per host, its latest label and revision, sorted by name; the embedded journal keeps none', async () => {
    fixture = await openStoreFixture(kind, clock);
    const other = await fixture.openAnother(HOST_B);
    await fixture.store.announceHost({ name: 'zeta', revision: 'r1', at: 1 });
    await other.announceHost({ name: 'alpha', revision: 'r1', at: 2 });
    await fixture.store.announceHost({ name: 'beta', revision: 'r2', at: 3 });
    const hosts = await other.listHosts();
    if (kind === 'sqlite') {
      expect(hosts).toEqual([]);
      return;
    }
    expect(hosts).toEqual([
      { hostId: HOST_B, name: 'alpha', revision: 'r1', updatedAt: 2 },
      { hostId: HOST_A, name: 'beta', revision: 'r2', updatedAt: 3 },
    ]);
  });
});

describe('the embedded journal\u2019s settings (sqlite)', () => {
  it('a setting is overwritten in place and read back by a new connection; the instance id is drawn once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-meta-'));
    try {
      const file = path.join(dir, 'journal.db');
      const journal = Journal.open(file);
      expect(journal.readMeta('confirmed')).toBeUndefined();
      journal.writeMeta('confirmed', 'one');
      journal.writeMeta('confirmed', 'two');
      const id = journal.instanceId();
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      journal.close();
      const again = Journal.open(file);
      expect(again.readMeta('confirmed')).toBe('two');
      expect(again.instanceId()).toBe(id);
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The steps an operation yields, each answered with `answer`, and their bound values. */
function stepsOf(steps: Steps<unknown>, answer = { rows: [{ seq: 1 }], changes: 1 }): { step: Step; values: unknown[] }[] {
  const seen: { step: Step; values: unknown[] }[] = [];
  let next = steps.next();
  while (next.done !== true) {
    seen.push({ step: next.value, values: bind(next.value.query, next.value.values) });
    next = steps.next(answer);
  }
  return seen;
}

describe('the hot paths stay one statement each, on both engines', () => {
  for (const engine of ['sqlite', 'postgres'] as const) {
    const ctx: ops.EventCallContext = { q: ops.EVENT_CALL_QUERIES[engine], hostId: engine === 'postgres' ? HOST_A : undefined };
    it(`recording and ending a call, and appending an event, are one statement each (${engine}); only the team database's name the host`, () => {
      const runs = [
        stepsOf(ops.recordCallInProgress(ctx, call('c1', 1))),
        stepsOf(ops.endCallInProgress(ctx, 'c1')),
        stepsOf(ops.appendEvent(ctx, { kind: 'k', ts: 1, data: {} })),
      ];
      for (const run of runs) {
        expect(run).toHaveLength(1);
        expect(run[0]?.values.includes(HOST_A)).toBe(engine === 'postgres');
      }
    });
  }

  it('an event insert that returns no seq (no row, no rowid) is an error, never seq 0', () => {
    for (const engine of ['sqlite', 'postgres'] as const) {
      const ctx: ops.EventCallContext = { q: ops.EVENT_CALL_QUERIES[engine], hostId: engine === 'postgres' ? HOST_A : undefined };
      expect(() => stepsOf(ops.appendEvent(ctx, { kind: 'k', ts: 1, data: {} }), { rows: [], changes: 1 })).toThrow(/returned no seq for a k event/);
    }
  });
});
