// The daemon's reading of gateway audit spools (SPEC §14 audit durability): each
// complete line is audited once, however often the daemon is told to read and
// across daemon restarts; a torn last line waits for its newline; lines that are
// no audit record are refused and counted; and only a file that is a spool —
// its name, a private `spool` folder, a private regular file, not a link — is read.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../src/journal/auditRecords.js';
import { AuditSpoolReader, spoolDirOf, spoolPathProblem } from '../../../src/operations/auditSpool.js';
import type { Logger } from '../../../src/service/logger.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;
const DIGEST = `v1:sha256:${'a'.repeat(64)}`;
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function spoolHome(): { dir: string; file: (pid?: number) => string } {
  const home = mkdtempSync(join(tmpdir(), 'as-spool-'));
  roots.push(home);
  const dir = spoolDirOf(home);
  mkdirSync(dir, { mode: 0o700 });
  let counter = 0;
  return { dir, file: (pid = 4242) => join(dir, `mcp-${pid}-${(counter++).toString(16).padStart(16, '0')}.jsonl`) };
}

function line(tool: string, at = 1_700_000_000_000): string {
  return `${JSON.stringify({ at, record: { sessionId: 's1', server: 'fs', tool, argsSha256: DIGEST, outcome: 'ok', caller: { head: 'mcp' }, durationMs: 2 } })}\n`;
}

function reader(alive: (pid: number) => boolean = () => true): { reader: AuditSpoolReader; audited: AuditRecord[] } {
  const audited: AuditRecord[] = [];
  return { reader: new AuditSpoolReader({ append: (record) => audited.push(record), principal: 'me', now: () => 1_800_000_000_000, logger: quiet, alive }), audited };
}

describe('AuditSpoolReader: a spool is audited once', () => {
  it('reads each complete line once, however often it is told to, and keeps a torn last line until its newline arrives', () => {
    const { file } = spoolHome();
    const path = file();
    writeFileSync(path, line('a') + line('b') + line('c').slice(0, 20), { mode: 0o600 });
    const { reader: daemon, audited } = reader();
    expect(daemon.ingest(path)).toMatchObject({ recorded: 2, refused: 0, removed: false });
    expect(daemon.ingest(path)).toMatchObject({ recorded: 0, refused: 0 });
    appendFileSync(path, line('c').slice(20) + line('d'));
    expect(daemon.ingest(path)).toMatchObject({ recorded: 2 });
    expect(audited.map((record) => record.tool)).toEqual(['a', 'b', 'c', 'd']);
    expect(audited[0]).toMatchObject({ ts: new Date(1_700_000_000_000).toISOString(), principal: 'me', sessionId: 's1', server: 'fs', argsSha256: DIGEST, outcome: 'ok', durationMs: 2 });
  });

  it('a restarted daemon goes on from the progress the last one kept beside the file: nothing is audited twice', () => {
    const { file } = spoolHome();
    const path = file();
    writeFileSync(path, line('a') + line('b'), { mode: 0o600 });
    expect(reader().reader.ingest(path).recorded).toBe(2);
    expect(readFileSync(`${path}.read`, 'utf8')).toBe(String((line('a') + line('b')).length));
    appendFileSync(path, line('c'));
    const next = reader();
    expect(next.reader.ingest(path).recorded).toBe(1);
    expect(next.audited.map((record) => record.tool)).toEqual(['c']);
  });

  it('keeps its progress, and removes a file read whole, only once the audit has the lines on disk: a daemon killed before reads them again', async () => {
    const { file } = spoolHome();
    const path = file();
    writeFileSync(path, line('a'), { mode: 0o600 });
    let release!: () => void;
    const onDisk = new Promise<void>((resolve) => (release = resolve));
    const audited: AuditRecord[] = [];
    const daemon = new AuditSpoolReader({ append: (record) => audited.push(record), flushed: () => onDisk, principal: 'me', now: () => 1_800_000_000_000, logger: quiet });
    expect(daemon.ingest(path).recorded).toBe(1);
    expect(existsSync(`${path}.read`)).toBe(false);
    // Killed now: the next daemon has no progress and reads the line again.
    expect(reader().reader.ingest(path).recorded).toBe(1);
    rmSync(`${path}.read`);
    // This daemon itself never reads it twice, and a final reading waits for the disk too.
    expect(daemon.ingest(path, true)).toMatchObject({ recorded: 0, removed: true });
    expect(existsSync(path)).toBe(true);
    expect(daemon.ingest(path)).toMatchObject({ recorded: 0, removed: true });
    release();
    await onDisk;
    await new Promise((resolve) => setImmediate(resolve));
    expect(existsSync(path) || existsSync(`${path}.read`)).toBe(false);
    expect(audited).toHaveLength(1);
  });

  it('a final reading removes the file and its progress; a later one finds nothing and audits nothing', () => {
    const { file } = spoolHome();
    const path = file();
    writeFileSync(path, line('a'), { mode: 0o600 });
    const { reader: daemon, audited } = reader();
    expect(daemon.ingest(path, true)).toMatchObject({ recorded: 1, removed: true });
    expect(existsSync(path) || existsSync(`${path}.read`)).toBe(false);
    expect(daemon.ingest(path)).toMatchObject({ recorded: 0, removed: true });
    expect(audited).toHaveLength(1);
  });

  it('refuses and counts lines that are no audit record (the calls.record rules), auditing the rest', () => {
    const { file } = spoolHome();
    const path = file();
    const bad = [
      'not json\n',
      `${JSON.stringify({ at: 1, record: { sessionId: 's1', server: 'fs', tool: 't', argsSha256: 'v1:sha256:short', outcome: 'ok' } })}\n`,
      `${JSON.stringify({ at: 1, record: { sessionId: 's1', server: 'fs', tool: 't', argsSha256: DIGEST, outcome: 'approved' } })}\n`,
      `${JSON.stringify({ at: 1, record: { sessionId: 's1', server: 'fs', tool: 't', argsSha256: DIGEST, outcome: 'ok', extra: 1 } })}\n`,
      `${JSON.stringify({ at: 'now', record: {} })}\n`,
    ];
    writeFileSync(path, line('good') + bad.join('') + line('also good'), { mode: 0o600 });
    const { reader: daemon, audited } = reader();
    expect(daemon.ingest(path)).toMatchObject({ recorded: 2, refused: bad.length });
    expect(audited.map((record) => record.tool)).toEqual(['good', 'also good']);
  });

  it('reads a line of calls that share a head as one record per call, refusing and counting the calls that are none', () => {
    const { file } = spoolHome();
    const path = file();
    const head = { sessionId: 's1', server: 'fs', tool: 't', caller: { head: 'mcp' }, ruleId: 'r1' };
    const calls = [[DIGEST, 'ok', 2], [DIGEST, 'denied'], ['v1:sha256:short', 'ok'], [DIGEST, 'approved'], [DIGEST], 'not a call', [DIGEST, 'error', -1], [DIGEST, 'cancelled', 0]];
    const lines = [
      { at: 1_700_000_000_000, head, calls },
      // A head may not carry what each call gives: the whole line is refused.
      { at: 1, head: { ...head, outcome: 'ok' }, calls: [[DIGEST, 'ok']] },
      { at: 1, head, calls: [[DIGEST, 'ok']], extra: 1 },
      { at: 1, head: [head], calls: [[DIGEST, 'ok']] },
    ];
    writeFileSync(path, lines.map((value) => `${JSON.stringify(value)}\n`).join('') + line('legacy'), { mode: 0o600 });
    const { reader: daemon, audited } = reader();
    expect(daemon.ingest(path)).toMatchObject({ recorded: 4, refused: 5 + 3 });
    expect(audited.map((record) => [record.tool, record.outcome, record.durationMs, record.deniedReason, record.ruleId])).toEqual([
      ['t', 'ok', 2, undefined, 'r1'],
      ['t', 'denied', undefined, 'policy', 'r1'],
      ['t', 'cancelled', 0, undefined, 'r1'],
      ['legacy', 'ok', 2, undefined, undefined],
    ]);
  });

  it('a time later than now (a clock that jumped) is audited at now', () => {
    const { file } = spoolHome();
    const path = file();
    writeFileSync(path, line('future', 1_900_000_000_000), { mode: 0o600 });
    const { reader: daemon, audited } = reader();
    daemon.ingest(path);
    expect(audited[0]?.ts).toBe(new Date(1_800_000_000_000).toISOString());
  });

  it('at start, reads every spool of the folder and removes those of gateways that are gone, keeping the running ones', () => {
    const { dir, file } = spoolHome();
    const gone = file(111);
    const running = file(222);
    writeFileSync(gone, line('gone'), { mode: 0o600 });
    writeFileSync(running, line('running'), { mode: 0o600 });
    writeFileSync(join(dir, 'mcp-333-00000000000000ff.jsonl.read'), '10', { mode: 0o600 });
    const { reader: daemon, audited } = reader((pid) => pid === 222);
    expect(daemon.ingestDir(dir)).toEqual({ recorded: 2, refused: 0, files: 2 });
    expect(audited.map((record) => record.tool).sort()).toEqual(['gone', 'running']);
    expect(existsSync(gone)).toBe(false);
    expect(existsSync(running)).toBe(true);
    expect(existsSync(join(dir, 'mcp-333-00000000000000ff.jsonl.read'))).toBe(false);
    expect(daemon.ingestDir(dir).recorded).toBe(0);
  });
});

describe('AuditSpoolReader: only a spool is read (a client names the file)', () => {
  it('refuses a path that is not a spool file name, not absolute, or not in a folder named spool', () => {
    const { dir } = spoolHome();
    expect(spoolPathProblem('spool/mcp-1-0000000000000000.jsonl')).toMatch(/not an absolute path/);
    expect(spoolPathProblem(join(dir, 'journal.db'))).toMatch(/not named like a spool file/);
    expect(spoolPathProblem(join(dir, 'mcp-1-0000000000000000.jsonl.read'))).toMatch(/not named like a spool file/);
    expect(spoolPathProblem(join(dir, '..', 'mcp-1-0000000000000000.jsonl'))).toMatch(/not in a folder named spool/);
    expect(spoolPathProblem(join(dir, 'mcp-1-0000000000000000.jsonl'))).toBeUndefined();
  });

  it('refuses a spool folder open to others, and a spool file open to others or a symbolic link, auditing nothing', () => {
    const { dir, file } = spoolHome();
    const { reader: daemon, audited } = reader();
    const open = file();
    writeFileSync(open, line('a'), { mode: 0o644 });
    chmodSync(open, 0o644);
    expect(() => daemon.ingest(open)).toThrow(/open to other users/);
    const target = join(dir, '..', 'elsewhere.jsonl');
    writeFileSync(target, line('b'), { mode: 0o600 });
    const link = file();
    symlinkSync(target, link);
    expect(() => daemon.ingest(link)).toThrow();
    const good = file();
    writeFileSync(good, line('c'), { mode: 0o600 });
    chmodSync(dir, 0o755);
    expect(() => daemon.ingest(good)).toThrow(/open to other users/);
    chmodSync(dir, 0o700);
    expect(daemon.ingest(good).recorded).toBe(1);
    expect(audited.map((record) => record.tool)).toEqual(['c']);
    expect(existsSync(target)).toBe(true);
  });
});
