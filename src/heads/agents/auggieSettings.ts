// Auggie's server-side switch for its hooks (observed with Auggie 0.36.0,
// docs/agents.md): Auggie runs hooks only while the answer of Augment's server
// to `/get-models` sets `feature_flags.enable_hooks`; without it, it runs
// every call and says nothing. Doctor cannot ask that server, but Auggie logs
// the flags it loaded at every start to `augment-log.txt` in its temp dir
// (`'Setup-featureFlags': Successfully loaded feature flags: {…"enableHooks":…}`,
// or `Using default feature flags: {…}` when the server could not be asked),
// and then `'HookConfigLoader': Loaded hooks configuration from FILE` for each
// settings file whose hooks it read. The last start it logged is what doctor
// reports; the switch may change at the server any time after.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TargetEnvironment } from './agentTargets.js';

/** The file Auggie logs to unless it is run with --log-file: `augment-log.txt` in os.tmpdir(). */
export function auggieLogFile(where: TargetEnvironment): string {
  const env = where.env;
  const dir = env['TMPDIR'] ?? env['TMP'] ?? env['TEMP'] ?? '/tmp';
  return path.join(dir === '' ? '/tmp' : dir.replace(/(.)\/+$/, '$1'), 'augment-log.txt');
}

/** The most of the log's end that is read: Auggie never rotates it. */
const TAIL_BYTES = 4 * 1024 * 1024;

const FLAGS_LINE = /^(\S+ \S+) \[\w+\] 'Setup-featureFlags': (?:Successfully loaded|Using default) feature flags: (\{.*\})\s*$/;
const LOADED_LINE = /'HookConfigLoader': Loaded hooks configuration from (.+?)\s*$/;

export interface AuggieSwitch {
  /** `on`/`off`: what Auggie's last logged start loaded; `unknown`: no log, or no such line in it. */
  state: 'on' | 'off' | 'unknown';
  logFile: string;
  /** The time of that start as the log writes it (local time). */
  at?: string;
  /** The settings files whose hooks Auggie read after that start. */
  loaded: string[];
  /** Why the state is unknown. */
  why?: string;
}

function readTail(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** What Auggie's own log says of its hooks at its last start. A log another user owns is not believed. */
export function readAuggieSwitch(where: TargetEnvironment): AuggieSwitch {
  const logFile = auggieLogFile(where);
  let text: string;
  try {
    const stat = fs.lstatSync(logFile);
    if (!stat.isFile()) return { state: 'unknown', logFile, loaded: [], why: `${logFile} is not a regular file` };
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return { state: 'unknown', logFile, loaded: [], why: `${logFile} belongs to another user, so doctor does not believe it` };
    text = readTail(logFile);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { state: 'unknown', logFile, loaded: [], why: code === 'ENOENT' ? `${logFile} does not exist (Auggie has not run with this temp dir, or ran with --log-file)` : `${logFile} could not be read (${code ?? String(error)})` };
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const found = FLAGS_LINE.exec(lines[i] as string);
    if (found === null) continue;
    let flags: unknown;
    try {
      flags = JSON.parse(found[2] as string);
    } catch {
      continue;
    }
    const enabled = typeof flags === 'object' && flags !== null ? (flags as Record<string, unknown>)['enableHooks'] : undefined;
    const loaded = lines
      .slice(i + 1)
      .map((line) => LOADED_LINE.exec(line)?.[1])
      .filter((file): file is string => file !== undefined);
    return { state: enabled === true ? 'on' : 'off', logFile, at: found[1] as string, loaded: [...new Set(loaded)] };
  }
  return { state: 'unknown', logFile, loaded: [], why: `${logFile} records no start of Auggie's` };
}

/** How a person checks the switch themselves, whatever doctor found. */
export const AUGGIE_CHECK =
  "start auggie and type /hooks (Auggie offers that command only while hooks are on), or look for \"enableHooks\" in the last 'Setup-featureFlags' line of Auggie's log";

export interface AuggieFindings {
  state: AuggieSwitch['state'];
  problems: string[];
  notes: string[];
}

/** Doctor's findings for Auggie's hooks: the server switch as Auggie's log last recorded it. */
export function auggieFindings(where: TargetEnvironment, read: (where: TargetEnvironment) => AuggieSwitch = readAuggieSwitch): AuggieFindings {
  const found = read(where);
  const depends = `Auggie runs hooks only while Augment's server switches them on for your account (the enable_hooks feature flag); doctor cannot ask that server`;
  if (found.state === 'off') {
    return {
      state: 'off',
      problems: [
        `Auggie's last start (${found.at ?? '?'}, in ${found.logFile}) loaded enableHooks false from Augment's server: Auggie then runs no hook, assent's neither, and runs every tool call without asking assent or saying so. Ask Augment to switch hooks on for your account; to check again, ${AUGGIE_CHECK}`,
      ],
      notes: [],
    };
  }
  if (found.state === 'on') {
    const files = found.loaded.length > 0 ? `, and read hooks from ${found.loaded.join(', ')}` : '';
    return {
      state: 'on',
      problems: [],
      notes: [`${depends}: its last start (${found.at ?? '?'}, in ${found.logFile}) had them on${files}. The server may switch them off at any start; to check, ${AUGGIE_CHECK}.`],
    };
  }
  return { state: 'unknown', problems: [], notes: [`${depends}, and ${found.why ?? 'Auggie\'s log says nothing of it'}. To check, ${AUGGIE_CHECK} (${found.logFile}).`] };
}
