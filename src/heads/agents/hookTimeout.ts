// How long assent's hook may wait for a person: `hooks.timeoutSeconds` of
// config.json (R-HOOK-3), read with the project's config loader, so an
// invalid config.json is refused rather than guessed around.
import type { Config } from '../../core/config.js';
import { loadConfigFile } from '../../journal/configFile.js';
import type { StatePaths } from '../../journal/statePaths.js';

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
