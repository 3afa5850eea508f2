// Auto-spawn (R-D-1): a client that finds no daemon starts one, detached, under
// an exclusive spawn lock so a burst of clients starts only one. The daemon's own
// pid-file guard (runDaemon) is the final word on "exactly one daemon": even if a
// stale lock were broken twice, a second daemon refuses to start.
import { spawn as spawnProcess } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AssentError } from '../../core/base/errors.js';

/** The state files auto-spawn touches; `StatePaths` from the journal satisfies it. */
export interface SpawnPaths {
  home: string;
  socket: string;
  pid: string;
  log: string;
  spawnLock: string;
}

export type SpawnFunction = (command: string, args: string[], options: SpawnOptions) => Pick<ChildProcess, 'unref' | 'once' | 'pid'>;

export interface AutoSpawnOptions {
  paths: SpawnPaths;
  /** The CLI entry run as `node <entry> daemon run`; defaults to the built bin next to this module. */
  entryScript?: string;
  execPath?: string;
  /** How long to wait for the new daemon to answer (R-D-1: 5 s). */
  waitMs?: number;
  /** Creates and checks the state dir before the lock file is made in it. */
  prepareStateDir?: () => void;
  spawn?: SpawnFunction;
  env?: NodeJS.ProcessEnv;
}

const POLL_MS = 25;
/** A lock file whose holder has not written its pid after this long is abandoned. */
const EMPTY_LOCK_STALE_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a process with this pid runs (EPERM means it exists but is not ours).
 * A zombie counts as dead: a detached daemon's exit is reaped by init whenever
 * init gets to it, and waiting for that would only slow `daemon stop` down.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // Linux: the state letter follows the parenthesised command name.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return true;
  }
}

/** Reads a pid file; undefined when absent, empty or not a number. */
export function readPidFile(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone is fine.
  }
}

function defaultEntryScript(): string {
  return fileURLToPath(new URL('../../bin/assent.js', import.meta.url));
}

interface SpawnLock {
  release(): void;
}

/** Creates the lock file exclusively; undefined when another process holds it. */
function tryLock(path: string): SpawnLock | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new AssentError('unavailable', `Cannot create the spawn lock ${path}: ${(error as Error).message}. Check the state directory is writable.`, {
      details: { path },
      cause: error,
    });
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return {
    release: () => {
      if (readPidFile(path) === process.pid) unlinkQuietly(path);
    },
  };
}

/** Removes a lock whose holder died (or never wrote its pid); true if it was removed. */
function breakStaleLock(path: string): boolean {
  const holder = readPidFile(path);
  if (holder !== undefined) {
    if (isProcessAlive(holder)) return false;
  } else {
    try {
      if (Date.now() - statSync(path).mtimeMs < EMPTY_LOCK_STALE_MS) return false;
    } catch {
      return true;
    }
  }
  unlinkQuietly(path);
  return true;
}

/** A socket file is stale when the daemon that made it is gone (dead pid, or no pid file at all). */
function clearStaleSocket(paths: SpawnPaths): void {
  const pid = readPidFile(paths.pid);
  if (pid !== undefined && isProcessAlive(pid)) return;
  if (pid !== undefined) unlinkQuietly(paths.pid);
  if (existsSync(paths.socket)) unlinkQuietly(paths.socket);
}

/**
 * Makes sure a daemon answers on the socket, starting one if needed. `probe` says
 * whether a daemon answers the handshake now. Returns once one answers; throws
 * `unavailable` (naming daemon.log) when none does within the wait.
 */
export async function ensureDaemonRunning(options: AutoSpawnOptions, probe: () => Promise<boolean>): Promise<void> {
  const { paths } = options;
  const waitMs = options.waitMs ?? 5000;
  (options.prepareStateDir ?? (() => mkdirSync(paths.home, { recursive: true, mode: 0o700 })))();
  // Waiting for another spawner may take its whole wait; ours starts after it.
  const lockDeadline = Date.now() + waitMs + 2000;
  let lock: SpawnLock | undefined;
  while (!(lock = tryLock(paths.spawnLock))) {
    if (breakStaleLock(paths.spawnLock)) continue;
    if (await probe()) return;
    if (Date.now() > lockDeadline) {
      throw new AssentError(
        'unavailable',
        `Another process (pid ${readPidFile(paths.spawnLock) ?? 'unknown'}) holds the spawn lock ${paths.spawnLock} but no daemon came up. See ${paths.log}; if no assent process is running, remove the lock file.`,
        { details: { socket: paths.socket, lock: paths.spawnLock, reason: 'spawn-lock-held' } },
      );
    }
    await sleep(POLL_MS);
  }
  try {
    if (await probe()) return;
    clearStaleSocket(paths);
    const logStart = fileSize(paths.log);
    const exited = startDaemonProcess(options);
    const deadline = Date.now() + waitMs;
    let exitedAt: number | undefined;
    for (;;) {
      if (await probe()) return;
      if (exited.code !== undefined) exitedAt ??= Date.now();
      // A child that exited may have lost to a daemon started by hand; give that one a moment.
      if (Date.now() > deadline || (exitedAt !== undefined && Date.now() - exitedAt > 500)) break;
      await sleep(POLL_MS);
    }
    const why = exited.code === undefined ? undefined : daemonRefusal(paths.log, logStart);
    throw new AssentError(
      'unavailable',
      exited.code !== undefined
        ? why !== undefined
          ? `The daemon started for ${paths.socket} exited (${exited.code}) before answering, saying: ${why}. ${paths.log} has it too.`
          : `The daemon started for ${paths.socket} exited (${exited.code}) before answering. See ${paths.log} for why, then run \`assent daemon run\` to see it in the foreground.`
        : `The daemon started for ${paths.socket} did not answer within ${waitMs} ms. See ${paths.log}, or run \`assent daemon run\` in a terminal.`,
      { details: { socket: paths.socket, log: paths.log, reason: 'spawn-failed', ...(why === undefined ? {} : { daemonError: why }) } },
    );
  } finally {
    lock.release();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The most a failed start's own words are read back from daemon.log. */
const REFUSAL_READ_BYTES = 16 * 1024;
const REFUSAL_MAX_CHARS = 1200;

/**
 * Why the daemon we started refused to start, in its own words: the last
 * `assent: …` line it wrote to daemon.log after `from` (the CLI's failure line,
 * e.g. a damaged journal.db naming its repair). Undefined when it wrote none.
 */
function daemonRefusal(log: string, from: number): string | undefined {
  let text: string;
  try {
    const fd = openSync(log, 'r');
    try {
      const end = statSync(log).size;
      const start = Math.max(from, end - REFUSAL_READ_BYTES);
      const buffer = Buffer.alloc(Math.max(0, end - start));
      const read = readSync(fd, buffer, 0, buffer.length, start);
      text = buffer.subarray(0, read).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const line = text
    .split('\n')
    .reverse()
    .find((candidate) => candidate.startsWith('assent: '));
  if (line === undefined) return undefined;
  const reason = line.slice('assent: '.length).trim();
  return reason.length > REFUSAL_MAX_CHARS ? `${reason.slice(0, REFUSAL_MAX_CHARS)}…` : reason;
}

/**
 * Spawns `node <entry> daemon run` detached, output appended to daemon.log (0600),
 * stdin ignored. No V8 flags on its command line: the daemon meets its memory
 * budget by how it holds pending approvals (SPEC §14), and holds V8's young
 * generation itself once it listens (youngGeneration.ts), which does not slow
 * the call path.
 */
function startDaemonProcess(options: AutoSpawnOptions): { code: string | number | undefined } {
  const { paths } = options;
  const entry = options.entryScript ?? defaultEntryScript();
  if (!existsSync(entry)) {
    throw new AssentError('unavailable', `Cannot auto-start the daemon: its entry script ${entry} does not exist. Build the package (npm run build) or start \`assent daemon run\` yourself.`, {
      details: { entry, reason: 'spawn-failed' },
    });
  }
  const state: { code: string | number | undefined } = { code: undefined };
  const logFd = openSync(paths.log, 'a', 0o600);
  try {
    chmodSync(paths.log, 0o600);
    const spawn = options.spawn ?? (spawnProcess as unknown as SpawnFunction);
    const child = spawn(options.execPath ?? process.execPath, [entry, 'daemon', 'run'], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: options.env ?? process.env,
      cwd: paths.home,
    });
    child.once('exit', (code: number | null, signal: string | null) => {
      state.code = code ?? signal ?? 'unknown';
    });
    child.once('error', (error: Error) => {
      state.code = error.message;
    });
    child.unref();
  } finally {
    closeSync(logFd);
  }
  return state;
}
