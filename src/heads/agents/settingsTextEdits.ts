// assent's entries edited in the settings file's own text (see jsonTextEdit.ts):
// the same changes assentEntries.ts makes to the parsed object, made as small
// insertions and removals so every other byte of the file stays as it was.
import { desiredGroups, hookElement, MCP_SERVER_NAME, type DesiredHooks } from './assentEntries.js';
import type { AgentTarget } from './agentTargets.js';
import { isAssentHookCommand } from './hookCommand.js';
import { appendElement, insertMember, memberOf, parseJsonTree, removeChild, replaceValue, type JsonNode, type TextFormat } from './jsonTextEdit.js';

function scalarValue(text: string, node: JsonNode): unknown {
  if (node.kind !== 'scalar') return undefined;
  try {
    return JSON.parse(text.slice(node.start, node.end));
  } catch {
    return undefined;
  }
}

function isAssentEntryNode(text: string, node: JsonNode): boolean {
  const command = memberOf(node, 'command') ?? memberOf(node, 'bash');
  if (command === undefined) return false;
  const value = scalarValue(text, command.value);
  return typeof value === 'string' && isAssentHookCommand(value);
}

/**
 * Removes one assent hook entry, with the group, event list and `hooks`
 * object it leaves empty; undefined when there is none left.
 */
function removeOneAssentHook(text: string): string | undefined {
  const root = parseJsonTree(text);
  const hooks = memberOf(root, 'hooks');
  if (root.kind !== 'object' || hooks?.value.kind !== 'object') return undefined;
  for (const [eventIndex, event] of hooks.value.members.entries()) {
    if (event.value.kind !== 'array') continue;
    for (const [groupIndex, group] of event.value.elements.entries()) {
      const entries = memberOf(group, 'hooks')?.value;
      // A flat entry (Copilot CLI's style) is itself the element of the event's list.
      if (entries === undefined && isAssentEntryNode(text, group)) {
        if (event.value.elements.length > 1) return removeChild(text, event.value, groupIndex);
        if (hooks.value.members.length > 1) return removeChild(text, hooks.value, eventIndex);
        return removeChild(text, root, root.members.indexOf(hooks));
      }
      if (entries?.kind !== 'array') continue;
      const entryIndex = entries.elements.findIndex((entry) => isAssentEntryNode(text, entry));
      if (entryIndex < 0) continue;
      if (entries.elements.length > 1) return removeChild(text, entries, entryIndex);
      if (event.value.elements.length > 1) return removeChild(text, event.value, groupIndex);
      if (hooks.value.members.length > 1) return removeChild(text, hooks.value, eventIndex);
      return removeChild(text, root, root.members.indexOf(hooks));
    }
  }
  return undefined;
}

/** The text without any assent hook entry (see withoutAssentHooks). */
export function removeAssentHooksText(text: string): string {
  let current = text;
  for (;;) {
    const next = removeOneAssentHook(current);
    if (next === undefined) return current;
    current = next;
  }
}

/** The text with assent's two groups appended to the agent's before-tool and after-tool lists (no assent entry may be there). */
export function addAssentHooksText(text: string, target: AgentTarget, desired: DesiredHooks, format: TextFormat): string {
  const groups: [string, unknown][] = desiredGroups(target, desired).map(([event, entry]) => [event, hookElement(target, entry)]);
  let current = text;
  const root = parseJsonTree(current);
  if (memberOf(root, 'hooks') === undefined) return insertMember(current, root, 'hooks', Object.fromEntries(groups.map(([event, group]) => [event, [group]])), format);
  for (const [event, group] of groups) {
    const hooks = memberOf(parseJsonTree(current), 'hooks')?.value;
    if (hooks === undefined) return current;
    const list = memberOf(hooks, event)?.value;
    current = list === undefined ? insertMember(current, hooks, event, [group], format) : appendElement(current, list, group, format);
  }
  return current;
}

/** The text with `mcpServers.assent` set to `server`. */
export function setAssentMcpServerText(text: string, server: { command: string; args: string[] }, format: TextFormat): string {
  const root = parseJsonTree(text);
  const servers = memberOf(root, 'mcpServers')?.value;
  if (servers === undefined) return insertMember(text, root, 'mcpServers', { [MCP_SERVER_NAME]: server }, format);
  const existing = memberOf(servers, MCP_SERVER_NAME);
  return existing === undefined ? insertMember(text, servers, MCP_SERVER_NAME, server, format) : replaceValue(text, existing.value, server, format);
}

/** The text without `mcpServers.assent` (and without `mcpServers` when that was its only server). */
export function removeAssentMcpServerText(text: string): string {
  const root = parseJsonTree(text);
  const servers = memberOf(root, 'mcpServers');
  if (root.kind !== 'object' || servers?.value.kind !== 'object') return text;
  const index = servers.value.members.findIndex((m) => m.key === MCP_SERVER_NAME);
  if (index < 0) return text;
  if (servers.value.members.length === 1) return removeChild(text, root, root.members.indexOf(servers));
  return removeChild(text, servers.value, index);
}
