// Reads config.json from the state directory and pins its revision (R-CFG-4):
// the digest of the exact text, so a changed file is noticed and never applied silently.
import * as fs from 'node:fs';
import { nativeDigestOf } from './nativeHash.js';
import { DEFAULT_CONFIG, validateConfig, type Config, type ConfigProblem } from '../core/config/config.js';
import { AssentError } from '../core/base/errors.js';

/** config.json larger than this is refused rather than parsed. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export interface ConfigFileInspection {
  /** Undefined when there is at least one error. */
  config: Config | undefined;
  /** `nativeDigestOf(text)` of the file as read, or of DEFAULT_CONFIG when the file is missing. */
  revision: string;
  problems: ConfigProblem[];
  exists: boolean;
  /** The exact text read; undefined when the file is missing (defaults) or too large. */
  text?: string;
}

export interface LoadedConfig {
  config: Config;
  revision: string;
  /** Warnings only (unknown keys); errors make loadConfigFile throw. */
  problems: ConfigProblem[];
  exists: boolean;
  /** The exact text the revision is the digest of; undefined for the defaults of a missing file. */
  text?: string;
}

/** Turns V8's "at position N" into line and column, so the operator can find the spot. */
export function locateJsonError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(message);
  const atEnd = /end of JSON input/i.test(message);
  if (position === null && !atEnd) return message;
  const offset = position === null ? text.length : Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${message.replace(/\s*\(line \d+ column \d+\)/, '')} (line ${line}, column ${column})`;
}

type Frame = { kind: 'object'; keys: Set<string>; expectKey: boolean; key: string | undefined } | { kind: 'array'; index: number };

/**
 * Finds keys repeated inside one object of already-valid JSON. JSON.parse keeps
 * the last one, so a person reading the file could see `"default": "deny"`
 * while assent runs a later `"default": "allow"`; that is refused.
 */
export function findDuplicateKeys(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  const pathHere = (key: string): string =>
    [...stack.slice(0, -1).map((f) => (f.kind === 'object' ? (f.key ?? '') : String(f.index))), key].join('.');
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '{') stack.push({ kind: 'object', keys: new Set(), expectKey: true, key: undefined });
    else if (c === '[') stack.push({ kind: 'array', index: 0 });
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') {
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.index += 1;
    } else if (c === ':' && top?.kind === 'object') top.expectKey = false;
    else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) found.push(pathHere(key));
        top.keys.add(key);
        top.key = key;
      }
      i = j;
    }
  }
  return [...new Set(found)];
}

/**
 * Reads and validates a config file without throwing for bad content: every
 * problem comes back so `assent config check` can print them all (R-CFG-5).
 * Throws `invalid_input` only when an existing file cannot be read.
 */
export function inspectConfigFile(path: string): ConfigFileInspection {
  let text: string;
  try {
    const stat = fs.statSync(path);
    if (!stat.isFile()) {
      throw new AssentError('invalid_input', `config ${path} is not a regular file; replace it with a JSON file`, { details: { path } });
    }
    if (stat.size > MAX_CONFIG_BYTES) {
      return {
        config: undefined,
        revision: nativeDigestOf(`size:${stat.size}`),
        exists: true,
        problems: [{ severity: 'error', path: '', message: `the file is ${stat.size} bytes; config.json may be at most ${MAX_CONFIG_BYTES} bytes` }],
      };
    }
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof AssentError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { config: DEFAULT_CONFIG, revision: nativeDigestOf(DEFAULT_CONFIG), problems: [], exists: false };
    }
    throw new AssentError('invalid_input', `cannot read config ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and its permissions`, {
      cause: error,
      details: { path },
    });
  }
  return inspectConfigText(text);
}

/** Validates config text already read (a file, or a copy the daemon pinned). */
export function inspectConfigText(text: string): ConfigFileInspection {
  const revision = nativeDigestOf(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      config: undefined,
      revision,
      exists: true,
      text,
      problems: [{ severity: 'error', path: '', message: `not valid JSON: ${locateJsonError(text, error)}` }],
    };
  }
  const validated = validateConfig(value);
  const duplicates: ConfigProblem[] = findDuplicateKeys(text).map((path) => ({
    severity: 'error',
    path,
    message: 'appears more than once in the same object; readers disagree on which value counts, so keep exactly one',
  }));
  const problems = [...duplicates, ...validated.problems];
  return { config: duplicates.length > 0 ? undefined : validated.config, revision, problems, exists: true, text };
}

/**
 * Loads the config the daemon will run with. A missing file means the
 * defaults. Throws `config_invalid` (details.problems lists every problem)
 * when there is any error, so nobody runs on a half-understood policy;
 * warnings come back in `problems`.
 */
/**
 * Whether config text fails to parse only because it stops early — the shape a
 * write cut short leaves (an editor or a copy killed mid-write): the parser ran
 * out of input, or stopped at its very end.
 */
export function isCutShortJson(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    if (/end of JSON input|Unterminated string/i.test(message)) return true;
    const at = /position (\d+)/.exec(message);
    return at !== null && Number(at[1]) >= text.trimEnd().length - 1;
  }
}

/** What to do about a config.json cut short: it cannot be fixed by editing a key, only restored. */
export function cutShortAdvice(path: string): string {
  return `restore it from your own copy, or run \`assent init --force\` (it keeps this file as ${path}.assent-backup-<time>) and redo your edits; \`assent config check\` then says when it is valid`;
}

export function loadConfigFile(path: string): LoadedConfig {
  const inspection = inspectConfigFile(path);
  const errors = inspection.problems.filter((p) => p.severity === 'error');
  if (inspection.text !== undefined && inspection.config === undefined && isCutShortJson(inspection.text)) {
    throw new AssentError(
      'config_invalid',
      `config ${path} ends in the middle of its JSON after ${Buffer.byteLength(inspection.text)} bytes, as a write cut short leaves it (${errors[0]?.message ?? 'not valid JSON'}); ${cutShortAdvice(path)}`,
      { details: { path, problems: inspection.problems, reason: 'cut-short' } },
    );
  }
  if (inspection.config === undefined || errors.length > 0) {
    const first = errors[0];
    const summary = first === undefined ? '' : `; first: ${first.path === '' ? '(document)' : first.path}: ${first.message}`;
    throw new AssentError(
      'config_invalid',
      `config ${path} has ${errors.length} error${errors.length === 1 ? '' : 's'}${summary}; run \`assent config check --file ${path}\` to see them all`,
      { details: { path, problems: inspection.problems } },
    );
  }
  const loaded: LoadedConfig = { config: inspection.config, revision: inspection.revision, problems: inspection.problems, exists: inspection.exists };
  if (inspection.text !== undefined) loaded.text = inspection.text;
  return loaded;
}
