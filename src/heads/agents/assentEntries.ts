// assent's entries inside an agent's settings object: the before-tool and
// after-tool hook groups and the `assent` MCP server. Pure edits over parsed
// JSON that add, find or remove only what is assent's and keep every other key
// and hook where it was.
import { AssentError } from '../../core/base/errors.js';
import type { AgentTarget } from './agentTargets.js';
import { isAssentHookCommand } from './hookCommand.js';
import { isJsonObject, type JsonObject } from './settingsFiles.js';

/** The MCP server name of the gateway in every agent's config (hooks-common interface). */
export const MCP_SERVER_NAME = 'assent';

/**
 * One hook entry: `{"type":"command","command":…,"timeout":…}` as most agents
 * read it (see hookElement for Copilot's), with the line the agent shows while
 * the hook runs where it has one (Claude Code and Codex `statusMessage`, Gemini
 * CLI `name`; docs/agents.md).
 */
export interface HookEntry {
  type: 'command';
  command: string;
  timeout: number;
  statusMessage?: string;
  name?: string;
}

/**
 * What assent appends to an event's list: a group `{matcher, hooks:[entry]}`
 * (with Auggie's `metadata`), or for Copilot CLI's own style the entry itself,
 * spelled `{type, bash, timeoutSec}`.
 */
export function hookElement(target: Pick<AgentTarget, 'entryStyle' | 'matcher' | 'groupMetadata'>, entry: HookEntry): JsonObject {
  if (target.entryStyle === 'flat') return { type: entry.type, bash: entry.command, timeoutSec: entry.timeout };
  return { matcher: target.matcher, hooks: [{ ...entry }], ...(target.groupMetadata === undefined ? {} : { metadata: { ...target.groupMetadata } }) };
}

/** The command of an entry: `command`, or Copilot's `bash`. */
function commandOf(entry: JsonObject): unknown {
  return entry['command'] ?? entry['bash'];
}

/** The commands assent installs, with the timeout in the agent's unit. */
export interface DesiredHooks {
  before: HookEntry;
  after: HookEntry;
  /** The permission-dialog hook (R-HOOK-9): the before-tool command again, under `target.events.dialog`. */
  dialog?: HookEntry;
}

/** The event and entry of each hook assent installs, in the order they are appended. */
export function desiredGroups(target: Pick<AgentTarget, 'events'>, desired: DesiredHooks): [string, HookEntry][] {
  const groups: [string, HookEntry][] = [
    [target.events.before, desired.before],
    [target.events.after, desired.after],
  ];
  if (desired.dialog !== undefined && target.events.dialog !== undefined) groups.push([target.events.dialog, desired.dialog]);
  return groups;
}

/** One assent entry found in a settings object. */
export interface FoundHook {
  event: string;
  /** The group's matcher; undefined when the group has none. */
  matcher: unknown;
  command: string;
  /** The entry's timeout as written; undefined when it has none. */
  timeout: unknown;
  /** The entry's `name` (Gemini CLI's label for it); undefined when it has none. */
  name?: unknown;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * A settings file as the functions here read it, `{hooks: {<event>: […]}, …}`:
 * Factory Droid's hooks.json is that `hooks` object itself, so it is wrapped.
 * An unchanged file comes back as the same object through fromHooksSettings.
 */
export function asHooksSettings(target: Pick<AgentTarget, 'hooksAtRoot'>, file: JsonObject): JsonObject {
  return target.hooksAtRoot === true ? { hooks: file } : file;
}

/** The file again from what asHooksSettings gave (and an edit of it returned). */
export function fromHooksSettings(target: Pick<AgentTarget, 'hooksAtRoot'>, settings: JsonObject): JsonObject {
  if (target.hooksAtRoot !== true) return settings;
  const hooks = settings['hooks'];
  return isJsonObject(hooks) ? hooks : {};
}

function hookEvents(settings: JsonObject, file: string): JsonObject | undefined {
  const hooks = settings['hooks'];
  if (hooks === undefined) return undefined;
  if (!isJsonObject(hooks)) {
    throw new AssentError('invalid_input', `${file}: "hooks" is not an object, so assent cannot add its entries beside yours; fix it, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  return hooks;
}

/** The groups (`{matcher, hooks:[…]}`) of one event; throws when the event's value is not a list. */
function groupsOf(events: JsonObject, event: string, file: string): unknown[] {
  const groups = events[event];
  if (groups === undefined) return [];
  if (!Array.isArray(groups)) {
    throw new AssentError('invalid_input', `${file}: "hooks.${event}" is not a list, so assent cannot add its entry beside yours; fix it, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  return groups;
}

function entriesOf(group: unknown): unknown[] | undefined {
  return isJsonObject(group) && Array.isArray(group['hooks']) ? (group['hooks'] as unknown[]) : undefined;
}

/** Whether one hook entry is assent's (its command is one `assent install` writes). */
export function isAssentEntry(entry: unknown): boolean {
  if (!isJsonObject(entry)) return false;
  const command = commandOf(entry);
  return typeof command === 'string' && isAssentHookCommand(command);
}

/** Every assent hook entry in the settings, under any event. */
export function findAssentHooks(settings: JsonObject): FoundHook[] {
  const events = settings['hooks'];
  if (!isJsonObject(events)) return [];
  const found: FoundHook[] = [];
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      // A flat entry (Copilot CLI's style) sits in the list itself, with no matcher.
      if (entriesOf(group) === undefined && isAssentEntry(group)) {
        const e = group as JsonObject;
        found.push({ event, matcher: undefined, command: commandOf(e) as string, timeout: e['timeoutSec'] ?? e['timeout'] });
        continue;
      }
      for (const entry of entriesOf(group) ?? []) {
        if (isAssentEntry(entry)) {
          const e = entry as JsonObject;
          found.push({ event, matcher: (group as JsonObject)['matcher'], command: commandOf(e) as string, timeout: e['timeout'], ...(e['name'] === undefined ? {} : { name: e['name'] }) });
        }
      }
    }
  }
  return found;
}

/**
 * The settings without any assent hook entry: a group left empty by the
 * removal goes, then an event list left empty, then a `hooks` object left
 * empty. Groups that hold other hooks keep them, in order.
 */
export function withoutAssentHooks(settings: JsonObject): JsonObject {
  const result = clone(settings);
  const events = result['hooks'];
  if (!isJsonObject(events)) return result;
  let removedEvent = false;
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue;
    let touched = false;
    const kept = groups.filter((group) => {
      const entries = entriesOf(group);
      if (entries === undefined && isAssentEntry(group)) {
        touched = true;
        return false;
      }
      if (entries === undefined || !entries.some(isAssentEntry)) return true;
      touched = true;
      const others = entries.filter((entry) => !isAssentEntry(entry));
      (group as JsonObject)['hooks'] = others;
      return others.length > 0;
    });
    if (!touched) continue;
    if (kept.length === 0) {
      delete events[event];
      removedEvent = true;
    } else events[event] = kept;
  }
  if (removedEvent && Object.keys(events).length === 0) delete result['hooks'];
  return result;
}

function hasExactly(groups: unknown[], target: AgentTarget, entry: HookEntry): boolean {
  const matcher = target.matcher;
  if (target.entryStyle === 'flat') {
    const wanted = JSON.stringify(hookElement(target, entry));
    return groups.some((group) => JSON.stringify(group) === wanted);
  }
  return groups.some((group) => {
    const entries = entriesOf(group);
    return (
      entries !== undefined &&
      (group as JsonObject)['matcher'] === matcher &&
      JSON.stringify((group as JsonObject)['metadata']) === JSON.stringify(target.groupMetadata) &&
      entries.some(
        (e) =>
          isJsonObject(e) &&
          e['type'] === entry.type &&
          e['command'] === entry.command &&
          e['timeout'] === entry.timeout &&
          e['statusMessage'] === entry.statusMessage &&
          e['name'] === entry.name,
      )
    );
  });
}

/**
 * The settings with assent's two hook groups, appended to the agent's
 * before-tool and after-tool lists. Settings that already hold exactly these
 * (and no other assent entry) come back unchanged, so a second install is a
 * no-op; stale assent entries (another path, another timeout) are replaced.
 */
export function withAssentHooks(settings: JsonObject, target: AgentTarget, desired: DesiredHooks, file: string): JsonObject {
  const events = hookEvents(settings, file);
  const wanted = desiredGroups(target, desired);
  if (findAssentHooks(settings).length === wanted.length && wanted.every(([event, entry]) => hasExactly(events === undefined ? [] : groupsOf(events, event, file), target, entry))) {
    return settings;
  }
  const result = withoutAssentHooks(settings);
  const resultEvents = isJsonObject(result['hooks']) ? result['hooks'] : {};
  result['hooks'] = resultEvents;
  for (const [event, entry] of wanted) {
    const groups = groupsOf(resultEvents, event, file);
    resultEvents[event] = [...groups, hookElement(target, entry)];
  }
  return result;
}

function mcpServers(settings: JsonObject, file: string): JsonObject | undefined {
  const servers = settings['mcpServers'];
  if (servers === undefined) return undefined;
  if (!isJsonObject(servers)) {
    throw new AssentError('invalid_input', `${file}: "mcpServers" is not an object, so assent cannot add its server beside yours; fix it, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  return servers;
}

export function findAssentMcpServer(settings: JsonObject): unknown {
  const servers = settings['mcpServers'];
  return isJsonObject(servers) ? servers[MCP_SERVER_NAME] : undefined;
}

/** The settings with `mcpServers.assent` set to the gateway; unchanged when it already is. */
export function withAssentMcpServer(settings: JsonObject, server: { command: string; args: string[] }, file: string): JsonObject {
  const servers = mcpServers(settings, file);
  if (JSON.stringify(servers?.[MCP_SERVER_NAME]) === JSON.stringify(server)) return settings;
  const result = clone(settings);
  const resultServers = isJsonObject(result['mcpServers']) ? result['mcpServers'] : {};
  resultServers[MCP_SERVER_NAME] = server;
  result['mcpServers'] = resultServers;
  return result;
}

/** The settings without `mcpServers.assent` (and without `mcpServers` if that left it empty). */
export function withoutAssentMcpServer(settings: JsonObject): JsonObject {
  const servers = settings['mcpServers'];
  if (!isJsonObject(servers) || !(MCP_SERVER_NAME in servers)) return settings;
  const result = clone(settings);
  const resultServers = result['mcpServers'] as JsonObject;
  delete resultServers[MCP_SERVER_NAME];
  if (Object.keys(resultServers).length === 0) delete result['mcpServers'];
  return result;
}
