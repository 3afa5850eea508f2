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

// What libpq (and node-postgres) accept as a database address, and where each
// puts a password (R-TEAM-7): the URI's userinfo (`postgresql://user:pw@host`),
// a query parameter (`?password=pw`, `?sslpassword=pw`; the key may be
// percent-encoded, and node-postgres reads `+` as a space), or a keyword/value
// string (`host=db password=pw`, `password='p w'`). A `passfile` names a file;
// assent never reads it, so its contents cannot reach a message.

/** Whether a connection parameter's name (as written, maybe percent-encoded) names a password, in any case. */
function isPasswordKey(rawKey: string): boolean {
  let key = rawKey;
  // Each decoding a reader might apply: libpq decodes once; `+` is a space to node-postgres.
  for (let round = 0; round < 3; round += 1) {
    if (key.toLowerCase().replace(/\s/g, '').includes('password')) return true;
    const next = decodeSafely(key.replace(/\+/g, ' '));
    if (next === key) return false;
    key = next;
  }
  return key.toLowerCase().replace(/\s/g, '').includes('password');
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The parts of a postgres URI as the WHATWG URL parser splits them (tabs and
 * newlines removed, as it does), or undefined for text that is not one. Split
 * whether or not the URL parses: a driver may still read one that does not.
 */
interface UriParts {
  scheme: string;
  /** Before the last `@` of the authority, if any. */
  userinfo: string | undefined;
  /** The authority after the userinfo, and the path. */
  rest: string;
  /** After `?`, up to `#`. */
  query: string | undefined;
  fragment: string | undefined;
}

const URI_START = /^(postgres(?:ql)?):\/\//i;

function uriParts(text: string): UriParts | undefined {
  // eslint-disable-next-line no-control-regex -- the URL parser strips these, so the split must see what it sees
  const normal = text.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  const start = URI_START.exec(normal);
  if (start === null) return undefined;
  let body = normal.slice(start[0].length);
  let fragment: string | undefined;
  const hash = body.indexOf('#');
  if (hash !== -1) {
    fragment = body.slice(hash + 1);
    body = body.slice(0, hash);
  }
  let query: string | undefined;
  const question = body.indexOf('?');
  if (question !== -1) {
    query = body.slice(question + 1);
    body = body.slice(0, question);
  }
  const slash = body.indexOf('/');
  const authority = slash === -1 ? body : body.slice(0, slash);
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? undefined : authority.slice(0, at);
  return { scheme: start[1] as string, userinfo, rest: at === -1 ? body : body.slice(at + 1), query, fragment };
}

/** Each `key=value` of a query, as written. */
function queryPairs(query: string): { key: string; value: string | undefined }[] {
  return query.split('&').map((part) => {
    const eq = part.indexOf('=');
    return eq === -1 ? { key: part, value: undefined } : { key: part.slice(0, eq), value: part.slice(eq + 1) };
  });
}

/** `keyword = value` pairs of a libpq keyword/value string: the keyword, and the value as written (quotes included). */
const CONNINFO_PAIR = /((?:^|\s)([^\s=]+)\s*=\s*)('(?:[^'\\]|\\.)*(?:'|$)|[^\s']\S*|(?=\s|$))/g;

/** A keyword/value string's value as libpq reads it: quotes removed, `\'` and `\\` unescaped. */
function unquote(value: string): string {
  if (!value.startsWith("'")) return value;
  return value.slice(1, value.endsWith("'") && value.length > 1 ? -1 : undefined).replace(/\\(.)/g, '$1');
}

/** How deep an address inside an address is looked into (libpq expands a `dbname` that is itself a connection string). */
const MAX_NESTING = 3;

/** Whether a parameter value (decoded) is itself an address that may hold a password. */
function isNestedAddress(value: string): boolean {
  return URI_START.test(value.trim()) || /(?:^|\s)[^\s=]*=/.test(value);
}

function maskConnectionString(text: string, depth: number): string {
  return text.replace(CONNINFO_PAIR, (whole: string, lead: string, key: string, value: string) => {
    if (isPasswordKey(key)) return `${lead}***`;
    const plain = unquote(value);
    return depth < MAX_NESTING && plain !== '' && isNestedAddress(plain) ? `${lead}'${maskAddress(plain, depth + 1).replace(/[\\']/g, '\\$&')}'` : whole;
  });
}

/** Whether the URL parser takes this text as a URL at all. */
function parses(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

function maskAddress(address: string, depth: number): string {
  const parts = uriParts(address);
  if (parts === undefined) {
    if (URI_START.test(address.trim()) || !address.includes('=')) return '(a URL that does not parse)';
    return maskConnectionString(address, depth);
  }
  if (!parses(address)) return '(a URL that does not parse)';
  let shown = `${parts.scheme}://`;
  if (parts.userinfo !== undefined) {
    const colon = parts.userinfo.indexOf(':');
    shown += colon === -1 ? `${parts.userinfo}@` : `${parts.userinfo.slice(0, colon)}:***@`;
  }
  shown += parts.rest;
  if (parts.query !== undefined) {
    const pairs = queryPairs(parts.query).map(({ key, value }) => {
      if (value === undefined) return key;
      if (isPasswordKey(key)) return `${key}=***`;
      const decoded = decodeSafely(value);
      if (depth < MAX_NESTING && isNestedAddress(decoded)) return `${key}=${encodeURIComponent(maskAddress(decoded, depth + 1))}`;
      return `${key}=${value}`;
    });
    shown += `?${pairs.join('&')}`;
  }
  if (parts.fragment !== undefined) shown += parts.fragment === '' ? '#' : '#***';
  return shown;
}

/**
 * The database address as it may be shown (status, logs, errors, diffs): every
 * password libpq or node-postgres would read from it replaced by `***` —
 * in the userinfo, in any password query parameter however its name is cased
 * or encoded, in a fragment, in a keyword/value string, in an address nested
 * in a parameter. Text that is neither a URI that parses nor a keyword/value
 * string is not shown at all.
 */
export function maskUrlPassword(url: string): string {
  return maskAddress(url, 0);
}

/** Every text form a password may take where it could be written (as written, decoded either way, re-encoded, JSON-escaped). */
function secretForms(raw: string): string[] {
  const forms = new Set<string>([raw]);
  for (const decoded of [decodeSafely(raw), decodeSafely(raw.replace(/\+/g, ' '))]) {
    forms.add(decoded);
    forms.add(encodeURIComponent(decoded));
    forms.add(JSON.stringify(decoded).slice(1, -1));
  }
  return [...forms].filter((form) => form !== '');
}

function collectSecrets(address: string, depth: number, found: Set<string>): void {
  const parts = uriParts(address);
  if (parts !== undefined) {
    if (parts.userinfo !== undefined && parts.userinfo.includes(':')) {
      for (const form of secretForms(parts.userinfo.slice(parts.userinfo.indexOf(':') + 1))) found.add(form);
    }
    for (const { key, value } of queryPairs(parts.query ?? '')) {
      if (value === undefined) continue;
      if (isPasswordKey(key)) for (const form of secretForms(value)) found.add(form);
      else if (depth < MAX_NESTING && isNestedAddress(decodeSafely(value))) collectSecrets(decodeSafely(value), depth + 1, found);
    }
    if (parts.fragment !== undefined && parts.fragment !== '') for (const form of secretForms(parts.fragment)) found.add(form);
    return;
  }
  for (const match of address.matchAll(CONNINFO_PAIR)) {
    const value = match[3] ?? '';
    if (value === '') continue;
    if (isPasswordKey(match[2] ?? '')) {
      found.add(value);
      for (const form of secretForms(unquote(value))) found.add(form);
    } else if (depth < MAX_NESTING && isNestedAddress(unquote(value))) {
      collectSecrets(unquote(value), depth + 1, found);
    }
  }
}

/**
 * Every password in a database address and the forms it may take in text, to
 * mask wherever they could appear (a driver's error, a log line); longest first,
 * so one that contains another is masked whole.
 */
export function databaseUrlSecrets(url: string): string[] {
  const found = new Set<string>();
  collectSecrets(url, 0, found);
  return [...found].sort((a, b) => b.length - a.length);
}

/** How a journal section reads in a diff line or in status: never with a password. */
export function describeJournal(journal: JournalConfig): string {
  if (journal.kind === 'sqlite') return 'sqlite';
  if (journal.url !== undefined) return `postgres ${maskUrlPassword(journal.url)}`;
  return `postgres (URL in ${journal.urlFile ?? '?'})`;
}

/** The reload diff line for `journal` (R-CFG-4); diffPolicy marks it: a changed journal takes effect when the daemon restarts. */
export function diffJournalConfig(a: { journal: JournalConfig }, b: { journal: JournalConfig }): string[] {
  const before = describeJournal(a.journal);
  const after = describeJournal(b.journal);
  if (before === after && a.journal.url === b.journal.url) return [];
  return [`journal: ${before} → ${after}`];
}

/** A copy of a configuration whose journal URL has its password masked, for anything that shows or sends it. */
export function withoutJournalSecret<T extends { journal: JournalConfig }>(config: T): T {
  if (config.journal.url === undefined) return config;
  return { ...config, journal: { ...config.journal, url: maskUrlPassword(config.journal.url) } };
}
