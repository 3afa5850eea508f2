import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import {
  AUDIT_GENESIS,
  AuditLog,
  auditToCsv,
  exportAudit,
  lineDigest,
  openAuditFile,
  verifyAudit,
  type AuditFile,
  type AuditRecord,
} from '../../../src/journal/auditLog.js';

const DAY = 86_400_000;

function record(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    ts: '2026-01-01T00:00:00.000Z',
    principal: 'local:owner',
    sessionId: 's1',
    server: 'fs',
    tool: 'write_file',
    argsSha256: 'v1:sha256:abc',
    outcome: 'ok',
    channel: 'cli',
    approvalId: 'abcde',
    waitedForConsentMs: 12,
    durationMs: 3,
    ...overrides,
  };
}

/** The real day files, with every open, write, sync and close counted; `fault` can make one call fail. */
function countingFiles(fault: { write?: 'half' | 'none'; sync?: boolean } = {}) {
  const calls = { open: [] as string[], write: 0, sync: 0, close: 0 };
  const openFile = async (file: string): Promise<AuditFile> => {
    calls.open.push(path.basename(file));
    const real = await openAuditFile(file);
    return {
      write: async (bytes) => {
        calls.write += 1;
        const mode = fault.write;
        if (mode === undefined) return real.write(bytes);
        fault.write = undefined;
        if (mode === 'half') await real.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
        throw new Error('EIO: write failed');
      },
      sync: async () => {
        calls.sync += 1;
        if (fault.sync === true) {
          fault.sync = false;
          throw new Error('EIO: fsync failed');
        }
        return real.sync();
      },
      size: () => real.size(),
      truncate: (size) => real.truncate(size),
      isCurrent: () => real.isCurrent(),
      close: async () => {
        calls.close += 1;
        return real.close();
      },
    };
  };
  return { calls, openFile };
}

function readLines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

describe('R-AUD-1..3 audit log', () => {
  let tmp: string;
  let dir: string;
  let clock: FakeClock;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-audit-'));
    dir = path.join(tmp, 'audit');
    clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
  });

  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('R-AUD-1 writes one JSON line per record to audit/<date>.jsonl (0600, dir 0700) with seq and prev', async () => {
    const log = new AuditLog({ dir, clock });
    log.append(record());
    log.append(record({ outcome: 'consent_denied', deniedReason: 'consent_denied' }));
    await log.flush();
    const file = path.join(dir, '2026-01-01.jsonl');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const lines = readLines(file);
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(first).toEqual({ seq: 1, prev: AUDIT_GENESIS, ...record() });
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ seq: 2, prev: lineDigest(lines[0] ?? ''), outcome: 'consent_denied' });
  });

  it('R-AUD-1 drops fields that are not audit fields, so raw arguments never reach the log', async () => {
    const log = new AuditLog({ dir, clock });
    const sneaky = { ...record(), args: { password: 'hunter2' }, arguments: 'hunter2' } as unknown as AuditRecord;
    log.append(sneaky);
    await log.flush();
    const text = fs.readFileSync(path.join(dir, '2026-01-01.jsonl'), 'utf8');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('"argsSha256":"v1:sha256:abc"');
  });

  it('R-AUD-3 append never blocks: nothing is written until the event loop turns', async () => {
    const log = new AuditLog({ dir, clock });
    log.append(record());
    expect(fs.existsSync(path.join(dir, '2026-01-01.jsonl'))).toBe(false);
    await log.flush();
    expect(readLines(path.join(dir, '2026-01-01.jsonl'))).toHaveLength(1);
  });

  it('R-AUD-3 a failing write never throws into the caller; the records are held (not lost), the failure reported', async () => {
    const seen: unknown[] = [];
    const log = new AuditLog({
      dir,
      clock,
      onFailure: (error) => seen.push(error),
      openFile: () => Promise.reject(new Error('disk full')),
    });
    expect(() => log.append(record())).not.toThrow();
    log.append(record());
    await log.flush();
    expect(log.failures).toBe(0);
    expect(log.held).toBe(2);
    expect(log.failing).toBe(true);
    expect(seen).toHaveLength(1);
    expect(String(seen[0])).toContain('disk full');
    // Closed while the disk takes none: those two are lost now, and counted.
    await log.close();
    expect(log.failures).toBe(2);
  });

  it('R-AUD-2 continues the chain across days and across restarts', async () => {
    const first = new AuditLog({ dir, clock });
    first.append(record());
    await first.flush();
    clock.advance(DAY);
    first.append(record());
    await first.flush();
    const second = new AuditLog({ dir, clock });
    second.append(record());
    await second.flush();
    expect(fs.readdirSync(dir).sort()).toEqual(['2026-01-01.jsonl', '2026-01-02.jsonl']);
    const dayTwo = readLines(path.join(dir, '2026-01-02.jsonl'));
    expect(dayTwo.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([2, 3]);
    expect(JSON.parse(dayTwo[0] ?? '')).toMatchObject({ prev: lineDigest(readLines(path.join(dir, '2026-01-01.jsonl'))[0] ?? '') });
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 3 });
  });

  it('R-AUD-2 verify passes on an intact log and names the first broken line after one line is edited', async () => {
    const log = new AuditLog({ dir, clock });
    for (let i = 0; i < 5; i += 1) log.append(record({ durationMs: i }));
    await log.flush();
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 5 });
    const file = path.join(dir, '2026-01-01.jsonl');
    const lines = readLines(file);
    lines[2] = (lines[2] ?? '').replace('"durationMs":2', '"durationMs":200');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const result = verifyAudit(dir);
    expect(result.ok).toBe(false);
    // Line 4's prev no longer matches the edited line 3, and the sequence runs on, so line 3 is named.
    expect(result.firstBroken).toMatchObject({ file: '2026-01-01.jsonl', line: 3 });
    expect(result.firstBroken?.reason).toMatch(/changed after it was written.*2026-01-01.jsonl:4/);
    expect(result.lines).toBe(2);
  });

  it('R-AUD-2 verify names a removed line and a torn line', async () => {
    const log = new AuditLog({ dir, clock });
    for (let i = 0; i < 4; i += 1) log.append(record({ durationMs: i }));
    await log.flush();
    const file = path.join(dir, '2026-01-01.jsonl');
    const lines = readLines(file);
    fs.writeFileSync(file, `${[lines[0], lines[2], lines[3]].join('\n')}\n`);
    expect(verifyAudit(dir).firstBroken).toMatchObject({ line: 2, reason: expect.stringMatching(/removed/) });
    fs.writeFileSync(file, `${lines[0]}\n{"seq":2,`);
    expect(verifyAudit(dir).firstBroken).toMatchObject({ line: 2, reason: expect.stringMatching(/not valid JSON/) });
  });

  it('after a torn last line, the next record starts on its own line and verify reports the torn one', async () => {
    const log = new AuditLog({ dir, clock });
    log.append(record());
    await log.flush();
    fs.appendFileSync(path.join(dir, '2026-01-01.jsonl'), '{"seq":2,"pr');
    const next = new AuditLog({ dir, clock });
    next.append(record());
    await next.flush();
    const lines = readLines(path.join(dir, '2026-01-01.jsonl'));
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] ?? '')).toMatchObject({ seq: 3, prev: lineDigest('{"seq":2,"pr') });
    expect(verifyAudit(dir).firstBroken).toMatchObject({ line: 2 });
  });

  it('R-AUD-3 prunes files older than auditRetentionDays and verify still passes from the anchor', async () => {
    const log = new AuditLog({ dir, clock, retentionDays: 2 });
    for (let day = 0; day < 5; day += 1) {
      log.append(record());
      await log.flush();
      clock.advance(DAY);
    }
    log.prune();
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()).toEqual(['2026-01-04.jsonl', '2026-01-05.jsonl']);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 2 });
    // Deleting the oldest retained file is still detected.
    fs.rmSync(path.join(dir, '2026-01-04.jsonl'));
    expect(verifyAudit(dir).ok).toBe(false);
  });

  it('R-AUD-3 when every file is pruned the chain continues from the anchor after a restart', async () => {
    const log = new AuditLog({ dir, clock, retentionDays: 1 });
    log.append(record());
    log.append(record());
    await log.flush();
    clock.advance(5 * DAY);
    log.prune();
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
    const next = new AuditLog({ dir, clock, retentionDays: 1 });
    next.append(record());
    await next.flush();
    const [line] = readLines(path.join(dir, '2026-01-06.jsonl'));
    expect(JSON.parse(line ?? '')).toMatchObject({ seq: 3 });
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 1 });
  });

  it('R-AUD-2 exports records (since filters by ts) and renders CSV without formula injection', async () => {
    const log = new AuditLog({ dir, clock });
    log.append(record({ ts: '2026-01-01T10:00:00.000Z' }));
    log.append(record({ ts: '2026-01-01T11:00:00.000Z', principal: '=cmd()', caller: { name: 'a,b' } }));
    await log.flush();
    const all = exportAudit(dir);
    expect(all).toHaveLength(2);
    expect(all[0]).toEqual(record({ ts: '2026-01-01T10:00:00.000Z' }));
    expect(exportAudit(dir, { since: Date.parse('2026-01-01T10:30:00.000Z') })).toHaveLength(1);
    const csv = auditToCsv(all).split('\n');
    expect(csv[0]).toBe(
      'ts,principal,sessionId,server,tool,kind,argsSha256,outcome,deniedReason,channel,approvalId,ruleId,waitedForConsentMs,durationMs,caller,effectId,replayed,claimedChannel,peer,agent,callId,decidedBy,approvedBy,presence,credentialId,risk,confined',
    );
    expect(csv[2]).toContain("'=cmd()");
    expect(csv[2]).toContain('"{""name"":""a,b""}"');
    expect(exportAudit(path.join(tmp, 'missing'))).toEqual([]);
  });

  it('R-AUD-3 keeps the day file open across batches: one open, one write and one fsync per batch', async () => {
    const { calls, openFile } = countingFiles();
    const log = new AuditLog({ dir, clock, openFile });
    for (let batch = 0; batch < 3; batch += 1) {
      for (let i = 0; i < 4; i += 1) log.append(record({ durationMs: batch * 10 + i }));
      await log.flush();
    }
    expect(calls).toEqual({ open: ['2026-01-01.jsonl'], write: 3, sync: 3, close: 0 });
    expect(readLines(path.join(dir, '2026-01-01.jsonl'))).toHaveLength(12);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 12 });
    await log.close();
    expect(calls.close).toBe(1);
    // A record after close opens the file again and continues the chain.
    log.append(record());
    await log.close();
    expect(calls.open).toEqual(['2026-01-01.jsonl', '2026-01-01.jsonl']);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 13 });
  });

  it('R-AUD-2 a new day closes the open file and continues the chain in the new one', async () => {
    const { calls, openFile } = countingFiles();
    const log = new AuditLog({ dir, clock, openFile });
    log.append(record());
    await log.flush();
    clock.advance(DAY);
    log.append(record());
    await log.close();
    expect(calls.open).toEqual(['2026-01-01.jsonl', '2026-01-02.jsonl']);
    expect(calls.close).toBe(2);
    expect(readLines(path.join(dir, '2026-01-02.jsonl')).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([2]);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 2 });
  });

  it('R-AUD-3 a day file deleted while open is created again, so later records are not written into a deleted file', async () => {
    const log = new AuditLog({ dir, clock });
    log.append(record());
    await log.flush();
    const file = path.join(dir, '2026-01-01.jsonl');
    fs.rmSync(file);
    log.append(record({ durationMs: 99 }));
    await log.close();
    const lines = readLines(file);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ seq: 2, durationMs: 99 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('issue 35: a torn write is cut back out of the file and the batch held; the retry writes it whole, so the chain has no torn line and no gap', async () => {
    const fault: { write?: 'half' | 'none' } = {};
    const { openFile } = countingFiles(fault);
    const failures: unknown[] = [];
    const recovered: unknown[] = [];
    const log = new AuditLog({ dir, clock, openFile, onFailure: (error) => failures.push(error), onRecovered: (info) => recovered.push(info), retryMs: 60_000 });
    const file = path.join(dir, '2026-01-01.jsonl');
    log.append(record());
    await log.flush();
    const before = fs.statSync(file).size;
    fault.write = 'half';
    log.append(record({ durationMs: 1 }));
    log.append(record({ durationMs: 2 }));
    await log.flush();
    // Nothing of the failed batch stays on disk, and nothing reads past the last synced line.
    expect(fs.statSync(file).size).toBe(before);
    expect(log.held).toBe(2);
    expect(log.durableSeq()).toBe(1);
    let durable = false;
    const waiting = log.durable().then(() => (durable = true));
    // Appended while held: waits behind the held batch, which keeps its seqs.
    log.append(record({ durationMs: 3 }));
    await log.flush();
    expect(durable).toBe(false);
    await log.retry();
    await waiting;
    expect(log.held).toBe(0);
    expect(log.failures).toBe(0);
    expect(log.durableSeq()).toBe(4);
    const lines = readLines(file).map((l) => JSON.parse(l) as { seq: number; durationMs: number });
    expect(lines.map((l) => [l.seq, l.durationMs])).toEqual([[1, 3], [2, 1], [3, 2], [4, 3]]);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 4 });
    expect(failures.map(String)).toEqual([expect.stringContaining('write failed')]);
    expect(recovered).toEqual([{ heldRecords: 3, failedAttempts: 1 }]);
    await log.close();
  });

  it('issue 35: a failed fsync cuts the unsynced lines back out and writes them again, the same bytes under the same seqs', async () => {
    const fault = { sync: false };
    const { openFile } = countingFiles(fault);
    const log = new AuditLog({ dir, clock, openFile, retryMs: 60_000 });
    log.append(record());
    await log.flush();
    fault.sync = true;
    log.append(record({ durationMs: 1 }));
    await log.flush();
    expect(log.held).toBe(1);
    expect(readLines(path.join(dir, '2026-01-01.jsonl'))).toHaveLength(1);
    log.append(record({ durationMs: 2 }));
    await log.retry();
    await log.close();
    expect(readLines(path.join(dir, '2026-01-01.jsonl')).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 3 });
    expect(log.failures).toBe(0);
  });

  it('issue 35: a batch whose cut-back failed is cut back before the retry writes it', async () => {
    const { openFile } = countingFiles();
    let failTruncate = true;
    let failWrite = false;
    const file = path.join(dir, '2026-01-01.jsonl');
    const log = new AuditLog({
      dir,
      clock,
      retryMs: 60_000,
      openFile: async (name) => {
        const real = await openFile(name);
        return {
          ...real,
          write: async (bytes) => {
            if (!failWrite) return real.write(bytes);
            failWrite = false;
            await real.write(bytes.subarray(0, 7));
            throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          },
          truncate: (size) => (failTruncate ? Promise.reject(new Error('EIO: truncate failed')) : real.truncate(size)),
        };
      },
    });
    log.append(record());
    await log.flush();
    const before = fs.statSync(file).size;
    failWrite = true;
    log.append(record({ durationMs: 5 }));
    await log.flush();
    // The cut-back failed: 7 torn bytes stay until the next attempt.
    expect(fs.statSync(file).size).toBe(before + 7);
    failTruncate = false;
    await log.retry();
    await log.close();
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 2 });
  });

  it('issue 35: beyond maxHeld, records are lost and counted; the retry timer writes what is held without a new append', async () => {
    let broken = true;
    const log = new AuditLog({
      dir,
      clock,
      maxHeld: 3,
      retryMs: 20,
      openFile: async (name) => {
        if (broken) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
        return openAuditFile(name);
      },
    });
    for (let i = 0; i < 5; i += 1) log.append(record({ durationMs: i }));
    await log.flush();
    expect(log.held).toBe(3);
    expect(log.failures).toBe(2);
    broken = false;
    await log.durable();
    expect(log.held).toBe(0);
    expect(readLines(path.join(dir, '2026-01-01.jsonl')).map((l) => (JSON.parse(l) as { durationMs: number }).durationMs)).toEqual([0, 1, 2]);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 3 });
    await log.close();
  });

  it('R-AUD-2 a restart continues the chain from the end of a large day file', async () => {
    const log = new AuditLog({ dir, clock });
    // Lines longer than one read chunk, so the end of the file is found in growing chunks.
    for (let i = 0; i < 40; i += 1) log.append(record({ caller: { pad: 'é'.repeat(2000 + i) } }));
    await log.close();
    const next = new AuditLog({ dir, clock });
    next.append(record());
    await next.close();
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 41 });
  });

  it('R-AUD-1 written() resolves once the line reached write(2), before its fsync; at once when that write failed; durable() still waits for the fsync', async () => {
    let releaseSync: (() => void) | undefined;
    let syncs = 0;
    let failWrite = false;
    let holdSyncs = true;
    const openFile = async (file: string): Promise<AuditFile> => {
      const real = await openAuditFile(file);
      return {
        write: async (bytes) => {
          if (failWrite) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          return real.write(bytes);
        },
        // Every fsync waits for the test: what written() promises must not need it.
        sync: async () => {
          syncs += 1;
          if (holdSyncs) await new Promise<void>((resolve) => (releaseSync = resolve));
          return real.sync();
        },
        size: () => real.size(),
        truncate: (size) => real.truncate(size),
        isCurrent: () => real.isCurrent(),
        close: () => real.close(),
      };
    };
    const log = new AuditLog({ dir, clock, openFile, retryMs: 60_000 });
    log.append(record({ outcome: 'started' }));
    let durable = false;
    void log.durable().then(() => (durable = true));
    await log.written();
    // In the file (the page cache) though its fsync has not returned: a kill -9 now would not lose it.
    const file = path.join(dir, '2026-01-01.jsonl');
    expect(readLines(file).map((line) => JSON.parse(line).outcome)).toEqual(['started']);
    expect(syncs).toBe(1);
    expect(durable).toBe(false);
    releaseSync?.();
    await log.flush();
    expect(durable).toBe(true);

    // A second record behind a batch in flight waits for its own write, not the first's.
    log.append(record({ outcome: 'started' }));
    const second = log.written();
    let secondDone = false;
    void second.then(() => (secondDone = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(secondDone).toBe(true);
    expect(readLines(file)).toHaveLength(2);
    holdSyncs = false;
    releaseSync?.();
    await log.flush();

    // A write that fails: written() is told (the line is held), never left waiting for room.
    failWrite = true;
    log.append(record({ outcome: 'denied' }));
    await log.written();
    await log.flush();
    expect(log.held).toBe(1);
    expect(readLines(file)).toHaveLength(2);
    // While held records wait for the retry, a new record does not wait either.
    log.append(record({ outcome: 'denied' }));
    await log.written();
    failWrite = false;
    await log.retry();
    await log.flush();
    expect(log.held).toBe(0);
    expect(readLines(file)).toHaveLength(4);
    expect(verifyAudit(dir)).toEqual({ ok: true, lines: 4 });
  });
});
