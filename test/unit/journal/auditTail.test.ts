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

  it('issue 35: a backlog larger than one read window is read a window at a time, every line once and in order, a line longer than the window whole', async () => {
    const dir = tempDir();
    const padded = (seq: number, size: number): string => JSON.stringify({ seq, prev: 'p', ts: '2026-01-01T00:00:00.000Z', pad: 'x'.repeat(size) });
    // About 1.2 MB: several 256 KiB windows, with one 600 KB line in the middle of the file.
    const lines = Array.from({ length: 3000 }, (_, i) => padded(i + 1, i === 1500 ? 600_000 : 180));
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${lines.join('\n')}\n`);
    writeFileSync(join(dir, '2026-01-02.jsonl'), `${padded(3001, 10)}\n${padded(3002, 10)}\n`);
    const tail = new AuditTail(dir);
    expect((await tail.linesAfter(0, 5000)).map((l) => l.seq)).toEqual(Array.from({ length: 3002 }, (_, i) => i + 1));
    // In batches of 100 (a sink catching up): every seq once, in order, the long line whole.
    const seen: number[] = [];
    for (let cursor = 0; cursor < 3002; ) {
      const batch = await tail.linesAfter(cursor, 100);
      expect(batch.length).toBeGreaterThan(0);
      for (const got of batch) if (got.seq === 1501) expect(got.line).toBe(lines[1500]);
      seen.push(...batch.map((l) => l.seq));
      cursor = batch[batch.length - 1]?.seq ?? cursor;
    }
    expect(seen).toEqual(Array.from({ length: 3002 }, (_, i) => i + 1));
    // A fresh reader finds a place past several windows by seq alone.
    expect((await new AuditTail(dir).linesAfter(2500, 3)).map((l) => l.seq)).toEqual([2501, 2502, 2503]);
  });

  it('issue 35: lastSeq reads a large day file from its end: the last complete line, not a torn one', async () => {
    const dir = tempDir();
    const lines = Array.from({ length: 4000 }, (_, i) => JSON.stringify({ seq: i + 1, pad: 'y'.repeat(200) }));
    // The next line, longer than the first chunk read from the end, half written.
    const long = JSON.stringify({ seq: 4001, pad: 'z'.repeat(700_000) });
    writeFileSync(join(dir, '2026-01-01.jsonl'), `${lines.join('\n')}\n${long.slice(0, 400_000)}`);
    expect(await new AuditTail(dir).lastSeq()).toBe(4000);
    appendFileSync(join(dir, '2026-01-01.jsonl'), `${long.slice(400_000)}\n`);
    expect(await new AuditTail(dir).lastSeq()).toBe(4001);
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
