// How long assent's hook may wait for a person: `hooks.timeoutSeconds` of the
// configuration the daemon pinned (R-CFG-4, R-HOOK-11), not an unconfirmed edit
// of config.json: install and doctor size the agent's timeout by what the
// daemon really runs. An invalid config.json is refused rather than guessed around.
import type { Config } from '../../core/config/config.js';
import { inspectConfigFile, loadConfigFile } from '../../journal/configFile.js';
import { FAIL_CLOSED_CONFIG, readConfirmedConfig } from '../../journal/confirmedConfig.js';
import type { StatePaths } from '../../state/statePaths.js';

/** hooks.timeoutSeconds when config.json leaves it out (SPEC §17). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 110;

/** The configured value, or the default when the config has no `hooks` section. */
export function hookTimeoutSecondsOf(config: Config): number {
  const hooks = (config as Config & { hooks?: { timeoutSeconds?: unknown } }).hooks;
  return typeof hooks?.timeoutSeconds === 'number' ? hooks.timeoutSeconds : DEFAULT_HOOK_TIMEOUT_SECONDS;
}

/** hooks.timeoutSeconds as the daemon runs it, and where that came from. */
export interface PinnedHookTimeout {
  seconds: number;
  /** `pinned`: the confirmed configuration in the journal; `file`: no daemon pinned one yet, so config.json (its first start pins it); `fail-closed`: the pin no longer validates. */
  source: 'pinned' | 'file' | 'fail-closed';
  /** Set when config.json says another value that is not confirmed yet: what applies after `assent config reload`. */
  unconfirmedSeconds?: number;
  /** `hooks.claudeNativePrompt` of the same configuration (R-HOOK-9): install then writes Claude Code's PermissionRequest hook. */
  claudeNativePrompt: boolean;
}

function claudeNativePromptOf(config: Config): boolean {
  return (config as Config & { hooks?: { claudeNativePrompt?: unknown } }).hooks?.claudeNativePrompt === true;
}

function fileSeconds(paths: StatePaths): number | undefined {
  try {
    const inspected = inspectConfigFile(paths.config);
    return inspected.config === undefined ? undefined : hookTimeoutSecondsOf(inspected.config);
  } catch {
    return undefined;
  }
}

/**
 * hooks.timeoutSeconds of the configuration the daemon runs: the pinned one;
 * before any daemon pinned one, config.json (throws `config_invalid` when it
 * has errors, as the daemon's first start would); while the pin no longer
 * validates, the fail-closed stand-in's.
 */
export function pinnedHookTimeout(paths: StatePaths): PinnedHookTimeout {
  const confirmed = readConfirmedConfig(paths.journal, paths.config);
  let result: PinnedHookTimeout;
  if (confirmed.ok) result = { seconds: hookTimeoutSecondsOf(confirmed.config), source: 'pinned', claudeNativePrompt: claudeNativePromptOf(confirmed.config) };
  else if (confirmed.invalid === true) result = { seconds: hookTimeoutSecondsOf(FAIL_CLOSED_CONFIG), source: 'fail-closed', claudeNativePrompt: false };
  else {
    const config = loadConfigFile(paths.config).config;
    return { seconds: hookTimeoutSecondsOf(config), source: 'file', claudeNativePrompt: claudeNativePromptOf(config) };
  }
  const onDisk = fileSeconds(paths);
  if (onDisk !== undefined && onDisk !== result.seconds) result.unconfirmedSeconds = onDisk;
  return result;
}

/** The one sentence install and doctor add when config.json says another hooks.timeoutSeconds than the daemon runs. */
export function unconfirmedTimeoutNote(timeout: PinnedHookTimeout, configPath: string): string | undefined {
  if (timeout.unconfirmedSeconds === undefined) return undefined;
  return (
    `${configPath} says hooks.timeoutSeconds ${timeout.unconfirmedSeconds}, but the daemon runs ${timeout.seconds} (${timeout.source === 'pinned' ? 'the confirmed configuration' : 'its fail-closed stand-in'}); ` +
    'timeouts here follow what the daemon runs: after `assent config reload` confirms the change, run `assent install` again'
  );
}
