// R-TEAM-1 R-TEAM-7: the `journal` section — SQLite by default, PostgreSQL by
// `url` or a 0600 `urlFile` — and that its password never shows in a message,
// a reload diff or the configuration the daemon hands out.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, diffPolicy, validateConfig, type Config } from '../../../src/core/config.js';
import { describeJournal, maskUrlPassword, withoutJournalSecret } from '../../../src/core/journalConfig.js';

const SECRET = 'pa55-w0rd-SECRET';
const URL_WITH_PASSWORD = `postgresql://assent:${SECRET}@db.internal:5432/assent`;

function problemsOf(journal: unknown): { path: string; message: string }[] {
  return validateConfig({ journal }).problems.filter((p) => p.severity === 'error');
}

describe('R-TEAM-1 the journal section', () => {
  it('defaults to the embedded SQLite journal', () => {
    expect(DEFAULT_CONFIG.journal).toEqual({ kind: 'sqlite' });
    expect(validateConfig({}).config?.journal).toEqual({ kind: 'sqlite' });
  });

  it('accepts postgres with a url or an absolute urlFile', () => {
    expect(validateConfig({ journal: { kind: 'postgres', url: 'postgresql://assent@db/assent' } }).config?.journal).toEqual({ kind: 'postgres', url: 'postgresql://assent@db/assent' });
    expect(validateConfig({ journal: { kind: 'postgres', urlFile: '/etc/assent/db.url' } }).config?.journal.urlFile).toBe('/etc/assent/db.url');
  });

  it('refuses postgres with neither or both, a relative urlFile, a url on sqlite, and an unknown kind, naming the key', () => {
    expect(problemsOf({ kind: 'postgres' })).toEqual([expect.objectContaining({ path: 'journal', message: expect.stringContaining('exactly one of "url"') })]);
    expect(problemsOf({ kind: 'postgres', url: 'postgresql://a@b/c', urlFile: '/x' })[0]?.message).toContain('exactly one of');
    expect(problemsOf({ kind: 'postgres', urlFile: 'db.url' })).toEqual([expect.objectContaining({ path: 'journal.urlFile' })]);
    expect(problemsOf({ kind: 'sqlite', url: 'postgresql://a@b/c' })[0]?.message).toContain('apply only to "kind": "postgres"');
    expect(problemsOf({ kind: 'mysql' })).toEqual([expect.objectContaining({ path: 'journal.kind' })]);
  });

  it('R-TEAM-7 a malformed url is refused without repeating it (it may hold a password)', () => {
    const problems = problemsOf({ kind: 'postgres', url: `mysql://root:${SECRET}@db/x` });
    expect(problems).toEqual([expect.objectContaining({ path: 'journal.url' })]);
    expect(JSON.stringify(problems)).not.toContain(SECRET);
  });

  it('R-TEAM-7 the reload diff and the handed-out configuration mask the password', () => {
    expect(maskUrlPassword(URL_WITH_PASSWORD)).toBe('postgresql://assent:***@db.internal:5432/assent');
    expect(describeJournal({ kind: 'postgres', urlFile: '/etc/assent/db.url' })).toBe('postgres (URL in /etc/assent/db.url)');
    const team = validateConfig({ journal: { kind: 'postgres', url: URL_WITH_PASSWORD } }).config as Config;
    const lines = diffPolicy(DEFAULT_CONFIG, team);
    expect(lines).toEqual([expect.stringMatching(/^journal: sqlite → postgres postgresql:\/\/assent:\*\*\*@db\.internal:5432\/assent \(used from the next daemon start\)$/)]);
    expect(JSON.stringify(withoutJournalSecret(team))).not.toContain(SECRET);
    const otherPassword = validateConfig({ journal: { kind: 'postgres', url: URL_WITH_PASSWORD.replace(SECRET, 'changed') } }).config as Config;
    expect(diffPolicy(team, otherPassword)).toHaveLength(1);
    expect(JSON.stringify(diffPolicy(team, otherPassword))).not.toMatch(new RegExp(`${SECRET}|changed`));
  });
});
