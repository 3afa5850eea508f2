// The gate of a gateway that found no daemon at start (R-MCP-5): the
// configuration last confirmed with the daemon, read read-only from the journal,
// and the local gate; or, when no confirmed configuration can be read, a gate
// that refuses every call (R-CFG-4). gateFactory.ts loads this file only then,
// so a gateway with a daemon never loads the journal, SQLite or the config schema.
import type { Config } from '../../core/config/config.js';
import { compilePolicy } from '../../core/policy/toolPolicy.js';
import { inspectConfigFile, loadConfigFile } from '../../journal/configFile.js';
import { readConfirmedConfig } from '../../journal/confirmedConfig.js';
import type { StatePaths } from '../../state/statePaths.js';
import type { Logger } from '../../service/logger.js';
import { autoSpawnDisabled } from '../daemon/clientConnection.js';
import { describeUnlistedPolicyTool, localPolicyGate, policyToolsNotListed, refuseAllGate, type CallGate } from './gate.js';

export interface GateFactoryContext {
  paths: StatePaths;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The gateway's session id, the same one every GateCall carries. */
  sessionId: string;
  /** Why the daemon at the socket did not take this gateway, when one answered (said in every refusal instead of "no daemon"). */
  refusedBy?: string;
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
  const noDaemon = context.refusedBy === undefined ? `no assent daemon at ${paths.socket}` : `the assent daemon at ${paths.socket} did not take this gateway: ${context.refusedBy}`;
  const gate = localPolicyGate(snapshot, { configPath, noChannelHint: `${noDaemon}; ${attachNote(context.env)}` });
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
