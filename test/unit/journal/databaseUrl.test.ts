// R-TEAM-1 R-TEAM-7: a team database URL with a password lives in a file of the
// user's own, mode 0600; anything else is refused with the fix.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { maskSecrets, resolveDatabaseUrl } from '../../../src/journal/postgres/databaseUrl.js';

const SECRET = 'p@ss:w0rd/SECRET';
const URL = `postgresql://assent:${encodeURIComponent(SECRET)}@db.internal/assent`;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function urlFile(mode: number, text = `${URL}\n`): string {
  const dir = mkdtempSync(join(tmpdir(), 'assent-url-'));
  dirs.push(dir);
  const file = join(dir, 'db.url');
  writeFileSync(file, text, { mode });
  chmodSync(file, mode);
  return file;
}

describe('R-TEAM-1 journal.urlFile', () => {
  it('reads the URL from a 0600 file; what may be shown has the password masked, and every form of it is known for masking', () => {
    const resolved = resolveDatabaseUrl({ kind: 'postgres', urlFile: urlFile(0o600) });
    expect(resolved.url).toBe(URL);
    expect(resolved.display).toBe('postgresql://assent:***@db.internal/assent');
    expect(resolved.secrets).toEqual(expect.arrayContaining([SECRET, encodeURIComponent(SECRET)]));
    expect(maskSecrets(`failed for ${URL} and ${SECRET}`, resolved.secrets)).not.toContain('w0rd');
  });

  it('R-TEAM-7 (hardening 19.6) a password in the query (the libpq form) is masked and known for masking; a passfile is named, never read', () => {
    const passfile = urlFile(0o600, 'db.internal:5432:assent:assent:PASSFILE-S3cret\n');
    const url = `postgresql://assent@db.internal/assent?sslmode=require&Password=${encodeURIComponent(SECRET)}&passfile=${encodeURIComponent(passfile)}`;
    const resolved = resolveDatabaseUrl({ kind: 'postgres', urlFile: urlFile(0o600, `${url}\n`) });
    expect(resolved.url).toBe(url);
    expect(resolved.display).toBe(`postgresql://assent@db.internal/assent?sslmode=require&Password=***&passfile=${encodeURIComponent(passfile)}`);
    expect(resolved.secrets).toEqual(expect.arrayContaining([SECRET, encodeURIComponent(SECRET)]));
    expect(maskSecrets(`failed for ${url}: ${SECRET}`, resolved.secrets)).not.toContain('w0rd');
    expect(JSON.stringify(resolved.display) + JSON.stringify(resolved.secrets)).not.toContain('PASSFILE-S3cret');
  });

  it('refuses a file readable by group or others (state_insecure, with chmod 600) and never reads the password into the message', () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const file = urlFile(mode);
      let error: unknown;
      try {
        resolveDatabaseUrl({ kind: 'postgres', urlFile: file });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ type: 'state_insecure', message: expect.stringContaining(`chmod 600 ${file}`) });
      expect(JSON.stringify(error)).not.toContain('w0rd');
    }
  });

  it('refuses a missing file and one that holds no postgresql:// URL, naming the file', () => {
    expect(() => resolveDatabaseUrl({ kind: 'postgres', urlFile: '/nonexistent/db.url' })).toThrow(expect.objectContaining({ type: 'config_invalid', message: expect.stringContaining('/nonexistent/db.url') }));
    const file = urlFile(0o600, 'hello\n');
    expect(() => resolveDatabaseUrl({ kind: 'postgres', urlFile: file })).toThrow(expect.objectContaining({ type: 'config_invalid', message: expect.stringContaining('first line') }));
  });
});
