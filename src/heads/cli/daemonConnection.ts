// How CLI commands reach the daemon: paths from the user's environment only
// (R-STATE-4), auto-spawn on (R-D-1) unless ASSENT_NO_AUTOSPAWN=1.
import { ensureStateDir, resolveStatePaths } from '../../journal/statePaths.js';
import type { StatePaths } from '../../journal/statePaths.js';
import { DaemonClient } from '../daemon/rpcClient.js';
import { ExitWith, reportFailure } from './output.js';

export interface ConnectForCliOptions {
  env?: NodeJS.ProcessEnv;
  /** Default true; ASSENT_NO_AUTOSPAWN=1 in the environment turns it off. */
  autoSpawn?: boolean;
  timeoutMs?: number;
}

/** Whether the environment forbids starting a daemon (tests, gateways that must fail closed). */
export function autoSpawnDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env['ASSENT_NO_AUTOSPAWN'];
  return value !== undefined && value !== '' && value !== '0';
}

/** Connects to the user's daemon, starting it when none runs. */
export async function connectForCli(options: ConnectForCliOptions = {}): Promise<DaemonClient> {
  const env = options.env ?? process.env;
  const paths: StatePaths = resolveStatePaths(env);
  const spawn = (options.autoSpawn ?? true) && !autoSpawnDisabled(env);
  return DaemonClient.connect({
    socketPath: paths.socket,
    autoSpawn: spawn ? { paths, prepareStateDir: () => ensureStateDir(paths), env } : false,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
}

/** The `--json` flag every command takes (R-CLI-4). */
export interface JsonFlag {
  json?: boolean;
}

/**
 * Runs a command body with a daemon connection and closes it afterwards; any
 * failure is printed the way the command's mode asks for and ends the command
 * with its registry exit code (R-CLI-5).
 */
export async function withDaemon(options: JsonFlag, body: (client: DaemonClient) => Promise<void>): Promise<void> {
  let client: DaemonClient | undefined;
  try {
    client = await connectForCli();
    await body(client);
  } catch (error) {
    if (error instanceof ExitWith) throw error;
    throw new ExitWith(reportFailure(error, options));
  } finally {
    client?.close();
  }
}
