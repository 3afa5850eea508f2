// How CLI commands run against the daemon: one connection per command (see
// heads/daemon/clientConnection.ts), closed afterwards, failures reported the
// way the command's mode asks for.
import type { DaemonClient } from '../daemon/rpcClient.js';
import { connectForCli } from '../daemon/clientConnection.js';
import { ExitWith, reportFailure } from './output.js';

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
