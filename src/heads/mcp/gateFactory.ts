// Which gate and which configuration `assent mcp` runs with. With a daemon
// (started on demand unless ASSENT_NO_AUTOSPAWN=1): its pinned config and the
// daemon gate, so servers and policy never come from re-reading config.json
// (R-D-5). Without one: the configuration last confirmed with the daemon, read
// read-only from the journal, and the local gate, where `prompt` fails closed
// with no_consent_channel (R-MCP-5); when no confirmed configuration can be
// read, every call is refused (R-CFG-4: an unconfirmed edit never decides).
import type { Config } from '../../core/config.js';
import { compilePolicy } from '../../core/toolPolicy.js';
import { inspectConfigFile, loadConfigFile } from '../../journal/configFile.js';
import { readConfirmedConfig } from '../../journal/confirmedConfig.js';
import type { StatePaths } from '../../journal/statePaths.js';
import type { Logger } from '../../service/logger.js';
import { autoSpawnDisabled, connectForCli } from '../daemon/clientConnection.js';
import { connectDaemonGate } from './daemonGate.js';
import { describeUnlistedPolicyTool, localPolicyGate, policyToolsNotListed, refuseAllGate, type CallGate } from './gate.js';

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
  /**
   * `daemon` when calls are decided with the daemon; `confirmed` without one, from the
   * configuration last confirmed with it; `refuse-all` when not even that can be read.
   */
  mode: 'daemon' | 'confirmed' | 'refuse-all';
}

/** Connects to the daemon if possible; falls back to the confirmed configuration, else refuses every call. */
export async function createGateForCli(context: GateFactoryContext): Promise<GatewaySetup> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  try {
    client = await connectForCli({ env: context.env });
    const gate = await connectDaemonGate({
      client,
      sessionId: context.sessionId,
      logger: context.logger,
      reconnect: () => connectForCli({ env: context.env }),
      ...(autoSpawnDisabled(context.env)
        ? { reconnectHint: 'ASSENT_NO_AUTOSPAWN=1 keeps it from starting a daemon; the operator can start one with `assent daemon run`' }
        : {}),
    });
    return { config: gate.pinned.config, configPath: gate.pinned.path, gate, mode: 'daemon' };
  } catch (error) {
    client?.close();
    context.logger.warn('no assent daemon could be reached; prompt calls will be refused (no_consent_channel)', {
      socket: context.paths.socket,
      error: error instanceof Error ? error.message : String(error),
    });
  }
  return createGateWithoutDaemon(context);
}

/**
 * The gate of a gateway that found no daemon. It obeys only what the operator
 * confirmed: the configuration the daemon pinned, kept in the journal. Every
 * choice is said on stderr, which MCP clients keep in their server log.
 */
export function createGateWithoutDaemon(context: GateFactoryContext): GatewaySetup {
  const { paths, logger } = context;
  const confirmed = readConfirmedConfig(paths.journal, paths.config);
  if (!confirmed.ok) {
    logger.warn(
      `no assent daemon and no confirmed configuration (${confirmed.why}); every tools/call is refused, because ${paths.config} as it is on disk was never confirmed. ` +
        'Start the daemon with `assent daemon run` (its first start confirms config.json), then restart the MCP client.',
    );
    // The servers still start, so the client sees their tools; no call reaches them.
    const loaded = loadConfigFile(paths.config);
    const gate = refuseAllGate(confirmed.why, paths.config);
    return { config: loaded.config, configPath: paths.config, gate, mode: 'refuse-all' };
  }
  let fileRevision: string | undefined;
  try {
    fileRevision = inspectConfigFile(paths.config).revision;
  } catch {
    fileRevision = undefined;
  }
  logger.warn(
    `no assent daemon: using the configuration last confirmed with the daemon (kept in ${paths.journal}), not ${paths.config} as it is on disk; ` +
      'allow and deny follow it, prompt calls are refused (no_consent_channel)',
    { confirmedRevision: confirmed.revision },
  );
  if (fileRevision !== confirmed.revision) {
    logger.warn(
      `${paths.config} differs from the confirmed configuration; its changes apply only after a daemon runs and \`assent config reload\` confirms them`,
      { confirmedRevision: confirmed.revision, fileRevision: fileRevision ?? 'unreadable' },
    );
  }
  const snapshot = compilePolicy(confirmed.config.policy, []);
  const configPath = `${paths.config} (as last confirmed)`;
  const gate = localPolicyGate(snapshot, { configPath, noChannelHint: `no assent daemon at ${paths.socket}` });
  const warned = new Set<string>();
  gate.toolsListed = (server, tools) => {
    for (const entry of policyToolsNotListed(snapshot.tools.keys(), server, tools)) {
      if (warned.has(entry.key)) continue;
      warned.add(entry.key);
      logger.warn(describeUnlistedPolicyTool(entry, configPath), { key: entry.key, server });
    }
  };
  return { config: confirmed.config, configPath: paths.config, gate, mode: 'confirmed' };
}
