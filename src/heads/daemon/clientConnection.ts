// How a client on this machine reaches the user's daemon, for the CLI and the
// gateway alike: paths from the user's environment only (R-STATE-4), auto-spawn
// on (R-D-1) unless ASSENT_NO_AUTOSPAWN=1. Part of the daemon's socket client,
// which every head may use (see docs/architecture.md).
import { ensureStateDir, resolveStatePaths } from '../../state/statePaths.js';
import type { StatePaths } from '../../state/statePaths.js';
import { DaemonClient } from './rpcClient.js';

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
