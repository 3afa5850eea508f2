// Which gate and which configuration `assent mcp` runs with. With a daemon
// (started on demand unless ASSENT_NO_AUTOSPAWN=1): its pinned config and the
// daemon gate, so servers and policy never come from re-reading config.json
// (R-D-5). Without one: the configuration last confirmed with the daemon, read
// read-only from the journal, and the local gate, where `prompt` fails closed
// with no_consent_channel (R-MCP-5); when no confirmed configuration can be
// read, every call is refused (R-CFG-4: an unconfirmed edit never decides).
// Either way it keeps trying to attach to a daemon in the background (the
// reconnect loop of the daemon gate) and switches to the daemon gate once one runs.
import type { Config } from '../../core/config/config.js';
import { compilePolicy } from '../../core/policy/toolPolicy.js';
import { inspectConfigFile, loadConfigFile } from '../../journal/configFile.js';
import { readConfirmedConfig } from '../../journal/confirmedConfig.js';
import type { StatePaths } from '../../journal/statePaths.js';
import type { Logger } from '../../service/logger.js';
import { autoSpawnDisabled, connectForCli } from '../daemon/clientConnection.js';
import { openAuditSpool } from './auditSpool.js';
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
   * How the gateway started: `daemon` when calls are decided with the daemon; `confirmed`
   * without one, from the configuration last confirmed with it; `refuse-all` when not even
   * that can be read. The last two switch to the daemon gate once a daemon runs.
   */
  mode: 'daemon' | 'confirmed' | 'refuse-all';
}

/** What a gateway without a daemon decides by, and the revision of the configuration its servers come from. */
export interface FallbackSetup extends GatewaySetup {
  revision: string;
}

/** Connects to the daemon if possible; falls back to the confirmed configuration, else refuses every call. */
export async function createGateForCli(context: GateFactoryContext): Promise<GatewaySetup> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  // Settled calls are written here within milliseconds, so a gateway killed -9 loses next to none of their audit.
  const spool = openAuditSpool(context.paths.home, context.logger);
  const common = {
    ...(spool === undefined ? {} : { spool }),
    sessionId: context.sessionId,
    logger: context.logger,
    reconnect: () => connectForCli({ env: context.env }),
    ...(autoSpawnDisabled(context.env)
      ? { reconnectHint: 'ASSENT_NO_AUTOSPAWN=1 keeps it from starting a daemon; the operator can start one with `assent daemon run`' }
      : {}),
  };
  try {
    client = await connectForCli({ env: context.env });
    const gate = await connectDaemonGate({ ...common, client });
    return { config: gate.pinned.config, configPath: gate.pinned.path, gate, mode: 'daemon' };
  } catch (error) {
    client?.close();
    context.logger.warn(
      'no assent daemon could be reached; until one runs, prompt calls are refused (no_consent_channel). This gateway keeps trying and attaches to a daemon as soon as one runs',
      { socket: context.paths.socket, error: error instanceof Error ? error.message : String(error) },
    );
  }
  const fallback = createGateWithoutDaemon(context);
  // The same backoff as a lost connection (100 ms doubling to 10 s), auto-spawning unless ASSENT_NO_AUTOSPAWN=1.
  const gate = await connectDaemonGate({
    ...common,
    detached: { started: { config: fallback.config, revision: fallback.revision, path: fallback.configPath }, fallback: fallback.gate },
  });
  return { config: fallback.config, configPath: fallback.configPath, gate, mode: fallback.mode };
}

/** Said wherever a gateway without a daemon refuses a call: it picks a daemon up by itself. */
function attachNote(env: NodeJS.ProcessEnv): string {
  return autoSpawnDisabled(env)
    ? 'this gateway attaches to a daemon as soon as one runs; ASSENT_NO_AUTOSPAWN=1 keeps it from starting one itself'
    : 'this gateway keeps trying to start one and attaches as soon as one runs; daemon.log says why a start failed';
}

/**
 * The gate of a gateway that found no daemon. It obeys only what the operator
 * confirmed: the configuration the daemon pinned, kept in the journal. Every
 * choice is said on stderr, which MCP clients keep in their server log.
 */
export function createGateWithoutDaemon(context: GateFactoryContext): FallbackSetup {
  const { paths, logger } = context;
  const confirmed = readConfirmedConfig(paths.journal, paths.config);
  if (!confirmed.ok) {
    const next =
      confirmed.invalid === true
        ? 'The operator can start the daemon with `assent daemon run` (it then runs fail-closed, denying every call) and review and confirm config.json with `assent config reload`'
        : 'The operator can start the daemon with `assent daemon run` (its first start confirms config.json as it is then)';
    logger.warn(
      `no assent daemon and no confirmed configuration (${confirmed.why}); every tools/call is refused until a daemon runs, because ${paths.config} as it is on disk was never confirmed. ` +
        `${next}; ${attachNote(context.env)}.`,
    );
    // The servers still start, so the client sees their tools; no call reaches them.
    const loaded = loadConfigFile(paths.config);
    const gate = refuseAllGate(confirmed.why, paths.config, `${next}; ${attachNote(context.env)}, so retrying the identical call after that is fine.`);
    return { config: loaded.config, configPath: paths.config, revision: loaded.revision, gate, mode: 'refuse-all' };
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
  const gate = localPolicyGate(snapshot, { configPath, noChannelHint: `no assent daemon at ${paths.socket}; ${attachNote(context.env)}` });
  const warned = new Set<string>();
  gate.toolsListed = (server, tools) => {
    for (const entry of policyToolsNotListed(snapshot.tools.keys(), server, tools)) {
      if (warned.has(entry.key)) continue;
      warned.add(entry.key);
      logger.warn(describeUnlistedPolicyTool(entry, configPath), { key: entry.key, server });
    }
  };
  return { config: confirmed.config, configPath: paths.config, revision: confirmed.revision, gate, mode: 'confirmed' };
}
