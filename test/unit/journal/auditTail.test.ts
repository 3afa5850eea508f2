// R-AUD-5: the audit files read forward from a seq, across day files, never
// returning a line whose newline is not written yet; and `audit --follow`
// printing what is appended, in a new day's file too.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followAudit } from '../../../src/heads/cli/commands/auditFollow.js';
import { lineDigest } from '../../../src/journal/auditChain.js';
import { AuditTail } from '../../../src/journal/auditTail.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'as-tail-'));
  dirs.push(dir);
  return dir;
}

const line = (seq: number, outcome = 'ok'): string => JSON.stringify({ seq, prev: 'p', ts: '2026-01-01T00:00:00.000Z', principal: 'me@h', argsSha256: 'd', outcome });

describe('R-AUD-5 AuditTail', () => {
  it('reads forward from a seq across day files, in batches, with each line\u2019s digest', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${line(1)}\n${line(2)}\n`);
    writeFileSync(join(dir, '2026-01-02.jsonl'), `${line(3)}\n${line(4)}\n`);
    const tail = new AuditTail(dir);
    expect((await tail.linesAfter(0, 10)).map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    expect((await tail.linesAfter(1, 2)).map((l) => l.seq)).toEqual([2, 3]);
    expect((await tail.linesAfter(3, 10)).map((l) => l.seq)).toEqual([4]);
    expect((await tail.linesAfter(2, 1))[0]).toMatchObject({ seq: 3, line: line(3), digest: lineDigest(line(3)), file: '2026-01-02.jsonl' });
    expect(await tail.lastSeq()).toBe(4);
    // A fresh reader (a restart) finds its place by seq alone.
    expect((await new AuditTail(dir).linesAfter(2, 10)).map((l) => l.seq)).toEqual([3, 4]);
  });

  it('issue 35: never reads past the writer\'s durable seq, so no export cursor moves past a line a failed write may cut back out', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${line(1)}\n${line(2)}\n${line(3)}\n`);
    let durable = 1;
    const tail = new AuditTail(dir, () => durable);
    expect((await tail.linesAfter(0, 10)).map((l) => l.seq)).toEqual([1]);
    expect(await tail.linesAfter(1, 10)).toEqual([]);
    expect(await tail.lastSeq()).toBe(1);
    durable = 3;
    expect((await tail.linesAfter(1, 10)).map((l) => l.seq)).toEqual([2, 3]);
    expect(await tail.lastSeq()).toBe(3);
  });

  it('returns a line only once its newline is written, and picks up a new day file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${line(1)}\n`);
    const tail = new AuditTail(dir);
    expect((await tail.linesAfter(0, 10)).map((l) => l.seq)).toEqual([1]);
    const next = line(2);
    appendFileSync(join(dir, '2026-01-01.jsonl'), next.slice(0, 10));
    expect(await tail.linesAfter(1, 10)).toEqual([]);
    appendFileSync(join(dir, '2026-01-01.jsonl'), `${next.slice(10)}\n`);
    expect((await tail.linesAfter(1, 10)).map((l) => l.seq)).toEqual([2]);
    writeFileSync(join(dir, '2026-01-02.jsonl'), `${line(3)}\n`);
    expect((await tail.linesAfter(2, 10)).map((l) => l.seq)).toEqual([3]);
  });

  it('a missing directory is no lines, not an error', async () => {
    expect(await new AuditTail(join(tempDir(), 'absent')).linesAfter(0, 10)).toEqual([]);
  });
});

describe('R-AUD-5 audit --follow', () => {
  it('prints only lines written after it started, as NDJSON, across a new day file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${line(1)}\n`);
    const out: string[] = [];
    const stop = new AbortController();
    const running = followAudit({ dir, json: true, signal: stop.signal, pollMs: 20, write: (text) => out.push(text) > 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    appendFileSync(join(dir, '2026-01-01.jsonl'), `${line(2, 'denied')}\n`);
    writeFileSync(join(dir, '2026-01-02.jsonl'), `${line(3)}\n`);
    await expect.poll(() => out.length, { timeout: 2000 }).toBe(2);
    stop.abort();
    await running;
    expect(out.map((text) => (JSON.parse(text) as { seq: number }).seq)).toEqual([2, 3]);
    expect(out.every((text) => text.endsWith('\n'))).toBe(true);
  });
});
