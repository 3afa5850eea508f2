// The `journal` section of config.json (R-TEAM-1): the embedded SQLite journal
// (the default) or a PostgreSQL database shared by a team of hosts, named by
// `url` or, for a URL with a password, by `urlFile` (a 0600 file holding it).
// Pure: the file is read and its mode checked by src/journal/postgres. A URL's
// password never leaves this module in a message or a diff line (R-TEAM-7).
import { z } from 'zod';

const URL_PATTERN = /^postgres(ql)?:\/\/\S+$/;
const JOURNAL_ALLOWED = 'an object with "kind" ("sqlite" or "postgres") and, for "postgres", "url" or "urlFile"';

export const JournalSchema = z
  .object(
    {
      kind: z.enum(['sqlite', 'postgres'], { error: '"sqlite" or "postgres"' }).default('sqlite'),
      url: z.string({ error: 'a postgresql:// URL string' }).optional(),
      urlFile: z.string({ error: 'an absolute path string' }).optional(),
    },
    { error: JOURNAL_ALLOWED },
  )
  .superRefine((journal, ctx) => {
    const named = (journal.url !== undefined ? 1 : 0) + (journal.urlFile !== undefined ? 1 : 0);
    if (journal.kind === 'sqlite' && named > 0) {
      ctx.addIssue({ code: 'custom', message: '"url" and "urlFile" apply only to "kind": "postgres"; remove them, or set "kind" to "postgres"' });
    }
    if (journal.kind === 'postgres' && named !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          '"kind": "postgres" needs exactly one of "url" (postgresql://user@host:port/database) or "urlFile" (an absolute path to a 0600 file holding the URL, for a URL with a password)',
      });
    }
    // The value is never repeated here: it may carry a password.
    if (journal.url !== undefined && !URL_PATTERN.test(journal.url)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'expected a postgresql:// or postgres:// URL, e.g. "postgresql://assent@db.internal:5432/assent"' });
    }
    if (journal.urlFile !== undefined && !journal.urlFile.startsWith('/')) {
      ctx.addIssue({ code: 'custom', path: ['urlFile'], message: 'expected an absolute path to a file (mode 0600) that holds the URL' });
    }
  });
export type JournalConfig = z.infer<typeof JournalSchema>;

/** The URL with its password (if any) replaced by `***`; unparsable text is not shown at all. */
export function maskUrlPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(a URL that does not parse)';
  }
}

/** How a journal section reads in a diff line or in status: never with a password. */
export function describeJournal(journal: JournalConfig): string {
  if (journal.kind === 'sqlite') return 'sqlite';
  if (journal.url !== undefined) return `postgres ${maskUrlPassword(journal.url)}`;
  return `postgres (URL in ${journal.urlFile ?? '?'})`;
}

/** The reload diff line for `journal` (R-CFG-4); a changed journal takes effect when the daemon restarts. */
export function diffJournalConfig(a: { journal: JournalConfig }, b: { journal: JournalConfig }): string[] {
  const before = describeJournal(a.journal);
  const after = describeJournal(b.journal);
  if (before === after && a.journal.url === b.journal.url) return [];
  return [`journal: ${before} → ${after} (used from the next daemon start)`];
}

/** A copy of a configuration whose journal URL has its password masked, for anything that shows or sends it. */
export function withoutJournalSecret<T extends { journal: JournalConfig }>(config: T): T {
  if (config.journal.url === undefined) return config;
  return { ...config, journal: { ...config.journal, url: maskUrlPassword(config.journal.url) } };
}
