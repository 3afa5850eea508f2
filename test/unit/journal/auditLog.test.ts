import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/clock.js';
import {
  AUDIT_GENESIS,
  AuditLog,
  auditToCsv,
  exportAudit,
  lineDigest,
  verifyAudit,
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

  it('R-AUD-3 a failing write never throws into the caller; failures are counted and reported', async () => {
    const seen: unknown[] = [];
    const log = new AuditLog({
      dir,
      clock,
      onFailure: (error) => seen.push(error),
      appendFile: () => Promise.reject(new Error('disk full')),
    });
    expect(() => log.append(record())).not.toThrow();
    log.append(record());
    await log.flush();
    expect(log.failures).toBe(2);
    expect(seen).toHaveLength(1);
    expect(String(seen[0])).toContain('disk full');
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
      'ts,principal,sessionId,server,tool,kind,argsSha256,outcome,deniedReason,channel,approvalId,ruleId,waitedForConsentMs,durationMs,caller,effectId,replayed,claimedChannel,peer,agent,callId',
    );
    expect(csv[2]).toContain("'=cmd()");
    expect(csv[2]).toContain('"{""name"":""a,b""}"');
    expect(exportAudit(path.join(tmp, 'missing'))).toEqual([]);
  });
});
