// Which gate and which configuration `assent mcp` runs with. With a daemon
// (started on demand unless ASSENT_NO_AUTOSPAWN=1): its pinned config and the
// daemon gate, so servers and policy never come from re-reading config.json
// (R-D-5). Without one: config.json read once and the local gate, where
// `prompt` fails closed with no_consent_channel (R-MCP-5).
import type { Config } from '../../core/config.js';
import { compilePolicy } from '../../core/toolPolicy.js';
import { loadConfigFile } from '../../journal/configFile.js';
import type { StatePaths } from '../../journal/statePaths.js';
import type { Logger } from '../../service/logger.js';
import { connectForCli } from '../cli/daemonConnection.js';
import { connectDaemonGate, fetchPinnedConfig } from './daemonGate.js';
import { localPolicyGate, type CallGate } from './gate.js';

export interface GateFactoryContext {
  paths: StatePaths;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The gateway's session id, the same one every GateCall carries. */
  sessionId: string;
}

export interface GatewaySetup {
  config: Config;
  configPath: string;
  gate: CallGate;
  /** `daemon` when calls are decided with the daemon, `local` when it could not be reached. */
  mode: 'daemon' | 'local';
}

/** Connects to the daemon if possible; falls back to the local, fail-closed gate. */
export async function createGateForCli(context: GateFactoryContext): Promise<GatewaySetup> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  try {
    client = await connectForCli({ env: context.env });
    const pinned = await fetchPinnedConfig(client);
    const gate = await connectDaemonGate({
      client,
      sessionId: context.sessionId,
      logger: context.logger,
      elicitation: pinned.config.channels.elicitation,
      tty: pinned.config.channels.tty,
      reconnect: () => connectForCli({ env: context.env }),
    });
    return { config: pinned.config, configPath: pinned.path, gate, mode: 'daemon' };
  } catch (error) {
    client?.close();
    context.logger.warn('no assent daemon; prompt calls will be refused (no_consent_channel)', {
      socket: context.paths.socket,
      error: error instanceof Error ? error.message : String(error),
    });
  }
  const loaded = loadConfigFile(context.paths.config);
  for (const problem of loaded.problems) context.logger.warn('config warning', { path: problem.path, problem: problem.message });
  const gate = localPolicyGate(compilePolicy(loaded.config.policy, []), {
    configPath: context.paths.config,
    noChannelHint: `no assent daemon at ${context.paths.socket}`,
  });
  return { config: loaded.config, configPath: context.paths.config, gate, mode: 'local' };
}
