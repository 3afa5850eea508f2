import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/clock.js';
import { AssentError } from '../../../src/core/errors.js';
import type { Rule } from '../../../src/core/toolPolicy.js';
import { Journal, type ApprovalRecord } from '../../../src/journal/journal.js';

function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'abcde',
    sessionId: 's1',
    kind: 'tool',
    server: 'fs',
    tool: 'write_file',
    args: { path: '/srv/data/a', content: 'x', n: 1 },
    argsSha256: 'v1:sha256:00',
    requestedAt: 1000,
    expiresAt: 91_000,
    caller: { pid: 1 },
    handoff: false,
    state: 'pending',
    ...overrides,
  };
}

describe('R-J-1 journal', () => {
  let tmp: string;
  let file: string;
  let clock: FakeClock;
  let journal: Journal;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-journal-'));
    file = path.join(tmp, 'journal.db');
    clock = new FakeClock();
    journal = Journal.open(file, { clock });
  });

  afterEach(() => {
    journal.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('uses WAL with synchronous=FULL and keeps the database and its WAL files 0600 (R-STATE-2)', () => {
    journal.appendEvent({ kind: 'x', ts: 1, data: {} });
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    for (const suffix of ['-wal', '-shm']) {
      if (fs.existsSync(file + suffix)) expect(fs.statSync(file + suffix).mode & 0o777).toBe(0o600);
    }
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    const sync = (journal as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true });
    expect(sync).toBe(2);
  });

  it('stores an approval with its complete arguments and types, and reads it back after reopening', () => {
    journal.insertApproval(approval());
    journal.close();
    journal = Journal.open(file, { clock });
    expect(journal.getApproval('abcde')).toEqual(approval());
    expect(journal.getApproval('zzzzz')).toBeUndefined();
  });

  it('refuses a duplicate approval id with conflict so the caller can draw another', () => {
    journal.insertApproval(approval());
    expect(() => journal.insertApproval(approval())).toThrow(expect.objectContaining({ type: 'conflict' }));
  });

  it('R-D-5 resolveApproval is compare-and-set from pending: the first resolver wins', () => {
    journal.insertApproval(approval());
    expect(journal.resolveApproval('abcde', { state: 'approved', channel: 'cli', scope: 'session', decidedAt: 2000 })).toBe(true);
    expect(journal.resolveApproval('abcde', { state: 'denied', channel: 'web', reason: 'no', decidedAt: 2001 })).toBe(false);
    expect(journal.resolveApproval('nopey', { state: 'denied', decidedAt: 2001 })).toBe(false);
    expect(journal.getApproval('abcde')).toMatchObject({ state: 'approved', channel: 'cli', scope: 'session', decidedAt: 2000 });
    expect(journal.getApproval('abcde')?.reason).toBeUndefined();
  });

  it('first resolver wins across two connections to the same file', () => {
    journal.insertApproval(approval());
    const other = Journal.open(file, { clock });
    try {
      const results = [
        other.resolveApproval('abcde', { state: 'denied', channel: 'web', decidedAt: 5 }),
        journal.resolveApproval('abcde', { state: 'approved', channel: 'cli', decidedAt: 6 }),
      ];
      expect(results).toEqual([true, false]);
      expect(journal.getApproval('abcde')?.state).toBe('denied');
    } finally {
      other.close();
    }
  });

  it('lists by state oldest first with a limit, fast with 10,000 pending rows (indexed)', () => {
    journal.transaction(() => {
      for (let i = 0; i < 10_000; i += 1) {
        journal.insertApproval(approval({ id: `p${String(i).padStart(5, '0')}`, requestedAt: 10_000 - i }));
      }
    });
    journal.insertApproval(approval({ id: 'done1', state: 'approved', requestedAt: 0 }));
    const pending = journal.listApprovals({ state: 'pending' });
    expect(pending).toHaveLength(10_000);
    expect(pending[0]?.id).toBe('p09999');
    expect(journal.listApprovals({ state: 'pending', limit: 3 }).map((a) => a.id)).toEqual(['p09999', 'p09998', 'p09997']);
    expect(journal.listApprovals({}).length).toBe(10_001);
    const db = (journal as unknown as { db: Database.Database }).db;
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT * FROM approvals WHERE state = 'pending' ORDER BY requested_at, id").all();
    expect(JSON.stringify(plan)).toContain('approvals_by_state');
  });

  it('R-D-9 events get increasing sequence numbers and are read back after a cursor', () => {
    const a = journal.appendEvent({ kind: 'approval_created', ts: 1, sessionId: 's1', data: { id: 'abcde' } });
    const b = journal.appendEvent({ kind: 'approval_resolved', ts: 2, data: { id: 'abcde', state: 'approved' } });
    const c = journal.appendEvent({ kind: 'x', ts: 3, data: {} });
    expect(b).toBeGreaterThan(a);
    expect(c).toBeGreaterThan(b);
    expect(journal.eventsSince(0, 10)).toEqual([
      { seq: a, kind: 'approval_created', ts: 1, sessionId: 's1', data: { id: 'abcde' } },
      { seq: b, kind: 'approval_resolved', ts: 2, data: { id: 'abcde', state: 'approved' } },
      { seq: c, kind: 'x', ts: 3, data: {} },
    ]);
    expect(journal.eventsSince(a, 1).map((e) => e.seq)).toEqual([b]);
  });

  it('R-POL-4 stores rules with id and version, lists active ones, revokes once', () => {
    const rule: Rule = {
      id: 'rule1',
      version: 1,
      tool: 'fs/read_file',
      args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/' }],
      createdAt: clock.now(),
      expiresAt: clock.now() + 3600_000,
    };
    journal.insertRule(rule);
    journal.insertRule({ id: 'rule2', version: 1, tool: 'fs/write_file', args: [], createdAt: clock.now() + 1 });
    expect(() => journal.insertRule(rule)).toThrow(AssentError);
    expect(journal.getRule('rule1')).toEqual(rule);
    expect(journal.listRules().map((r) => r.id)).toEqual(['rule1', 'rule2']);
    expect(journal.revokeRule('rule2', clock.now())).toBe(true);
    expect(journal.revokeRule('rule2', clock.now())).toBe(false);
    expect(journal.revokeRule('missing', clock.now())).toBe(false);
    expect(journal.listRules().map((r) => r.id)).toEqual(['rule1']);
    clock.advance(3600_000);
    expect(journal.listRules()).toEqual([]);
    expect(journal.listRules({ includeInactive: true }).map((r) => [r.id, r.revokedAt !== undefined])).toEqual([
      ['rule1', false],
      ['rule2', true],
    ]);
  });

  it('R-POL-6 (issue 12 item 5) stores command, path and url rules with their agent and access beside tool rules', () => {
    const rules: Rule[] = [
      { id: 'rcmd1', version: 1, args: [], command: 'npm test', agent: 'codex', createdAt: clock.now(), expiresAt: clock.now() + 60_000 },
      { id: 'rpth1', version: 1, args: [], path: '${cwd}/dist/**', access: 'write', createdAt: clock.now() + 1 },
      { id: 'rurl1', version: 1, args: [], url: 'https://docs.example.com/*', createdAt: clock.now() + 2 },
      { id: 'rtool', version: 1, tool: 'claude/Bash', args: [{ pointer: '/command', op: 'equals', value: 'ls' }], createdAt: clock.now() + 3 },
    ];
    for (const rule of rules) journal.insertRule(rule);
    expect(journal.listRules()).toEqual(rules);
    journal.close();
    journal = Journal.open(file, { clock });
    expect(journal.getRule('rcmd1')).toEqual(rules[0]);
    clock.advance(60_000);
    expect(journal.listRules().map((r) => r.id)).toEqual(['rpth1', 'rurl1', 'rtool']);
  });

  it('R-POL-6 a journal from before the agent-action rule forms keeps its tool rules as tool rules; a row it cannot read matches nothing', () => {
    journal.close();
    const db = new Database(file);
    db.exec('DROP TABLE rules; CREATE TABLE rules (id TEXT PRIMARY KEY, version INTEGER NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER, revoked_at INTEGER)');
    const version = (db.prepare('SELECT version FROM schema_version').get() as { version: number }).version;
    db.prepare('UPDATE schema_version SET version = ?').run(version - 1);
    db.prepare('INSERT INTO rules VALUES (?, 1, ?, ?, 5, NULL, NULL)').run('rold1', 'fs/read_file', '[{"pointer":"/path","op":"prefix","value":"/srv/"}]');
    db.close();
    journal = Journal.open(file, { clock });
    expect(journal.getRule('rold1')).toEqual({ id: 'rold1', version: 1, tool: 'fs/read_file', args: [{ pointer: '/path', op: 'prefix', value: '/srv/' }], createdAt: 5 });
    journal.close();
    const raw = new Database(file);
    raw.prepare("INSERT INTO rules (id, version, tool, args, created_at, form, pattern, agent) VALUES ('rodd1', 1, '', '[]', 6, 'path', '/**', 'cursor')").run();
    raw.close();
    journal = Journal.open(file, { clock });
    expect(journal.getRule('rodd1')).toEqual({ id: 'rodd1', version: 1, args: [], command: '', createdAt: 6 });
  });

  it('transaction rolls back everything when the function throws', () => {
    expect(() =>
      journal.transaction(() => {
        journal.insertApproval(approval({ id: 'aaaaa' }));
        throw new AssentError('conflict', 'stop');
      }),
    ).toThrow('stop');
    expect(journal.getApproval('aaaaa')).toBeUndefined();
  });

  it('refuses a journal written by a newer schema with version_mismatch', () => {
    journal.close();
    const db = new Database(file);
    const current = (db.prepare('SELECT version FROM schema_version').get() as { version: number }).version;
    db.prepare('UPDATE schema_version SET version = 99').run();
    db.close();
    expect(() => Journal.open(file)).toThrow(expect.objectContaining({ type: 'version_mismatch' }));
    const raw = new Database(file);
    raw.prepare('UPDATE schema_version SET version = ?').run(current);
    raw.close();
    journal = Journal.open(file, { clock });
  });

  it('R-TEAM-3 an approval keeps its owner, host, four-eyes and quorum; its resolution keeps who decided and on which host', () => {
    journal.insertApproval(approval({ owner: 'me@a', hostId: 'h1', fourEyes: true, quorum: 3 }));
    expect(journal.getApproval('abcde')).toMatchObject({ owner: 'me@a', hostId: 'h1', fourEyes: true, quorum: 3 });
    expect(journal.resolveApproval('abcde', { state: 'approved', channel: 'web', scope: 'call', decidedAt: 5, decidedBy: 'token:reviewer', decidedHost: 'h2' })).toBe(true);
    expect(journal.getApproval('abcde')).toMatchObject({ state: 'approved', decidedBy: 'token:reviewer', decidedHost: 'h2' });
    journal.insertApproval(approval({ id: 'bbbbb' }));
    const plain = journal.getApproval('bbbbb');
    expect(plain?.fourEyes).toBeUndefined();
    expect(plain?.quorum).toBeUndefined();
  });

  it('R-TEAM-3 one vote per principal and approval: a repeat records nothing; a restart finds the votes of pending approvals', () => {
    journal.insertApproval(approval({ id: 'aaaaa', quorum: 2 }));
    journal.insertApproval(approval({ id: 'bbbbb', quorum: 2, state: 'approved' }));
    expect(journal.recordApprovalVote({ approvalId: 'aaaaa', principal: 'me@a', hostId: 'h1', channel: 'cli', scope: 'call', votedAt: 1 })).toBe(true);
    expect(journal.recordApprovalVote({ approvalId: 'aaaaa', principal: 'me@a', channel: 'watch', scope: 'session', votedAt: 2 })).toBe(false);
    expect(journal.recordApprovalVote({ approvalId: 'aaaaa', principal: 'token:r', channel: 'web', scope: 'session', votedAt: 3 })).toBe(true);
    expect(journal.recordApprovalVote({ approvalId: 'bbbbb', principal: 'me@a', channel: 'cli', scope: 'call', votedAt: 4 })).toBe(true);
    expect(journal.listApprovalVotes('aaaaa')).toEqual([
      { approvalId: 'aaaaa', principal: 'me@a', hostId: 'h1', channel: 'cli', scope: 'call', votedAt: 1 },
      { approvalId: 'aaaaa', principal: 'token:r', channel: 'web', scope: 'session', votedAt: 3 },
    ]);
    expect(journal.listPendingApprovalVotes().map((vote) => vote.approvalId)).toEqual(['aaaaa', 'aaaaa']);
  });

  it('R-TEAM-3 the team-identity migration upgrades an older journal in place: its approvals keep their data and gain no owner', () => {
    journal.insertApproval(approval());
    journal.close();
    const db = new Database(file);
    db.exec('DROP TABLE passkeys');
    for (const column of ['form', 'pattern', 'access', 'agent']) db.exec(`ALTER TABLE rules DROP COLUMN ${column}`);
    db.exec('DROP TABLE approval_votes');
    for (const column of ['owner', 'host_id', 'four_eyes', 'quorum', 'decided_by', 'decided_host']) db.exec(`ALTER TABLE approvals DROP COLUMN ${column}`);
    db.prepare('UPDATE schema_version SET version = 4').run();
    db.close();
    journal = Journal.open(file, { clock });
    const upgraded = journal.getApproval('abcde');
    expect(upgraded).toEqual(approval());
    expect(journal.recordApprovalVote({ approvalId: 'abcde', principal: 'me@a', channel: 'cli', scope: 'call', votedAt: 1 })).toBe(true);
  });

  it('a file that is not a database is a state_insecure error naming it', () => {
    const bogus = path.join(tmp, 'bogus.db');
    fs.writeFileSync(bogus, 'not sqlite at all, just text that is long enough to be read as a header');
    expect(() => Journal.open(bogus)).toThrow(expect.objectContaining({ message: expect.stringContaining(bogus) }));
  });
});
