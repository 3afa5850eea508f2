// The audit queue with a spool (SPEC §14 audit durability): a settled call's
// record reaches the spool file within SPOOL_MS whatever the daemon does and
// however busy the gateway is; the daemon is told to read it once the burst is
// over, or at once when a long burst leaves thousands unread; a gateway that
// closes has the daemon read everything and remove the file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../../src/core/base/canonical.js';
import type { DaemonClient } from '../../../../src/heads/daemon/rpcClient.js';
import { createAuditQueue, type SettledCall } from '../../../../src/heads/mcp/auditQueue.js';
import { openAuditSpool } from '../../../../src/heads/mcp/auditSpool.js';
import { AuditSpoolReader, parseSpoolLine } from '../../../../src/operations/auditSpool.js';
import type { AuditRecord } from '../../../../src/journal/auditRecords.js';
import type { Logger } from '../../../../src/service/logger.js';
import { ManualTime } from '../../../helpers/manualTime.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A daemon connection whose `calls.ingestSpool` is the real reader, counting how often it was asked. */
function daemonReading(audited: AuditRecord[]): { client: DaemonClient; asked: () => number } {
  const spoolReader = new AuditSpoolReader({ append: (record) => audited.push(record), principal: 'me', now: () => Date.now(), logger: quiet });
  let asked = 0;
  const client = {
    closed: false,
    call: (method: string, params: Record<string, unknown>) => {
      if (method !== 'calls.ingestSpool') return Promise.reject(new Error(`unexpected ${method}`));
      asked += 1;
      return Promise.resolve(spoolReader.ingest(params['file'] as string, params['final'] === true));
    },
  } as unknown as DaemonClient;
  return { client, asked: () => asked };
}

function settled(n: number): SettledCall {
  return { sessionId: 's1', server: 'fs', tool: 'read', args: { n }, caller: { head: 'mcp' } };
}

function setup(options: { busy?: () => boolean } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'as-queue-'));
  homes.push(home);
  const spool = openAuditSpool(home, quiet);
  if (spool === undefined) throw new Error('no spool');
  const time = new ManualTime();
  const audited: AuditRecord[] = [];
  const daemon = daemonReading(audited);
  let closing = false;
  const queue = createAuditQueue({
    logger: quiet,
    timers: time,
    maxBacklog: 10_000,
    client: () => daemon.client,
    closing: () => closing,
    busy: options.busy ?? (() => true),
    spool,
  });
  const spooledLines = (): string[] => {
    const file = spool.files[spool.files.length - 1]?.path;
    return file === undefined ? [] : readFileSync(file, 'utf8').split('\n').filter(Boolean);
  };
  /** The records the spool holds, as the daemon's reader reads them; a line it refuses fails the test. */
  const spooledRecords = (): Record<string, unknown>[] =>
    spooledLines().flatMap((line) => {
      const parsed = parseSpoolLine(line);
      if (parsed === undefined || parsed.refused > 0) throw new Error(`the reader refuses the spool line ${line}`);
      return parsed.records;
    });
  return { home, spool, time, audited, daemon, queue, spooledLines, spooledRecords, close: () => ((closing = true), queue.close()) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the audit queue with a spool', () => {
  it('writes each record to the spool within 20 ms while calls keep running, with the digest core computes; the daemon reads it only after the burst', async () => {
    let busy = true;
    const { time, queue, spool, spooledLines, spooledRecords, audited, daemon } = setup({ busy: () => busy });
    queue.record(settled(1), 'ok', 3);
    queue.record(settled(2), 'denied');
    await spool.written();
    expect(spooledLines()).toEqual([]);
    time.advance(20);
    await spool.written();
    // Both calls have one head (session, server, tool, caller): one line holds them.
    expect(spooledLines()).toHaveLength(1);
    expect(spooledRecords()).toEqual([
      { sessionId: 's1', server: 'fs', tool: 'read', caller: { head: 'mcp' }, argsSha256: digestOf({ n: 1 }), outcome: 'ok', durationMs: 3 },
      { sessionId: 's1', server: 'fs', tool: 'read', caller: { head: 'mcp' }, argsSha256: digestOf({ n: 2 }), outcome: 'denied', deniedReason: 'policy' },
    ]);
    // Still busy: the daemon is not asked yet (the burst is not slowed by its audit writes).
    time.advance(200);
    await settle();
    expect(daemon.asked()).toBe(0);
    busy = false;
    time.advance(40);
    await settle();
    expect(audited.map((record) => record.argsSha256)).toEqual([digestOf({ n: 1 }), digestOf({ n: 2 })]);
    expect(queue.backlog).toBe(0);
  });

  it('spools each call as its own record, whatever sessions, servers, tools, rules and callers follow each other', async () => {
    // Record heads are reused from call to call: a head kept too long would put one call's tool or rule on the next.
    const callers = [{ head: 'mcp' }, { head: 'mcp', clientName: 'é' }];
    const call = fc.record({
      sessionId: fc.constantFrom('s1', 's2'),
      server: fc.constantFrom('fs', 'git'),
      tool: fc.constantFrom('read', 'write', 'rëad'),
      ruleId: fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }),
      caller: fc.constantFrom(0, 1),
      n: fc.integer(),
      outcome: fc.constantFrom('ok' as const, 'error' as const, 'denied' as const),
      durationMs: fc.option(fc.double({ min: 0, max: 1e4, noNaN: true }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 30 }), async (calls) => {
        const { time, queue, spool, spooledRecords } = setup();
        for (const c of calls) {
          const local: SettledCall = { sessionId: c.sessionId, server: c.server, tool: c.tool, args: { n: c.n }, caller: callers[c.caller] as Record<string, unknown> };
          if (c.ruleId !== undefined) local.ruleId = c.ruleId;
          queue.record(local, c.outcome, c.durationMs);
        }
        time.advance(20);
        await spool.written();
        expect(spooledRecords()).toEqual(
          calls.map((c) => ({
            sessionId: c.sessionId,
            server: c.server,
            tool: c.tool,
            caller: callers[c.caller],
            ...(c.ruleId === undefined ? {} : { ruleId: c.ruleId }),
            argsSha256: digestOf({ n: c.n }),
            outcome: c.outcome,
            ...(c.outcome === 'denied' ? { deniedReason: 'policy' } : {}),
            ...(c.durationMs === undefined ? {} : { durationMs: Math.round(c.durationMs) }),
          })),
        );
        await queue.close();
      }),
      { numRuns: 150 },
    );
  });

  it('splits the calls of one head over lines the daemon reads whole: at most 128 calls a line, and a large caller on shorter lines', async () => {
    for (const caller of [{ head: 'mcp' }, { head: 'mcp', note: 'x'.repeat(12_000) }]) {
      const { time, queue, spool, spooledLines, spooledRecords } = setup();
      for (let n = 0; n < 300; n += 1) queue.record({ ...settled(n), caller }, 'ok', n);
      time.advance(20);
      await spool.written();
      const lines = spooledLines();
      for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(64 * 1024);
      expect(lines.length).toBeGreaterThanOrEqual(3);
      expect(spooledRecords().map((record) => [record['argsSha256'], record['durationMs'], record['caller']])).toEqual(
        Array.from({ length: 300 }, (_, n) => [digestOf({ n }), n, caller]),
      );
      await queue.close();
    }
  });

  it('a long burst that leaves 5,000 records unread has the daemon read them at once: nothing is dropped for a full backlog', async () => {
    const { time, queue, spool, audited } = setup();
    for (let n = 0; n < 12_000; n += 1) {
      queue.record(settled(n), 'ok', 1);
      if (n % 500 === 499) {
        time.advance(20);
        await spool.written();
        await settle();
      }
    }
    time.advance(20);
    await spool.written();
    await settle();
    expect(queue.dropped).toBe(0);
    // Calls still run, so the last few thousand wait for the burst to end; every record is audited or waits in the spool.
    expect(audited.length).toBeGreaterThanOrEqual(5000);
    expect(audited.length + queue.backlog).toBe(12_000);
  });

  it('closing has the daemon read everything and remove the spool file; each record is audited once', async () => {
    const { home, queue, audited, close } = setup();
    for (let n = 0; n < 3; n += 1) queue.record(settled(n), 'ok', 1);
    await close();
    expect(audited.map((record) => record.argsSha256)).toEqual([0, 1, 2].map((n) => digestOf({ n })));
    expect(readdirSync(join(home, 'spool'))).toEqual([]);
  });
});
