// Codex's own record of the hooks a person trusted in its /hooks review
// (observed with Codex 0.169.0, docs/agents-testing.md): tables in the user's
// $CODEX_HOME/config.toml named after the hook's place,
//   [hooks.state."<hooks.json path>:pre_tool_use:<group>:<handler>"]
//   trusted_hash = "sha256:…"        (enabled = false when switched off there)
// Codex runs a hook only when such a record exists and its hash matches the
// hook as it is now; the hash is Codex's own and not documented, so doctor can
// tell "never trusted" and "switched off", but not "trusted, then changed".
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

/** A TOML basic string's value (the JSON escapes are a subset of TOML's); undefined for anything else. */
function basicString(text: string): string | undefined {
  if (!text.startsWith('"')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `[hooks.state."KEY"]` tables of a config.toml, read line by line: the
 * header, then `trusted_hash = "…"` and `enabled = true|false` up to the next
 * header. Anything else in the file is left alone.
 */
export function readCodexHookStates(toml: string): Map<string, { trustedHash?: string; enabled?: boolean }> {
  const states = new Map<string, { trustedHash?: string; enabled?: boolean }>();
  let current: { trustedHash?: string; enabled?: boolean } | undefined;
  for (const raw of toml.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      const header = /^\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*")\s*\]$/.exec(line);
      const key = header?.[1] === undefined ? undefined : basicString(header[1]);
      current = key === undefined ? undefined : {};
      if (key !== undefined && current !== undefined) states.set(key, current);
      continue;
    }
    if (current === undefined) continue;
    const pair = /^([A-Za-z_]+)\s*=\s*(.+?)\s*(#.*)?$/.exec(line);
    if (pair?.[1] === 'trusted_hash') {
      const hash = basicString(pair[2] ?? '');
      if (hash !== undefined) current.trustedHash = hash;
    } else if (pair?.[1] === 'enabled') {
      if (pair[2] === 'true') current.enabled = true;
      if (pair[2] === 'false') current.enabled = false;
    }
  }
  return states;
}

/** What config.toml says about the hook with `key`. */
export function codexHookTrust(toml: string, key: string): CodexHookTrust {
  const state = readCodexHookStates(toml).get(key);
  if (state?.enabled === false) return { state: 'disabled' };
  if (state?.trustedHash === undefined) return { state: 'missing' };
  return { state: 'recorded', hash: state.trustedHash };
}
