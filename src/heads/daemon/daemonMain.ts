// The daemon process lifecycle (R-D-1, R-D-6 shutdown order): state dir, the
// single-instance pid file, the RPC server, signals, and a graceful stop that
// runs every registered shutdown hook before the socket disappears.
import { chmodSync, closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { AssentError } from '../../core/base/errors.js';
import { hostIdentityOf } from '../../journal/hostIdentity.js';
import { ensureStateDir } from '../../state/statePaths.js';
import type { StatePaths } from '../../state/statePaths.js';
import type { DaemonContext } from '../../operations/daemonContext.js';
import type { Operation } from '../../operations/operation.js';
import { createLogger } from '../../service/logger.js';
import type { Logger } from '../../service/logger.js';
import { isProcessAlive, readPidFile } from './autoSpawn.js';
import { startMemoryWatch, type MemoryWatch } from './memoryWatch.js';
import { DaemonClient } from './rpcClient.js';
import { startRpcServer } from './rpcServer.js';
import { youngGenerationBytes } from '../../service/youngGeneration.js';
import type { RpcServer } from './rpcServer.js';

export type { DaemonContext };

export interface RunDaemonOptions {
  paths: StatePaths;
  /** The registry to serve; may take a while (opening a team database) before the socket opens. */
  operations: (ctx: DaemonContext) => Operation[] | Promise<Operation[]>;
  logger?: Logger;
  onStarted?: (info: { pid: number; socket: string }) => void;
  /** Aborting it stops the daemon like SIGTERM does (tests run the daemon in-process). */
  signal?: AbortSignal;
  /** Listen to SIGINT/SIGTERM/SIGHUP (default true; in-process tests turn it off). */
  handleSignals?: boolean;
  now?: () => number;
}

/** How long a pid file naming a live daemon may go without an answering socket before it counts as stale. */
const LIVE_PID_GRACE_MS = 5000;

/**
 * Whether a live pid is plausibly an assent daemon (and not a pid reused after a
 * crash). Linux tells us through /proc; elsewhere we cannot know and assume yes.
 */
function looksLikeDaemon(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    return cmdline.includes('daemon') && cmdline.includes('run');
  } catch {
    return true;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** Bytes of log lines kept while daemon.log's disk takes none (full, issue 35); older whole lines go beyond it, counted. */
const MAX_UNWRITTEN_LOG_BYTES = 256 * 1024;

/**
 * A logger that appends JSON lines to daemon.log (0600), synchronously so a crash loses nothing.
 * A line the disk does not take (full) is kept, and what is kept goes first once it takes writes again,
 * so the lines that say why (the disk was full) are in the log when the operator reads it.
 */
export function createFileLogger(path: string): { logger: Logger; close(): void } {
  const fd = openSync(path, 'a', 0o600);
  chmodSync(path, 0o600);
  let open = true;
  let unwritten = Buffer.alloc(0);
  let lost = 0;
  const logger = createLogger({
    write: (line: string) => {
      if (!open) return;
      unwritten = unwritten.length === 0 ? Buffer.from(line) : Buffer.concat([unwritten, Buffer.from(line)]);
      while (unwritten.length > MAX_UNWRITTEN_LOG_BYTES) {
        const newline = unwritten.indexOf(0x0a);
        unwritten = unwritten.subarray(newline === -1 ? unwritten.length : newline + 1);
        lost += 1;
      }
      try {
        // A short write leaves the rest here: no line is written twice, or torn in two.
        while (unwritten.length > 0) unwritten = unwritten.subarray(writeSync(fd, unwritten));
        if (lost > 0) {
          writeSync(fd, `${JSON.stringify({ ts: new Date().toISOString(), level: 'warn', msg: 'log lines were lost while the disk took no writes', lost })}\n`);
          lost = 0;
        }
      } catch {
        // Kept for the next line; the logger never throws into the call path.
      }
    },
  });
  return {
    logger,
    close: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * Takes the single-instance lock: daemon.pid created exclusively. A pid file of a
 * dead process, or of a live one whose socket never answers, is stale and replaced.
 * A live daemon answering on the socket means refusal.
 */
async function claimPidFile(paths: StatePaths, logger: Logger): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      const fd = openSync(paths.pid, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } catch (error) {
        // An empty pid file (a full disk) is no lock: it goes, and the start fails naming why.
        unlinkQuietly(paths.pid);
        throw error;
      } finally {
        closeSync(fd);
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new AssentError('unavailable', `Cannot write the pid file ${paths.pid}: ${(error as Error).message}.`, { cause: error });
      }
    }
    const holder = readPidFile(paths.pid);
    if (holder !== undefined && isProcessAlive(holder) && looksLikeDaemon(holder)) {
      const deadline = Date.now() + LIVE_PID_GRACE_MS;
      while (Date.now() < deadline) {
        if (await DaemonClient.probe(paths.socket, 500)) {
          throw new AssentError(
            'conflict',
            `An assent daemon (pid ${holder}) is already running on ${paths.socket}. Use it, or stop it first with \`assent daemon stop\`.`,
            { details: { pid: holder, socket: paths.socket } },
          );
        }
        await sleep(50);
      }
    } else if (holder === undefined) {
      // Being written right now by another starting daemon, or left empty by a crash.
      await sleep(100);
      if (readPidFile(paths.pid) !== undefined) continue;
    } else if (!isProcessAlive(holder)) {
      logger.warn(
        `the previous daemon (pid ${holder}) ended without stopping: it was killed (kill -9, or the kernel's OOM killer at a memory limit such as MemoryMax=; \`journalctl -k\` or \`dmesg\` names an OOM kill) or it crashed. ` +
          'The calls it was deciding were refused, and the audit chain continues where it ended (`assent audit verify` checks it); if it was a memory limit, raise it or decide waiting approvals sooner',
        { previousPid: holder },
      );
    }
    unlinkQuietly(paths.pid);
  }
  throw new AssentError('conflict', `Could not take the daemon pid file ${paths.pid}; another daemon keeps starting. Run \`assent daemon status\`.`);
}

/**
 * Runs the daemon until SIGINT/SIGTERM, `daemon.shutdown` or the abort signal,
 * then stops gracefully: shutdown hooks first (while clients are still
 * connected, so waiting calls hear their denial), then the server, then the
 * socket and pid file. Resolves when stopped; the caller exits 0.
 */
export async function runDaemon(options: RunDaemonOptions): Promise<void> {
  const { paths } = options;
  const now = options.now ?? Date.now;
  ensureStateDir(paths);
  const fileLog = options.logger ? undefined : createFileLogger(paths.log);
  const logger = (options.logger ?? fileLog?.logger ?? createLogger({ write: () => undefined })).child({ pid: process.pid });
  try {
    await claimPidFile(paths, logger);
  } catch (error) {
    logger.warn('daemon not started', { error });
    fileLog?.close();
    throw error;
  }

  const hooks: (() => Promise<void> | void)[] = [];
  let server: RpcServer | undefined;
  let memoryWatch: MemoryWatch | undefined;
  let resolveStop: (reason: string) => void = () => undefined;
  const stopRequested = new Promise<string>((resolve) => {
    resolveStop = resolve;
  });
  const context: DaemonContext = {
    paths,
    logger,
    startedAt: now(),
    principal: principalOf(paths),
    onShutdown: (hook) => hooks.push(hook),
    requestShutdown: (reason = 'requested') => resolveStop(reason),
    // Descriptors open, the limit of open files and connections refused for want of them (rpcServer.ts).
    status: { memory: () => ({ ...memoryStatus(), ...memoryWatch?.status() }), descriptors: () => server?.descriptors() ?? null },
    connections: () => server?.connections() ?? 0,
  };

  const onSignal = (signal: NodeJS.Signals): void => resolveStop(signal);
  const handleSignals = options.handleSignals ?? true;
  // SIGHUP too: closing the terminal of a foreground daemon stops it gracefully instead of killing it mid-write.
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  if (handleSignals) for (const signal of signals) process.on(signal, onSignal);
  const onAbort = (): void => resolveStop('aborted');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) resolveStop('aborted');

  try {
    const operations = await options.operations(context);
    // Our pid file is claimed, so a socket file left here belongs to a dead daemon.
    unlinkQuietly(paths.socket);
    server = await startRpcServer({
      socketPath: paths.socket,
      operations,
      // Any socket client is stamped `cli`: over the socket the daemon cannot tell the
      // CLI from a script or a gateway, whatever channel a client names (hardening 1).
      contextFor: () => ({ principal: context.principal, head: 'rpc', channel: 'cli' }),
      logger: logger.child({ head: 'rpc' }),
    });
    // Near a memory cap the daemon says so once in its log, before the kernel or V8 ends it.
    memoryWatch = startMemoryWatch({ logger: logger.child({ head: 'memory' }) });
    logger.info('daemon started', { socket: paths.socket, home: paths.home });
    options.onStarted?.({ pid: process.pid, socket: paths.socket });

    const reason = await stopRequested;
    logger.info('daemon stopping', { reason });
    for (const hook of hooks) {
      try {
        await hook();
      } catch (error) {
        logger.error('shutdown hook failed', { error });
      }
    }
  } finally {
    if (handleSignals) for (const signal of signals) process.off(signal, onSignal);
    options.signal?.removeEventListener('abort', onAbort);
    memoryWatch?.stop();
    await server?.close();
    unlinkQuietly(paths.socket);
    if (readPidFile(paths.pid) === process.pid) unlinkQuietly(paths.pid);
    logger.info('daemon stopped');
    fileLog?.close();
  }
}

const mebibytes = (bytes: number): number => Math.round((bytes / 1_048_576) * 10) / 10;

/** Where the daemon's resident memory is (SPEC §14 budget): all of it, the JavaScript heap, and what lives outside it. */
function memoryStatus(): Record<string, number> {
  const usage = process.memoryUsage();
  return {
    rssMb: mebibytes(usage.rss),
    heapTotalMb: mebibytes(usage.heapTotal),
    heapUsedMb: mebibytes(usage.heapUsed),
    externalMb: mebibytes(usage.external),
    arrayBuffersMb: mebibytes(usage.arrayBuffers),
    youngGenerationMb: mebibytes(youngGenerationBytes()),
  };
}

/** `<os user>@<OS host name>` until the composition root knows `host.name` from the pinned configuration. */
function principalOf(paths: StatePaths): string {
  try {
    return hostIdentityOf(paths, { host: {} }).principal;
  } catch {
    return 'unknown@unknown';
  }
}
