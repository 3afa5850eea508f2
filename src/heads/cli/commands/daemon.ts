// `assent daemon run|status|stop` (R-D-1). `stop` with no daemon running is not a
// failure: the wanted state (no daemon) holds, so it says so and exits 0.
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapedJson, escapeText } from '../../../core/base/escape.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import type { StatePaths } from '../../../state/statePaths.js';
import type { DaemonStatus } from '../../../operations/daemonOperations.js';
import { isProcessAlive, readPidFile } from '../../daemon/autoSpawn.js';
import { DaemonClient } from '../../daemon/rpcClient.js';
import { connectForCli } from '../../daemon/clientConnection.js';
import { VERSION } from '../../../version.js';
import { printJsonOk } from '../output.js';
import { pinnedConfigStatus, unconfirmedChangeNote } from '../pinnedConfig.js';

interface JsonFlag {
  json?: boolean;
}

const STOP_WAIT_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function formatUptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function printStatus(status: DaemonStatus): void {
  const { pid, version, uptimeMs, socket, home, connections, startedAt: _startedAt, host, ...sections } = status;
  const lines = [
    `assent daemon ${version} running (pid ${pid}, up ${formatUptime(uptimeMs)})`,
    `  socket       ${escapeText(socket)}`,
    `  state dir    ${escapeText(home)}`,
    `  connections  ${connections}`,
  ];
  // R-TEAM-3: the host's label beside its id, and the principal its CLI decisions are recorded as.
  const hostInfo = host as { id?: unknown; name?: unknown; principal?: unknown } | undefined;
  if (hostInfo !== undefined && typeof hostInfo.name === 'string' && typeof hostInfo.id === 'string') {
    lines.push(`  host         ${escapeText(hostInfo.name)} (hostId ${escapeText(hostInfo.id)})`);
    if (typeof hostInfo.principal === 'string') lines.push(`  principal    ${escapeText(hostInfo.principal)}`);
  }
  for (const [name, value] of Object.entries(sections)) lines.push(...statusSection(name, value));
  // Issue 35: the cause and the fix, where the operator looks first.
  const storage = sections['storage'] as { ok?: unknown; cause?: unknown } | undefined;
  if (storage?.ok === false && typeof storage.cause === 'string') lines.push('', `note: every call is refused: ${escapeText(storage.cause)}`);
  const config = pinnedConfigStatus(status);
  if (config?.changedOnDisk === true) lines.push('', `note: ${escapeText(unconfirmedChangeNote(config))}`);
  if (config?.fromNextStart !== undefined && config.fromNextStart.length > 0) {
    lines.push('', `note: confirmed, used from the next daemon start: ${escapeText(config.fromNextStart.join(', '))}; restart the daemon to apply (\`assent daemon stop\`, then \`assent daemon run\`).`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** One status section for people: a heading, then one escaped `key value` line per leaf. */
function statusSection(name: string, value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`  ${escapeText(name).padEnd(12)} ${escapedJson(value)}`];
  const leaves: string[] = [];
  const walk = (prefix: string, node: unknown): void => {
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
      for (const [key, child] of Object.entries(node)) walk(prefix === '' ? key : `${prefix}.${key}`, child);
    } else {
      leaves.push(`    ${escapeText(prefix).padEnd(26)} ${typeof node === 'string' ? escapeText(node) : escapedJson(node)}`);
    }
  };
  walk('', value);
  return [`  ${escapeText(name)}`, ...leaves];
}

/**
 * The line the foreground daemon prints when the web page is not served: the
 * listener's error already names the cause and the fix, once each
 * (heads/http/httpServer.ts listenFailureMessage), so it is added nothing but a
 * full stop when it has none.
 */
export function webNotServedNotice(error: string): string {
  const text = escapeText(error).trim();
  return `assent: the web page is not served: ${text}${/[.!?]$/.test(text) ? '' : '.'}`;
}

/**
 * The foreground view says when the web page is not served (a busy port):
 * otherwise that shows only in daemon.log. The listener starts beside the
 * socket, so its outcome is awaited briefly.
 */
async function reportWebListener(client: DaemonClient): Promise<void> {
  for (let i = 0; i < 40; i += 1) {
    const web = (await client.call<Record<string, unknown>>('daemon.status', {}))['web'] as { url?: unknown; error?: unknown } | undefined;
    if (web === undefined || typeof web.url === 'string') return;
    if (typeof web.error === 'string' && web.error !== 'not started') {
      process.stderr.write(`${webNotServedNotice(web.error)}\n`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * R-D-1: in a terminal, the foreground daemon also shows the live queue and takes
 * answers inline, through its own socket like any other client. Leaving the view
 * (q or Ctrl+C) stops the daemon, as quitting any foreground program does.
 */
async function showInlineQueue(socketPath: string, stop: AbortController): Promise<void> {
  try {
    const client = await DaemonClient.connect({ socketPath, autoSpawn: false });
    try {
      await reportWebListener(client);
      const { runWatch } = await import('./watch.js');
      await runWatch(client, { selector: undefined, json: false });
    } finally {
      client.close();
    }
  } catch (error) {
    process.stderr.write(`assent: the inline queue could not start (${error instanceof Error ? error.message : String(error)}); use \`assent watch\` in another terminal.\n`);
    return;
  }
  stop.abort();
}

async function runCommand(options: JsonFlag): Promise<void> {
  // Loaded here, not at the top: the daemon's services (journal, SQLite) would slow every other command's start.
  const [{ runDaemon }, { allOperations }, { holdYoungGeneration }] = await Promise.all([
    import('../../daemon/daemonMain.js'),
    import('../../daemon/daemonRuntime.js'),
    import('../../../service/youngGeneration.js'),
  ]);
  const paths = resolveStatePaths(process.env);
  const stop = new AbortController();
  const interactive = !options.json && Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY);
  await runDaemon({
    paths,
    operations: allOperations,
    signal: stop.signal,
    onStarted: ({ pid, socket }) => {
      holdYoungGeneration();
      if (options.json) {
        printJsonOk({ pid, socket, version: VERSION });
        return;
      }
      process.stderr.write(`assent daemon listening on ${socket} (pid ${pid}); Ctrl+C stops it\n`);
      if (interactive) void showInlineQueue(socket, stop);
    },
  });
  // Stopped cleanly. Should a stray handle (e.g. the terminal) keep the loop alive, do not linger.
  setTimeout(() => process.exit(0), 2000).unref();
}

async function statusCommand(options: JsonFlag): Promise<void> {
  const client = await connectForCli();
  try {
    const status = await client.call<DaemonStatus>('daemon.status', {});
    if (options.json) printJsonOk(status);
    else printStatus(status);
  } finally {
    client.close();
  }
}

/**
 * Asks the daemon to stop and returns its pid. A daemon of another version cannot
 * be spoken to, yet `daemon stop` is the fix its refusal recommends: it is stopped
 * with SIGTERM (the same graceful path), once its pid file confirms the pid.
 */
async function requestStop(paths: StatePaths): Promise<{ pid: number; version?: string } | undefined> {
  let client: DaemonClient;
  try {
    client = await DaemonClient.connect({ socketPath: paths.socket, autoSpawn: false });
  } catch (error) {
    if (!(error instanceof AssentError)) throw error;
    if (error.type === 'unavailable' && error.details?.['reason'] === 'not-running') return undefined;
    const pid = error.details?.['pid'];
    if (error.type === 'version_mismatch' && typeof pid === 'number' && readPidFile(paths.pid) === pid) {
      process.kill(pid, 'SIGTERM');
      const version = error.details?.['daemonVersion'];
      return typeof version === 'string' ? { pid, version } : { pid };
    }
    throw error;
  }
  try {
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    const { pid } = await client.call<{ pid: number }>('daemon.shutdown', {});
    await closed;
    return { pid };
  } finally {
    client.close();
  }
}

async function stopCommand(options: JsonFlag): Promise<void> {
  const paths = resolveStatePaths(process.env);
  const stopped = await requestStop(paths);
  if (stopped === undefined) {
    if (options.json) printJsonOk({ running: false, stopped: false });
    else process.stdout.write(`No assent daemon is running on ${paths.socket}; nothing to stop.\n`);
    return;
  }
  const { pid } = stopped;
  const deadline = Date.now() + STOP_WAIT_MS;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) {
      throw new AssentError('timeout', `The daemon (pid ${pid}) accepted the stop request but is still running after ${STOP_WAIT_MS / 1000} s. See daemon.log; \`kill ${pid}\` ends it.`, {
        details: { pid },
      });
    }
    await sleep(20);
  }
  if (options.json) printJsonOk({ running: false, stopped: true, pid, ...(stopped.version === undefined ? {} : { version: stopped.version }) });
  else process.stdout.write(`Stopped the assent daemon${stopped.version === undefined ? '' : ` ${stopped.version}`} (pid ${pid}).\n`);
}

/** Registers the `daemon` commands on the program. */
export function registerDaemonCommands(program: Command): void {
  const daemon = program.command('daemon').description('Run, inspect or stop the assent daemon that holds pending approvals.');
  daemon
    .command('run')
    .description('Run the daemon in the foreground until Ctrl+C, SIGTERM or SIGHUP.')
    .option('--json', 'print one JSON line when listening')
    .action((options: JsonFlag) => runCommand(options));
  daemon
    .command('status')
    .description('Show the daemon (starting it if none runs).')
    .option('--json', 'print one JSON document')
    .action((options: JsonFlag) => statusCommand(options));
  daemon
    .command('stop')
    .description('Stop the daemon gracefully; pending calls are denied with reason shutdown.')
    .option('--json', 'print one JSON document')
    .action((options: JsonFlag) => stopCommand(options));
}
