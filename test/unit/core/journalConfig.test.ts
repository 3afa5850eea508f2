// R-TEAM-1 R-TEAM-7: the `journal` section — SQLite by default, PostgreSQL by
// `url` or a 0600 `urlFile` — and that its password never shows in a message,
// a reload diff or the configuration the daemon hands out.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type Config } from '../../../src/core/config/config.js';
import { diffPolicy } from '../../../src/core/config/configDiff.js';
import { databaseUrlSecrets, describeJournal, maskUrlPassword, withoutJournalSecret } from '../../../src/core/config/journalConfig.js';
import { maskSecrets } from '../../../src/journal/postgres/databaseUrl.js';

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
    expect(lines).toEqual([expect.stringMatching(/^journal: sqlite → postgres postgresql:\/\/assent:\*\*\*@db\.internal:5432\/assent \(from the next daemon start\)$/)]);
    expect(JSON.stringify(withoutJournalSecret(team))).not.toContain(SECRET);
    const otherPassword = validateConfig({ journal: { kind: 'postgres', url: URL_WITH_PASSWORD.replace(SECRET, 'changed') } }).config as Config;
    expect(diffPolicy(team, otherPassword)).toHaveLength(1);
    expect(JSON.stringify(diffPolicy(team, otherPassword))).not.toMatch(new RegExp(`${SECRET}|changed`));
  });
});

/**
 * Database addresses in every password-bearing form libpq and node-postgres
 * accept, generated: where the password sits, how its key is spelt and
 * encoded, how its value is encoded, what stands around it. Each case lists
 * the passwords it carries as a reader would decode them, and the exact text
 * each takes in the address.
 */
interface AddressCase {
  address: string;
  /** Passwords as the driver reads them, and as written in the address. */
  secrets: string[];
  /** Something that should still be shown (the host), when there is one. */
  shows?: string;
}

const PASSWORDS = ['S3cret-plain', 'p@ss:w0rd/S3CRET', 'sp ace+plus&amp=eq#hash%pct?q', 'ünï-cødé-S3CRET', "quote'back\\slash-S3CRET"];
const HOSTS: { text: string; shows?: string }[] = [
  { text: 'db.internal', shows: 'db.internal' },
  { text: 'db.internal:5432', shows: 'db.internal:5432' },
  { text: '[::1]:5432', shows: '[::1]:5432' },
  { text: '%2Fvar%2Frun%2Fpostgresql', shows: '%2Fvar%2Frun%2Fpostgresql' },
  { text: '' },
];
const SCHEMES = ['postgresql', 'postgres', 'POSTGRESQL'];
const PASSWORD_KEYS = ['password', 'PASSWORD', 'Password', 'p%61ssword', '%70%61%73%73%77%6F%72%64', 'pass%77ord', 'sslpassword', 'SSLPassword', 'pass%2577ord'];
/** How a value is written in a query: percent-encoded, form-encoded (`+` for a space), or raw where that still parses as one value. */
function valueEncodings(password: string): string[] {
  const encodings = [encodeURIComponent(password), new URLSearchParams({ v: password }).toString().slice(2)];
  if (!/[&#%+ ]/.test(password)) encodings.push(password);
  return [...new Set(encodings)];
}
const AROUND: [string, string][] = [
  ['', ''],
  ['host=%2Ftmp&', ''],
  ['', '&sslmode=disable'],
  ['application_name=x&', '&connect_timeout=5&passfile=%2Fhome%2Fme%2F.pgpass'],
];

function generatedAddresses(): AddressCase[] {
  const cases: AddressCase[] = [];
  for (const [index, password] of PASSWORDS.entries()) {
    const scheme = SCHEMES[index % SCHEMES.length] as string;
    for (const host of HOSTS) {
      const encoded = encodeURIComponent(password);
      // In the userinfo (percent-encoded; raw too where the parser keeps it one password).
      cases.push({ address: `${scheme}://assent:${encoded}@${host.text}/assent`, secrets: [password, encoded], ...(host.shows === undefined ? {} : { shows: host.shows }) });
      if (!/[@/?#%:]/.test(password)) cases.push({ address: `${scheme}://assent:${password}@${host.text}/assent`, secrets: [password] });
      for (const key of PASSWORD_KEYS) {
        for (const value of valueEncodings(password)) {
          for (const [before, after] of AROUND) {
            cases.push({
              address: `${scheme}://assent@${host.text}/assent?${before}${key}=${value}${after}`,
              secrets: [password, value],
              ...(host.shows === undefined ? {} : { shows: host.shows }),
            });
          }
        }
      }
    }
    // Both at once, different passwords; the same key twice (a reader may take either).
    cases.push({ address: `${scheme}://assent:${encodeURIComponent(`${password}-A`)}@db.internal/assent?password=${encodeURIComponent(`${password}-B`)}`, secrets: [`${password}-A`, `${password}-B`] });
    cases.push({ address: `${scheme}://assent@db.internal/assent?password=first-S3cret&password=${encodeURIComponent(password)}`, secrets: ['first-S3cret', password] });
    // A `#` left unencoded in a query value cuts the URL there: the rest is a fragment, never shown.
    cases.push({ address: `${scheme}://assent@db.internal/assent?password=frag${'#'}ment-S3cret`, secrets: ['frag', 'ment-S3cret'] });
    // A keyword/value string, and one nested in a dbname (libpq expands it).
    const quoted = `'${password.replace(/[\\']/g, '\\$&')}'`;
    cases.push({ address: `host=db.internal port=5432 dbname=assent password=${quoted}`, secrets: [password], shows: 'db.internal' });
    cases.push({ address: `host=db.internal PASSWORD = ${quoted} user=assent`, secrets: [password], shows: 'db.internal' });
    if (!/[\s'\\]/.test(password)) cases.push({ address: `password=${password} host=db.internal`, secrets: [password], shows: 'db.internal' });
    const nested = `postgresql://assent:${encodeURIComponent(password)}@db.internal/assent`;
    cases.push({ address: `dbname='${nested.replace(/[\\']/g, '\\$&')}' connect_timeout=5`, secrets: [password, encodeURIComponent(password)] });
    cases.push({ address: `${scheme}://assent@db.internal/assent?dbname=${encodeURIComponent(`postgresql://x:${encodeURIComponent(password)}@y/z`)}`, secrets: [password] });
  }
  return cases;
}

describe('R-TEAM-7 (hardening 19.6) every password-bearing form of a database address is masked', () => {
  const cases = generatedAddresses();

  it('R-TEAM-7 masks the password in every generated address (over 1000 forms); what is shown keeps the host; every form is known for masking elsewhere', () => {
    expect(cases.length).toBeGreaterThan(1000);
    // What status, logs and diffs show.
    for (const { address, secrets, shows } of cases) {
      const shown = maskUrlPassword(address);
      for (const secret of secrets) {
        expect(shown, `${address} shows ${secret}`).not.toContain(secret);
        expect(shown, address).not.toContain(encodeURIComponent(secret));
      }
      // An address the URL parser refuses (e.g. credentials with an empty host) is not shown at all.
      if (shown === '(a URL that does not parse)') continue;
      expect(shown, address).toContain('***');
      if (shows !== undefined) expect(shown, address).toContain(shows);
    }
    // What a driver's error or any other text is masked with.
    for (const { address, secrets } of cases) {
      const known = databaseUrlSecrets(address);
      for (const secret of secrets) {
        expect(known, `${address}: ${secret} is not among the secrets to mask`).toContain(secret);
        const text = maskSecrets(`connect to ${address} failed: password ${secret} (${JSON.stringify(secret)}) rejected`, known);
        expect(text, address).not.toContain(secret);
      }
    }
  });

  it('shows an address without a password as it is, and passfile as the path it is (its contents are never read)', () => {
    expect(maskUrlPassword('postgresql://assent@db.internal:5432/assent?sslmode=require&passfile=%2Fhome%2Fme%2F.pgpass')).toBe(
      'postgresql://assent@db.internal:5432/assent?sslmode=require&passfile=%2Fhome%2Fme%2F.pgpass',
    );
    expect(databaseUrlSecrets('postgresql://assent@db.internal/assent?passfile=%2Fhome%2Fme%2F.pgpass')).toEqual([]);
    expect(maskUrlPassword('postgresql://assent:@db.internal/assent')).toBe('postgresql://assent:***@db.internal/assent');
    expect(databaseUrlSecrets('postgresql://assent:@db.internal/assent')).toEqual([]);
  });

  it('shows nothing of text that is neither a URI that parses nor a keyword/value string', () => {
    for (const text of ['postgresql://assent:S3cret@host1:5432,host2:5433/assent', 'postgresql://u:pa#S3cret@h/db', '/var/run/postgresql S3cret']) {
      expect(maskUrlPassword(text)).toBe('(a URL that does not parse)');
    }
  });
});
