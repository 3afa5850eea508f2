// Which gate `assent mcp` puts in front of its upstreams. Today: the local
// policy snapshot, failing closed on `prompt`; the daemon-backed gate
// (`calls.authorize`, R-D-5) replaces the body of createGateForCli.
import type { Config } from '../../core/config.js';
import { compilePolicy } from '../../core/toolPolicy.js';
import type { StatePaths } from '../../journal/statePaths.js';
import type { Logger } from '../../service/logger.js';
import { localPolicyGate, type CallGate } from './gate.js';

export interface GateFactoryContext {
  config: Config;
  /** The config.json revision the gateway loaded (digest), for the daemon to compare with its pinned one. */
  configRevision: string;
  paths: StatePaths;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The gateway's session id, the same one every GateCall carries. */
  sessionId: string;
}

/** Builds the gate for the CLI gateway; async because a daemon-backed gate connects first. */
export function createGateForCli(context: GateFactoryContext): Promise<CallGate> {
  const snapshot = compilePolicy(context.config.policy, []);
  return Promise.resolve(
    localPolicyGate(snapshot, {
      configPath: context.paths.config,
      noChannelHint: `no assent daemon at ${context.paths.socket}`,
    }),
  );
}
