// Reading and writing an agent's settings files: refuse what is not a regular
// file or not valid JSON (naming it, changing nothing), keep the file's
// indentation and line endings when writing it back, write a backup beside it
// first, and replace it atomically so it is never half written.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stripComments } from 'jsonc-parser';
import { AssentError } from '../../core/base/errors.js';
import { locateJsonError } from '../../journal/configFile.js';
import { writeFileNew } from '../../state/statePaths.js';

/** Settings files larger than this are refused rather than parsed (Claude Code's ~/.claude.json grows with history, so generously). */
export const MAX_SETTINGS_BYTES = 16 * 1024 * 1024;

/** What a text file looks like on disk: missing, or its exact text. */
export type FileState = { exists: false } | { exists: true; text: string; mode: number };

export interface JsonFormat {
  /** One indentation step ('' for a one-line file). */
  indent: string;
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

/**
 * The real path of a settings file: a symlinked settings file (a dotfiles
 * repository) is edited where it lives, so the link survives.
 */
export function resolveSettingsPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/** Reads a text file; throws `invalid_input` naming it when it cannot be read or is not a regular file. */
export function readFileState(file: string): FileState {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false };
    throw new AssentError('invalid_input', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check its permissions`, { cause: error, details: { path: file } });
  }
  if (!stat.isFile()) throw new AssentError('invalid_input', `${file} is not a regular file; move it away or fix it, then run this again`, { details: { path: file } });
  if (stat.size > MAX_SETTINGS_BYTES) {
    throw new AssentError('invalid_input', `${file} is ${stat.size} bytes, more than the ${MAX_SETTINGS_BYTES} a settings file may have here; nothing was changed`, { details: { path: file } });
  }
  try {
    return { exists: true, text: fs.readFileSync(file, 'utf8'), mode: stat.mode & 0o777 };
  } catch (error) {
    throw new AssentError('invalid_input', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check its permissions`, { cause: error, details: { path: file } });
  }
}

export function detectJsonFormat(text: string): JsonFormat {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const body = text.replace(/\s+$/, '');
  const indented = /\n([ \t]+)\S/.exec(body);
  return { indent: body.includes('\n') ? (indented?.[1] ?? '  ') : '', eol, finalNewline: /\n$/.test(text) };
}

/** The default format of a file assent creates. */
export const NEW_FILE_FORMAT: JsonFormat = { indent: '  ', eol: '\n', finalNewline: true };

export function serializeJson(value: unknown, format: JsonFormat): string {
  let text = JSON.stringify(value, null, format.indent === '' ? undefined : format.indent);
  if (format.eol === '\r\n') text = text.replace(/\n/g, '\r\n');
  return format.finalNewline ? `${text}${format.eol}` : text;
}

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * How an agent reads its JSON settings: `json`, plain JSON; `comments`, JSON
 * with `//` and `/* *\/` comments, which are blanked out before JSON.parse
 * reads the rest (what Gemini CLI and Qwen Code do, with strip-json-comments;
 * trailing commas stay an error there, and so here).
 */
export type JsonDialect = 'json' | 'comments';

/** The text with its comments blanked out (each character but line breaks becomes a space, so offsets, lines and columns stay). */
function blankComments(text: string): string {
  return stripComments(text, ' ');
}

/** The value of settings text read as the agent reads it; throws JSON.parse's error. */
export function readJson(text: string, dialect: JsonDialect): unknown {
  const bare = text.replace(/^\uFEFF/, '');
  return JSON.parse(dialect === 'comments' ? blankComments(bare) : bare);
}

/**
 * Parses a settings file's text as a JSON object (an empty or blank file is an
 * empty object). Throws `invalid_input` naming the file otherwise: a file the
 * agent itself could not read must not be rewritten from a guess.
 */
export function parseSettings(file: string, text: string, dialect: JsonDialect = 'json'): JsonObject {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = readJson(text, dialect);
  } catch (error) {
    // Line and column, as `assent config check` gives them, not V8's character offset.
    const bare = text.replace(/^\uFEFF/, '');
    const where = locateJsonError(dialect === 'comments' ? blankComments(bare) : bare, error);
    const hint = dialect === 'json' && commentsOnly(bare) ? '; it holds comments, and this agent reads its settings as plain JSON' : '';
    throw new AssentError('invalid_input', `${file} is not valid JSON (${where}${hint}); fix it or move it away, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  if (!isJsonObject(value)) {
    throw new AssentError('invalid_input', `${file} holds JSON that is not an object; fix it or move it away, then run this again. Nothing was changed`, { details: { path: file } });
  }
  return value;
}

/** Whether plain JSON text fails only for its comments. */
function commentsOnly(text: string): boolean {
  try {
    JSON.parse(blankComments(text));
    return true;
  } catch {
    return false;
  }
}

/** `<file>.assent-backup-20261201T102649Z`: a UTC timestamp to the second. */
export function backupName(file: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${file}.assent-backup-${stamp}`;
}

/** Writes the exact current bytes beside the file (0600, never over an existing file); returns the backup's path. */
export function writeBackup(file: string, text: string, now: Date): string {
  const base = backupName(file, now);
  for (let n = 0; n < 100; n += 1) {
    const candidate = n === 0 ? base : `${base}-${n}`;
    try {
      writeFileNew(candidate, text);
      return candidate;
    } catch (error) {
      if (error instanceof AssentError && error.details?.['code'] === 'EEXIST') continue;
      throw error;
    }
  }
  throw new AssentError('conflict', `cannot find a free backup name beside ${file} (${base}…); remove old backups, then run this again`, { details: { path: file } });
}

/** Creates the missing directories of `dir` with mode 0700; returns those it created, outermost first. */
export function createDirs(dir: string): string[] {
  const missing: string[] = [];
  let current = dir;
  while (!fs.existsSync(current)) {
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const created of missing) fs.mkdirSync(created, { mode: 0o700 });
  return missing;
}

/**
 * Replaces `file` with `text` atomically (a temp file beside it, fsync,
 * rename), keeping the old file's mode; a new file gets 0600. Before the
 * rename the file is read again: if it changed since `expected` was read
 * (the agent wrote it meanwhile), nothing is replaced and `conflict` is thrown.
 */
export function replaceFile(file: string, text: string, expected: FileState, mode?: number): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.assent-${randomBytes(6).toString('hex')}.tmp`);
  writeFileNew(temp, text);
  try {
    fs.chmodSync(temp, mode ?? (expected.exists ? expected.mode : 0o600));
    const now = readFileState(file);
    const same = now.exists === expected.exists && (!now.exists || (expected.exists && now.text === expected.text));
    if (!same) {
      throw new AssentError('conflict', `${file} changed while assent was editing it (the agent may have written it); nothing was changed, run this again`, { details: { path: file } });
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
