import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { AssentError } from '../../../src/core/base/errors.js';
import type { Rule } from '../../../src/core/policy/toolPolicy.js';
import { Journal } from '../../../src/journal/journal.js';
import type { Store, StoreChange } from '../../../src/journal/store.js';
import { sampleApproval as approval, closeStoreServers, HOST_A, HOST_B, openPostgresStore, openStoreFixture, sharedPostgres, STORE_KINDS, type StoreFixture } from '../../helpers/stores.js';
import { SCHEMA_VERSION } from '../../../src/journal/sql/migrations.js';

describe('R-J-1 the embedded journal file (sqlite)', () => {
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

  it('lists by state fast with 10,000 pending rows (indexed)', () => {
    journal.transaction(() => {
      for (let i = 0; i < 10_000; i += 1) {
        journal.insertApproval(approval({ id: `p${String(i).padStart(5, '0')}`, requestedAt: 10_000 - i }));
      }
    });
    expect(journal.listApprovals({ state: 'pending' })).toHaveLength(10_000);
    const db = (journal as unknown as { db: Database.Database }).db;
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT * FROM approvals WHERE state = 'pending' ORDER BY requested_at, id").all();
    expect(JSON.stringify(plan)).toContain('approvals_by_state');
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
    // Schema version 6: before the rule forms (migration 7) and the stored presence (migration 8).
    db.exec('ALTER TABLE approvals DROP COLUMN presence');
    db.prepare('UPDATE schema_version SET version = 6').run();
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
    for (const column of ['owner', 'host_id', 'four_eyes', 'quorum', 'decided_by', 'decided_host', 'presence']) db.exec(`ALTER TABLE approvals DROP COLUMN ${column}`);
    db.prepare('UPDATE schema_version SET version = 4').run();
    db.close();
    journal = Journal.open(file, { clock });
    const upgraded = journal.getApproval('abcde');
    expect(upgraded).toEqual(approval());
    expect(journal.recordApprovalVote({ approvalId: 'abcde', principal: 'me@a', channel: 'cli', scope: 'call', votedAt: 1 })).toBe(true);
  });

  it('R-REM-6 the presence migration upgrades an older journal in place: its approvals keep their data and need no passkey they were not filed with', () => {
    journal.insertApproval(approval());
    journal.close();
    const db = new Database(file);
    db.exec('ALTER TABLE approvals DROP COLUMN presence');
    db.prepare('UPDATE schema_version SET version = 7').run();
    db.close();
    journal = Journal.open(file, { clock });
    expect(journal.getApproval('abcde')).toEqual(approval());
    journal.insertApproval(approval({ id: 'bbbbb', presence: 'passkey' }));
    expect(journal.getApproval('bbbbb')?.presence).toBe('passkey');
  });

  it('a file that is not a database is a state_insecure error naming it', () => {
    const bogus = path.join(tmp, 'bogus.db');
    fs.writeFileSync(bogus, 'not sqlite at all, just text that is long enough to be read as a header');
    expect(() => Journal.open(bogus)).toThrow(expect.objectContaining({ message: expect.stringContaining(bogus) }));
  });
});

afterAll(closeStoreServers);

describe.each(STORE_KINDS)('R-J-1 R-TEAM-1 the store interface (%s)', (kind) => {
  let clock: FakeClock;
  let fixture: StoreFixture;
  let store: Store;

  beforeEach(async () => {
    clock = new FakeClock();
    fixture = await openStoreFixture(kind, clock);
    store = fixture.store;
  });

  afterEach(async () => {
    await fixture.close();
  });

  it('stores an approval with its complete arguments and types, and reads it back from another connection', async () => {
    await store.insertApproval(approval());
    const other = await fixture.openAnother();
    expect(await other.getApproval('abcde')).toMatchObject(approval());
    expect(await store.getApproval('zzzzz')).toBeUndefined();
  });

  it('refuses a duplicate approval id with conflict so the caller can draw another', async () => {
    await store.insertApproval(approval());
    await expect(store.insertApproval(approval())).rejects.toMatchObject({ type: 'conflict' });
  });

  it('R-D-5 resolveApproval is compare-and-set from pending: the first resolver wins', async () => {
    await store.insertApproval(approval());
    expect(await store.resolveApproval('abcde', { state: 'approved', channel: 'cli', scope: 'session', decidedAt: 2000 })).toBe(true);
    expect(await store.resolveApproval('abcde', { state: 'denied', channel: 'web', reason: 'no', decidedAt: 2001 })).toBe(false);
    expect(await store.resolveApproval('nopey', { state: 'denied', decidedAt: 2001 })).toBe(false);
    expect(await store.getApproval('abcde')).toMatchObject({ state: 'approved', channel: 'cli', scope: 'session', decidedAt: 2000 });
    expect((await store.getApproval('abcde'))?.reason).toBeUndefined();
  });

  it('R-D-5 R-TEAM-6 first resolver wins across connections racing at once: exactly one of 8', async () => {
    await store.insertApproval(approval());
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => fixture.openAnother(i % 2 === 0 ? HOST_A : HOST_B)));
    const results = await Promise.all(others.map((other, i) => other.resolveApproval('abcde', { state: 'approved', channel: `racer${i}`, decidedAt: 5 })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await store.getApproval('abcde'))?.channel).toBe(`racer${results.indexOf(true)}`);
  });

  it('lists by state oldest first with a limit', async () => {
    for (let i = 0; i < 30; i += 1) await store.insertApproval(approval({ id: `p${String(i).padStart(4, '0')}`, requestedAt: 100 - i }));
    await store.insertApproval(approval({ id: 'done1', state: 'approved', requestedAt: 0 }));
    const pending = await store.listApprovals({ state: 'pending' });
    expect(pending).toHaveLength(30);
    expect(pending[0]?.id).toBe('p0029');
    expect((await store.listApprovals({ state: 'pending', limit: 3 })).map((a) => a.id)).toEqual(['p0029', 'p0028', 'p0027']);
    expect((await store.listApprovals({})).length).toBe(31);
  });

  it('R-D-9 events get increasing sequence numbers and are read back after a cursor', async () => {
    const a = await store.appendEvent({ kind: 'approval_created', ts: 1, sessionId: 's1', data: { id: 'abcde' } });
    const b = await store.appendEvent({ kind: 'approval_resolved', ts: 2, data: { id: 'abcde', state: 'approved' } });
    const c = await store.appendEvent({ kind: 'x', ts: 3, data: {} });
    expect(b).toBeGreaterThan(a);
    expect(c).toBeGreaterThan(b);
    expect(await store.eventsSince(0, 10)).toEqual([
      { seq: a, kind: 'approval_created', ts: 1, sessionId: 's1', data: { id: 'abcde' } },
      { seq: b, kind: 'approval_resolved', ts: 2, data: { id: 'abcde', state: 'approved' } },
      { seq: c, kind: 'x', ts: 3, data: {} },
    ]);
    expect((await store.eventsSince(a, 1)).map((e) => e.seq)).toEqual([b]);
  });

  it('R-POL-4 stores rules with id and version, lists active ones, revokes once', async () => {
    const rule: Rule = {
      id: 'rule1',
      version: 1,
      tool: 'fs/read_file',
      args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/' }],
      createdAt: clock.now(),
      expiresAt: clock.now() + 3600_000,
    };
    await store.insertRule(rule);
    await store.insertRule({ id: 'rule2', version: 1, tool: 'fs/write_file', args: [], createdAt: clock.now() + 1 });
    await expect(store.insertRule(rule)).rejects.toBeInstanceOf(AssentError);
    expect(await store.getRule('rule1')).toEqual(rule);
    expect((await store.listRules({ now: clock.now() })).map((r) => r.id)).toEqual(['rule1', 'rule2']);
    expect(await store.revokeRule('rule2', clock.now())).toBe(true);
    expect(await store.revokeRule('rule2', clock.now())).toBe(false);
    expect(await store.revokeRule('missing', clock.now())).toBe(false);
    expect((await store.listRules({ now: clock.now() })).map((r) => r.id)).toEqual(['rule1']);
    clock.advance(3600_000);
    expect(await store.listRules({ now: clock.now() })).toEqual([]);
    expect((await store.listRules({ includeInactive: true })).map((r) => [r.id, r.revokedAt !== undefined])).toEqual([
      ['rule1', false],
      ['rule2', true],
    ]);
  });

  it('R-POL-4 (hardening 19.8e) listRules judges expiry and revocation at the `now` it is given, not at the store clock', async () => {
    const start = clock.now();
    await store.insertRule({ id: 'soon', version: 1, tool: 'fs/read_file', args: [], createdAt: start, expiresAt: start + 1000 });
    await store.insertRule({ id: 'later', version: 1, tool: 'fs/read_file', args: [], createdAt: start + 1, expiresAt: start + 5000 });
    await store.insertRule({ id: 'revoked', version: 1, tool: 'fs/read_file', args: [], createdAt: start + 2 });
    expect(await store.revokeRule('revoked', start + 3000)).toBe(true);
    // The store clock stays at start throughout: only the `now` passed in moves.
    expect((await store.listRules({ now: start })).map((r) => r.id)).toEqual(['soon', 'later', 'revoked']);
    expect((await store.listRules({ now: start + 1000 })).map((r) => r.id)).toEqual(['later', 'revoked']);
    expect((await store.listRules({ now: start + 3000 })).map((r) => r.id)).toEqual(['later']);
    expect(await store.listRules({ now: start + 5000 })).toEqual([]);
    clock.advance(10_000);
    expect((await store.listRules({ now: start + 500 })).map((r) => r.id)).toEqual(['soon', 'later', 'revoked']);
    expect(await store.listRules()).toEqual([]);
  });

  it('R-WEB-4 keeps token hashes, finds them, revokes once; the instance id is the audience', async () => {
    expect(store.instanceId).toMatch(/^[0-9a-f]{32}$/);
    const token = { id: 'tabcde', name: 'ci', tokenSha256: 'f'.repeat(64), audience: store.instanceId, createdAt: 1, expiresAt: 2 };
    await store.insertToken(token);
    await expect(store.insertToken(token)).rejects.toMatchObject({ type: 'conflict' });
    expect(await store.findTokenByHash('f'.repeat(64))).toEqual(token);
    expect(await store.getToken('tabcde')).toEqual(token);
    expect(await store.revokeToken('tabcde', 5)).toBe(true);
    expect(await store.revokeToken('tabcde', 6)).toBe(false);
    expect(await store.listTokens()).toEqual([{ ...token, revokedAt: 5 }]);
  });

  it('R-TEAM-3 an approval keeps its owner, host, four-eyes and quorum; its resolution keeps who decided and on which host', async () => {
    await store.insertApproval(approval({ owner: 'me@a', hostId: 'h1', fourEyes: true, quorum: 3 }));
    expect(await store.getApproval('abcde')).toMatchObject({ owner: 'me@a', hostId: 'h1', fourEyes: true, quorum: 3 });
    expect(await store.resolveApproval('abcde', { state: 'approved', channel: 'web', scope: 'call', decidedAt: 5, decidedBy: 'token:reviewer', decidedHost: 'h2' })).toBe(true);
    expect(await store.getApproval('abcde')).toMatchObject({ state: 'approved', decidedBy: 'token:reviewer', decidedHost: 'h2' });
    await store.insertApproval(approval({ id: 'bbbbb', hostId: 'h1' }));
    const plain = await store.getApproval('bbbbb');
    expect(plain?.fourEyes).toBeUndefined();
    expect(plain?.quorum).toBeUndefined();
  });

  it('R-TEAM-3 the deciding transaction: a vote per principal (a repeat records nothing), a resolution only from pending, a refusal writes nothing; pending votes are found again', async () => {
    await store.insertApproval(approval({ id: 'aaaaa', quorum: 2, hostId: 'h1' }));
    await store.insertApproval(approval({ id: 'bbbbb', quorum: 2, state: 'approved', hostId: 'h1' }));
    const vote = (principal: string, votedAt: number, channel = 'cli') => ({ approvalId: 'aaaaa', principal, hostId: 'h1', channel, scope: 'call' as const, votedAt });
    expect(await store.decideApproval('aaaaa', ({ votes }) => ({ writes: { vote: vote('me@a', 1) }, result: votes.length }))).toBe(0);
    expect(await store.decideApproval('aaaaa', ({ votes }) => ({ writes: { vote: vote('me@a', 2, 'watch') }, result: votes.length }))).toBe(1);
    await expect(store.decideApproval('aaaaa', () => {
      throw new AssentError('forbidden', 'four_eyes');
    })).rejects.toMatchObject({ type: 'forbidden' });
    const seen = await store.decideApproval('aaaaa', ({ record, votes }) => ({
      writes: { vote: vote('token:r', 3, 'web'), resolution: { state: 'approved', channel: 'web', scope: 'call', decidedAt: 3, decidedBy: 'token:r' } },
      result: { state: record?.state, voters: votes.map((v) => v.principal) },
    }));
    expect(seen).toEqual({ state: 'pending', voters: ['me@a'] });
    expect((await store.listApprovalVotes('aaaaa')).map((v) => [v.principal, v.channel])).toEqual([
      ['me@a', 'cli'],
      ['token:r', 'web'],
    ]);
    expect((await store.getApproval('aaaaa'))?.state).toBe('approved');
    // Resolved already: the judge reads it so, and a resolution it writes anyway is a conflict.
    await expect(
      store.decideApproval('aaaaa', ({ record }) => ({ writes: { resolution: { state: 'denied', decidedAt: 4 } }, result: record?.state })),
    ).rejects.toMatchObject({ type: 'conflict' });
    await store.insertApproval(approval({ id: 'ccccc', quorum: 2, hostId: 'h1' }));
    await store.decideApproval('ccccc', () => ({ writes: { vote: { ...vote('me@a', 5), approvalId: 'ccccc' } }, result: undefined }));
    expect((await store.listPendingApprovalVotes()).map((v) => v.approvalId)).toEqual(['ccccc']);
    expect(await store.decideApproval('zzzzz', ({ record }) => ({ writes: {}, result: record }))).toBeUndefined();
  });

  it('R-REM-6 an approval keeps the presence it was filed with, read back from another connection (another host)', async () => {
    await store.insertApproval(approval({ presence: 'passkey', hostId: 'h1' }));
    await store.insertApproval(approval({ id: 'bbbbb', hostId: 'h1' }));
    const other = await fixture.openAnother(HOST_B);
    expect((await other.getApproval('abcde'))?.presence).toBe('passkey');
    expect((await other.listApprovals({ state: 'pending' })).map((record) => [record.id, record.presence])).toEqual([
      ['abcde', 'passkey'],
      ['bbbbb', undefined],
    ]);
    expect(await store.resolveApproval('abcde', { state: 'denied', decidedAt: 5 })).toBe(true);
    expect((await other.getApproval('abcde'))?.presence).toBe('passkey');
  });

  it('R-REM-6 the deciding transaction\'s local write (a passkey counter) runs only when its vote or resolution commits, and a throw from it rolls them back', async () => {
    await store.insertApproval(approval({ id: 'aaaaa', hostId: 'h1' }));
    await store.insertApproval(approval({ id: 'bbbbb', hostId: 'h1', state: 'approved' }));
    const ran: string[] = [];
    const vote = (approvalId: string) => ({ approvalId, principal: 'web:d1', hostId: 'h1', channel: 'web', scope: 'call' as const, votedAt: 2 });
    const approve = { state: 'approved' as const, channel: 'web', scope: 'call' as const, decidedAt: 2, decidedBy: 'web:d1' };
    // Nothing to commit (a refusal, a repeat): the local write does not run.
    await store.decideApproval('aaaaa', () => ({ writes: { localWrite: () => ran.push('nothing') }, result: undefined }));
    // The resolution is a conflict: the transaction rolls back, the local write does not run.
    await expect(store.decideApproval('bbbbb', () => ({ writes: { vote: vote('bbbbb'), resolution: approve, localWrite: () => ran.push('conflict') }, result: undefined }))).rejects.toMatchObject({
      type: 'conflict',
    });
    expect(await store.listApprovalVotes('bbbbb')).toEqual([]);
    // The local write refuses: the vote and the resolution are rolled back with it.
    await expect(
      store.decideApproval('aaaaa', () => ({
        writes: {
          vote: vote('aaaaa'),
          resolution: approve,
          localWrite: () => {
            throw new AssentError('presence_required', 'counter did not move on');
          },
        },
        result: undefined,
      })),
    ).rejects.toMatchObject({ type: 'presence_required' });
    expect((await store.getApproval('aaaaa'))?.state).toBe('pending');
    expect(await store.listApprovalVotes('aaaaa')).toEqual([]);
    expect(ran).toEqual([]);
    await store.decideApproval('aaaaa', () => ({ writes: { vote: vote('aaaaa'), resolution: approve, localWrite: () => ran.push('committed') }, result: undefined }));
    expect(ran).toEqual(['committed']);
    expect((await store.getApproval('aaaaa'))?.state).toBe('approved');
  });

  it('R-D-6 R-TEAM-3 eight deciders racing through separate connections: the first resolution wins, the others read it', async () => {
    await store.insertApproval(approval({ hostId: 'h1' }));
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => fixture.openAnother(i % 2 === 0 ? HOST_A : HOST_B)));
    const outcomes = await Promise.all(
      others.map((other, i) =>
        other.decideApproval('abcde', ({ record }) => {
          if (record?.state !== 'pending') throw new AssentError('conflict', `already ${record?.state ?? 'gone'}`);
          return { writes: { resolution: { state: 'approved', channel: `racer${i}`, decidedAt: 5 } }, result: i };
        }).then(
          (won) => ({ won }),
          (error: unknown) => ({ error }),
        ),
      ),
    );
    const winners = outcomes.filter((outcome): outcome is { won: number } => 'won' in outcome);
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((outcome) => 'error' in outcome).every((outcome) => (outcome as { error: AssentError }).error.type === 'conflict')).toBe(true);
    expect((await store.getApproval('abcde'))?.channel).toBe(`racer${winners[0]?.won}`);
  });

  it('R-POL-6 stores command, path and url rules with their agent and access beside tool rules', async () => {
    const rules: Rule[] = [
      { id: 'rcmd1', version: 1, args: [], command: 'npm test', agent: 'codex', createdAt: clock.now(), expiresAt: clock.now() + 60_000 },
      { id: 'rpth1', version: 1, args: [], path: '${cwd}/dist/**', access: 'write', createdAt: clock.now() + 1 },
      { id: 'rurl1', version: 1, args: [], url: 'https://docs.example.com/*', createdAt: clock.now() + 2 },
      { id: 'rtool', version: 1, tool: 'claude/Bash', args: [{ pointer: '/command', op: 'equals', value: 'ls' }], createdAt: clock.now() + 3 },
    ];
    for (const rule of rules) await store.insertRule(rule);
    expect(await (await fixture.openAnother()).listRules({ now: clock.now() })).toEqual(rules);
    clock.advance(60_000);
    expect((await store.listRules({ now: clock.now() })).map((r) => r.id)).toEqual(['rpth1', 'rurl1', 'rtool']);
  });

  it('R-J-5 keeps calls in progress until their end is recorded', async () => {
    const call = { callId: 'c1', sessionId: 's', server: 'fs', tool: 'w', argsSha256: 'v1:sha256:00', caller: { pid: 1 }, waitedForConsentMs: 3, authorizedAt: 10, approvalId: 'abcde', channel: 'cli' };
    await store.recordCallInProgress(call);
    expect(await store.listCallsInProgress()).toEqual([call]);
    expect(await store.endCallInProgress('c1')).toBe(true);
    expect(await store.endCallInProgress('c1')).toBe(false);
    expect(await store.listCallsInProgress()).toEqual([]);
  });
});

describe('R-TEAM-1 R-TEAM-6 what only a shared store does (postgres)', () => {
  let fixture: StoreFixture;
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    fixture = await openStoreFixture('postgres', clock);
  });

  afterEach(async () => {
    await fixture.close();
  });

  it('R-TEAM-6 the raw arguments of an approval are dropped when it resolves; the digest stays', async () => {
    const { store } = fixture;
    await store.insertApproval(approval({ hostId: HOST_A }));
    expect((await store.getApproval('abcde'))?.args).toEqual(approval().args);
    await store.resolveApproval('abcde', { state: 'approved', channel: 'cli', decidedAt: 2, decidedBy: 'alice@laptop' });
    const resolved = await store.getApproval('abcde');
    expect(resolved).toMatchObject({ state: 'approved', argsSha256: 'v1:sha256:00', hostId: HOST_A, decidedBy: 'alice@laptop' });
    expect(resolved?.args).toBeUndefined();
    expect(await fixture.dump()).not.toContain('/srv/data/a');
  });

  it('R-TEAM-6 calls in progress are each host\u2019s own', async () => {
    const other = await fixture.openAnother(HOST_B);
    const call = { callId: 'c1', sessionId: 's', server: 'fs', tool: 'w', argsSha256: 'v1:sha256:00', caller: {}, waitedForConsentMs: 0, authorizedAt: 1 };
    await fixture.store.recordCallInProgress(call);
    await other.recordCallInProgress({ ...call, callId: 'c2' });
    expect((await fixture.store.listCallsInProgress()).map((c) => c.callId)).toEqual(['c1']);
    expect((await other.listCallsInProgress()).map((c) => c.callId)).toEqual(['c2']);
    expect(await other.endCallInProgress('c1')).toBe(false);
  });

  it('R-TEAM-4 audit rows are kept per host in seq order; a repeated row is stored once', async () => {
    const rows = [
      { hostId: HOST_A, seq: 1, ts: 't1', line: '{"seq":1}' },
      { hostId: HOST_A, seq: 2, ts: 't2', line: '{"seq":2}' },
      { hostId: HOST_B, seq: 1, ts: 't1', line: '{"seq":1,"b":1}' },
    ];
    await fixture.store.appendAuditRows(rows);
    await fixture.store.appendAuditRows(rows.slice(1));
    expect(await fixture.store.listAuditRows()).toEqual(rows);
    expect(await fixture.store.listAuditRows({ hostId: HOST_B })).toEqual([rows[2]]);
  });

  it('R-TEAM-2 another host\u2019s event is pushed to this one (LISTEN/NOTIFY); its own are not echoed back', async () => {
    const other = await fixture.openAnother(HOST_B);
    const heard: StoreChange[] = [];
    fixture.store.watch((change) => heard.push(change));
    await fixture.store.appendEvent({ kind: 'mine', ts: 1, data: {} });
    const seq = await other.appendEvent({ kind: 'approval_resolved', ts: 2, sessionId: 's1', data: { id: 'abcde', state: 'approved' } });
    const big = await other.appendEvent({ kind: 'big', ts: 3, data: { blob: 'x'.repeat(10_000) } });
    await expect.poll(() => heard.length).toBe(2);
    expect(heard[0]).toEqual({ kind: 'event', event: { seq, kind: 'approval_resolved', ts: 2, sessionId: 's1', data: { id: 'abcde', state: 'approved' }, hostId: HOST_B } });
    expect(heard[1]).toMatchObject({ kind: 'event', event: { seq: big, kind: 'big', hostId: HOST_B, data: { blob: 'x'.repeat(10_000) } } });
  });

  it('R-TEAM-6 a tool proof issued by another host binds that host\u2019s revision: consumable here while it runs it, refused once it reloaded; an exec proof binds its policy file\u2019s digest on every host', async () => {
    const other = await fixture.openAnother(HOST_B);
    await other.announceHost({ name: 'host-b', revision: 'rev-b1', at: 1 });
    const proof = (hash: string, approvalId: string, actionKind: 'tool' | 'exec' = 'tool') => ({
      id: `p${approvalId}`,
      hash,
      approvalId,
      principal: 'team:x',
      sessionId: 's',
      actionKind,
      actionDigest: 'v1:sha256:aa',
      revision: 'rev-b1',
      decision: 'allow' as const,
      channel: 'cli',
      audience: 'cli' as const,
      issuedAt: 0,
      expiresAt: Date.UTC(2030, 0, 1),
      state: 'issued' as const,
    });
    await other.insertProof(proof('h1', 'ap001'));
    await other.insertProof(proof('h2', 'ap002'));
    expect((await fixture.store.getProofByHash('h1'))?.hostId).toBe(HOST_B);
    const request = { principal: 'team:x', audience: 'cli' as const, actionDigest: 'v1:sha256:aa', revision: 'rev-a-whatever', now: 1 };
    expect((await fixture.store.consume('h1', request, 'e1')).kind).toBe('consumed');
    await other.announceHost({ name: 'host-b', revision: 'rev-b2', at: 2 });
    await expect(fixture.store.consume('h2', request, 'e2')).rejects.toMatchObject({ type: 'proof_invalid', details: { reason: 'revision-changed' } });
    expect((await fixture.store.listHosts()).map((host) => [host.name, host.revision])).toEqual([['host-b', 'rev-b2']]);
    await other.insertProof(proof('h3', 'ap003', 'exec'));
    await expect(fixture.store.consume('h3', request, 'e3')).rejects.toMatchObject({ details: { reason: 'revision-changed' } });
    expect((await fixture.store.consume('h3', { ...request, revision: 'rev-b1' }, 'e3')).kind).toBe('consumed');
  });

  it('R-TEAM-7 a database that cannot be reached is `unavailable` at once, named without its password', async () => {
    for (const url of ['postgresql://assent:S3CRET-pw@localhost:5432/none?host=/nonexistent-socket-dir', 'postgresql://assent:S3CRET-pw@127.0.0.1:1/none']) {
      const started = performance.now();
      const error = await openPostgresStore(url, HOST_A).then(
        () => undefined,
        (refusal: unknown) => refusal,
      );
      expect(performance.now() - started).toBeLessThan(5000);
      expect(error).toMatchObject({ type: 'unavailable', message: expect.stringContaining('postgresql://assent:***@') });
      expect(JSON.stringify({ message: (error as Error).message, details: (error as AssentError).details })).not.toContain('S3CRET');
    }
  });

  it('R-TEAM-1 a database migrated by a newer assent is refused with version_mismatch', async () => {
    const server = await sharedPostgres();
    const url = await server.createDatabase('newer');
    const store = await openPostgresStore(url, HOST_A);
    await store.close();
    await server.query('UPDATE schema_version SET version = 99', [], new URL(url).pathname.slice(1));
    await expect(openPostgresStore(url, HOST_A)).rejects.toMatchObject({ type: 'version_mismatch' });
  });

  it('R-REM-6 R-TEAM-1 the presence migration upgrades a team database in place: its approvals keep their data, new ones keep their presence', async () => {
    const server = await sharedPostgres();
    const url = await server.createDatabase('upgrade');
    const database = new URL(url).pathname.slice(1);
    const first = await openPostgresStore(url, HOST_A);
    await first.insertApproval(approval({ hostId: HOST_A }));
    await first.close();
    await server.query('ALTER TABLE approvals DROP COLUMN presence', [], database);
    await server.query('UPDATE schema_version SET version = 1', [], database);
    const upgraded = await openPostgresStore(url, HOST_A);
    expect(await upgraded.getApproval('abcde')).toEqual(approval({ hostId: HOST_A }));
    await upgraded.insertApproval(approval({ id: 'bbbbb', hostId: HOST_A, presence: 'passkey' }));
    expect((await upgraded.getApproval('bbbbb'))?.presence).toBe('passkey');
    expect(await server.query<{ version: number }>('SELECT version FROM schema_version', [], database)).toEqual([{ version: SCHEMA_VERSION }]);
    await upgraded.close();
  });

  it('R-TEAM-1 two hosts opening a new database at once migrate it once', async () => {
    const server = await sharedPostgres();
    const url = await server.createDatabase('race');
    const stores = await Promise.all([openPostgresStore(url, HOST_A), openPostgresStore(url, HOST_B), openPostgresStore(url, HOST_A)]);
    expect(new Set(stores.map((s) => s.instanceId)).size).toBe(1);
    const versions = await server.query<{ version: number }>('SELECT version FROM schema_version', [], new URL(url).pathname.slice(1));
    expect(versions).toHaveLength(1);
    for (const store of stores) await store.close();
  });
});
