// Where the team database is (R-TEAM-1, R-TEAM-7): the `journal.url` of the
// pinned configuration, or the first line of `journal.urlFile`, a file that must
// be the user's own and 0600 because the URL may carry a password. What is shown
// of it anywhere (status, logs, errors) is the URL without its passwords, in
// whichever form libpq accepts them (core/config/journalConfig.ts).
import * as fs from 'node:fs';
import { AssentError } from '../../core/base/errors.js';
import { databaseUrlSecrets, maskUrlPassword, type JournalConfig } from '../../core/config/journalConfig.js';

export interface DatabaseUrl {
  /** The URL to connect with; never logged, shown or put in an error. */
  url: string;
  /** The URL as it may be shown: the password masked. */
  display: string;
  /** The forms the password may take in text (raw, percent-encoded), to mask wherever they could appear. */
  secrets: string[];
}

/** Reads and checks the URL of a `postgres` journal section; throws `state_insecure` or `config_invalid` with the fix. */
export function resolveDatabaseUrl(journal: JournalConfig): DatabaseUrl {
  let url = journal.url;
  if (url === undefined) {
    const file = journal.urlFile;
    if (file === undefined) throw new AssentError('config_invalid', 'journal.kind is "postgres" but neither journal.url nor journal.urlFile is set; add one of them to config.json');
    url = readUrlFile(file);
  }
  try {
    new URL(url);
  } catch {
    throw new AssentError('config_invalid', `the team database URL${journal.urlFile === undefined ? ' in journal.url' : ` in ${journal.urlFile}`} does not parse; write it as postgresql://user:password@host:port/database`);
  }
  // Every password the driver could read from it: the userinfo's, and any password query parameter (R-TEAM-7).
  return { url, display: maskUrlPassword(url), secrets: databaseUrlSecrets(url) };
}

function readUrlFile(file: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (cause) {
    throw new AssentError('config_invalid', `journal.urlFile names ${file}, which cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'}); create it with the database URL on one line, mode 0600`, {
      cause,
      details: { path: file },
    });
  }
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new AssentError(
      'state_insecure',
      `journal.urlFile ${file} is readable or writable by others (mode ${mode.toString(8).padStart(4, '0')}); it holds the database password, so assent refuses it. Run: chmod 600 ${file}`,
      { details: { path: file, mode } },
    );
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid !== undefined && stat.uid !== uid) {
    throw new AssentError('state_insecure', `journal.urlFile ${file} belongs to another user (uid ${stat.uid}); it must be yours. Copy it and chown it to yourself, mode 0600`, {
      details: { path: file, uid: stat.uid },
    });
  }
  const url = fs.readFileSync(file, 'utf8').split('\n')[0]?.trim() ?? '';
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new AssentError('config_invalid', `journal.urlFile ${file} does not start with a postgresql:// URL; put the URL alone on its first line`, { details: { path: file } });
  }
  return url;
}

/** Text with every form of the password masked; a longer form first, so one that contains another is masked whole. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) if (secret !== '') out = out.split(secret).join('***');
  return out;
}
