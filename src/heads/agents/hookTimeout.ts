// How long assent's hook may wait for a person: `hooks.timeoutSeconds` of
// config.json (R-HOOK-3), read with the project's config loader, so an
// invalid config.json is refused rather than guessed around.
import type { Config } from '../../core/config.js';
import { loadConfigFile } from '../../journal/configFile.js';
import type { StatePaths } from '../../journal/statePaths.js';
import type { AgentId } from './agentTargets.js';

/** hooks.timeoutSeconds when config.json leaves it out (SPEC §17). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 110;

/** The configured value, or the default when the config has no `hooks` section. */
export function hookTimeoutSecondsOf(config: Config): number {
  const hooks = (config as Config & { hooks?: { timeoutSeconds?: unknown } }).hooks;
  return typeof hooks?.timeoutSeconds === 'number' ? hooks.timeoutSeconds : DEFAULT_HOOK_TIMEOUT_SECONDS;
}

/** Reads $ASSENT_HOME/config.json (the defaults when it is missing); throws `config_invalid` when it has errors. */
export function configuredHookTimeoutSeconds(paths: StatePaths): number {
  return hookTimeoutSecondsOf(loadConfigFile(paths.config).config);
}

/** Seconds an agent waits for assent's hook: longer than assent waits for a person (hooks-common: + 15 s). */
export const HOOK_TIMEOUT_MARGIN_SECONDS = 15;

/** Agents whose hook command carries the agent's timeout, so the hook answers before it (R-HOOK-11). */
export const CARRIES_TIMEOUT: ReadonlySet<AgentId> = new Set(['opencode', 'kilo', 'copilot', 'qwen']);

/** Time an auto-spawned daemon may take before it answers, counted into the deadline (R-HOOK-11). */
export const SPAWN_ALLOWANCE_SECONDS = 5;

/** R-HOOK-11's margin: the hook answers this many seconds before the agent's timeout (at least 3 s, or 10 %). */
export function deadlineMarginSeconds(timeoutSeconds: number): number {
  return Math.max(3, timeoutSeconds / 10);
}

/**
 * The agent's hook timeout assent installs, in seconds: longer than assent
 * waits for a person. For an agent whose hook carries it, also long enough that
 * the hook's deadline (the timeout minus the margin) leaves hooks.timeoutSeconds
 * and a daemon's spawn time (R-HOOK-11).
 */
export function agentHookTimeoutSeconds(agent: AgentId, hookTimeoutSeconds: number): number {
  const plain = hookTimeoutSeconds + HOOK_TIMEOUT_MARGIN_SECONDS;
  if (!CARRIES_TIMEOUT.has(agent)) return plain;
  const needed = hookTimeoutSeconds + SPAWN_ALLOWANCE_SECONDS;
  return Math.max(plain, needed + 3, Math.ceil(needed / 0.9));
}
