// Codex's own record of the hooks a person trusted in its /hooks review
// (observed with Codex 0.169.0, docs/agents-testing.md): tables in the user's
// $CODEX_HOME/config.toml named after the hook's place,
//   [hooks.state."<hooks.json path>:pre_tool_use:<group>:<handler>"]
//   trusted_hash = "sha256:…"        (enabled = false when switched off there)
// Codex runs a hook only when such a record exists and its hash matches the
// hook as it is now; the hash is Codex's own and not documented, so doctor can
// tell "never trusted" and "switched off", but not "trusted, then changed".
// The file is read with smol-toml, as Codex reads it: any TOML form of the
// same tables counts.
import { parseCodexConfig } from './codexToml.js';
import { isJsonObject, type JsonObject } from './settingsFiles.js';

/** What Codex's config.toml says about one hook. */
export type CodexHookTrust = { state: 'missing' } | { state: 'disabled' } | { state: 'recorded'; hash: string };

/** The snake_case event name Codex uses in a trust key. */
function snakeEvent(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The trust keys of every assent entry under `event`: `<file>:<event>:<group index>:<handler index>`. */
export function codexTrustKeys(settings: JsonObject, file: string, event: string, isAssent: (entry: unknown) => boolean): string[] {
  const events = settings['hooks'];
  const groups = isJsonObject(events) ? events[event] : undefined;
  if (!Array.isArray(groups)) return [];
  const keys: string[] = [];
  groups.forEach((group, g) => {
    const entries = isJsonObject(group) && Array.isArray(group['hooks']) ? (group['hooks'] as unknown[]) : [];
    entries.forEach((entry, h) => {
      if (isAssent(entry)) keys.push(`${file}:${snakeEvent(event)}:${g}:${h}`);
    });
  });
  return keys;
}

/** What Codex keeps about one hook: `trusted_hash` and `enabled`, when they have the right types. */
export interface CodexHookState {
  trustedHash?: string;
  enabled?: boolean;
}

/**
 * The `hooks.state` tables of a config.toml, read with smol-toml (so the
 * `[hooks.state."KEY"]` headers Codex writes, dotted keys and inline tables
 * all count). Throws `invalid_input` naming the file and line when it is not
 * TOML, which Codex cannot read either.
 */
export function readCodexHookStates(toml: string, file: string): Map<string, CodexHookState> {
  const hooks = parseCodexConfig(toml, file)['hooks'];
  const table = isJsonObject(hooks) ? hooks['state'] : undefined;
  const states = new Map<string, CodexHookState>();
  if (!isJsonObject(table)) return states;
  for (const [key, entry] of Object.entries(table)) {
    if (!isJsonObject(entry)) continue;
    const state: CodexHookState = {};
    if (typeof entry['trusted_hash'] === 'string') state.trustedHash = entry['trusted_hash'];
    if (typeof entry['enabled'] === 'boolean') state.enabled = entry['enabled'];
    states.set(key, state);
  }
  return states;
}

/** What the states read from config.toml say about the hook with `key`. */
export function codexHookTrust(states: Map<string, CodexHookState>, key: string): CodexHookTrust {
  const state = states.get(key);
  if (state?.enabled === false) return { state: 'disabled' };
  if (state?.trustedHash === undefined) return { state: 'missing' };
  return { state: 'recorded', hash: state.trustedHash };
}
