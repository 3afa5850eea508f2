// Which gate and which configuration `assent mcp` runs with. With a daemon
// (started on demand unless ASSENT_NO_AUTOSPAWN=1): its pinned config and the
// daemon gate, so servers and policy never come from re-reading config.json
// (R-D-5). Without one: the configuration last confirmed with the daemon, read
// read-only from the journal, and the local gate, where `prompt` fails closed
// with no_consent_channel (R-MCP-5); when no confirmed configuration can be
// read, every call is refused (R-CFG-4: an unconfirmed edit never decides).
// Either way it keeps trying to attach to a daemon in the background (the
// reconnect loop of the daemon gate) and switches to the daemon gate once one runs.
import { AssentError } from '../../core/base/errors.js';
import { FreeSpaceProbe, freeSpaceRefusal } from '../../state/diskSpace.js';
import { autoSpawnDisabled, connectForCli } from '../daemon/clientConnection.js';
import { openAuditSpool } from './auditSpool.js';
import { connectDaemonGate } from './daemonGate.js';
import type { GateFactoryContext, GatewaySetup } from './gateFallback.js';

export type { FallbackSetup, GateFactoryContext, GatewaySetup } from './gateFallback.js';

/** Connects to the daemon if possible; falls back to the confirmed configuration, else refuses every call. */
export async function createGateForCli(context: GateFactoryContext): Promise<GatewaySetup> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  /** Why a daemon that runs did not take this gateway (out of descriptors, another version…); undefined when none runs. */
  let refusedBy: string | undefined;
  // Settled calls are written here within milliseconds, so a gateway killed -9 loses next to none of their audit.
  const spool = openAuditSpool(context.paths.home, context.logger);
  const freeSpace = new FreeSpaceProbe(context.paths.home);
  const common = {
    ...(spool === undefined ? {} : { spool }),
    sessionId: context.sessionId,
    logger: context.logger,
    // Issue 35: no call is allowed while the device holding ASSENT_HOME (journal, audit, spool) has no room for its record.
    storage: () => freeSpaceRefusal(freeSpace),
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
    if (!(error instanceof AssentError && error.details?.['reason'] === 'not-running')) refusedBy = error instanceof Error ? error.message : String(error);
    context.logger.warn(
      'no assent daemon could be reached; until one runs, prompt calls are refused (no_consent_channel). This gateway keeps trying and attaches to a daemon as soon as one runs',
      { socket: context.paths.socket, error: error instanceof Error ? error.message : String(error) },
    );
  }
  // Only a gateway without a daemon reads the journal and config.json itself: loaded for it alone.
  const { createGateWithoutDaemon } = await import('./gateFallback.js');
  const fallback = createGateWithoutDaemon(refusedBy === undefined ? context : { ...context, refusedBy });
  // The same backoff as a lost connection (100 ms doubling to 10 s), auto-spawning unless ASSENT_NO_AUTOSPAWN=1.
  const gate = await connectDaemonGate({
    ...common,
    detached: { started: { config: fallback.config, revision: fallback.revision, path: fallback.configPath }, fallback: fallback.gate },
  });
  return { config: fallback.config, configPath: fallback.configPath, gate, mode: fallback.mode };
}
