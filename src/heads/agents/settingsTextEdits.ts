// assent's entries edited in the settings file's own text (see jsonTextEdit.ts):
// the same changes assentEntries.ts makes to the parsed object, made as small
// insertions and removals so every other byte of the file stays as it was.
import { desiredGroups, hookElement, MCP_SERVER_NAME, type DesiredHooks } from './assentEntries.js';
import type { AgentTarget } from './agentTargets.js';
import { isAssentHookCommand } from './hookCommand.js';
import { appendElement, holdsComments, insertMember, memberOf, memberValue, parseJsonTree, removeChild, replaceValue, valueOf, type JsonNode, type TextFormat } from './jsonTextEdit.js';

function isAssentEntryNode(node: JsonNode): boolean {
  const command = memberValue(memberOf(node, 'command') ?? memberOf(node, 'bash'));
  if (command === undefined) return false;
  const value = valueOf(command);
  return typeof value === 'string' && isAssentHookCommand(value);
}

/** One step from a container down to one of its children. */
interface Step {
  container: JsonNode;
  child: JsonNode;
}

/**
 * Removes the innermost child of `path` together with each container it
 * leaves empty, up to the outermost step: a container that keeps another
 * child, or a comment of its own, stays.
 */
function removeAlong(text: string, path: Step[]): string {
  for (let i = path.length - 1; i > 0; i -= 1) {
    const { container, child } = path[i] as Step;
    if ((container.children?.length ?? 0) > 1 || holdsComments(text, container)) return removeChild(text, container, container.children?.indexOf(child) ?? -1);
  }
  const { container, child } = path[0] as Step;
  return removeChild(text, container, container.children?.indexOf(child) ?? -1);
}

/**
 * Removes one assent hook entry, with the group, event list and `hooks`
 * object it leaves empty; undefined when there is none left. `atRoot`: the
 * file's top level is the `hooks` object (Factory Droid's hooks.json), which stays.
 */
function removeOneAssentHook(text: string, atRoot: boolean): string | undefined {
  const root = parseJsonTree(text);
  const hooksMember = atRoot ? undefined : memberOf(root, 'hooks');
  const hooks = atRoot ? root : memberValue(hooksMember);
  if (root.type !== 'object' || (!atRoot && hooksMember === undefined) || hooks?.type !== 'object') return undefined;
  for (const eventMember of hooks.children ?? []) {
    const event = memberValue(eventMember);
    if (event?.type !== 'array') continue;
    const outer: Step[] = [...(hooksMember === undefined ? [] : [{ container: root, child: hooksMember }]), { container: hooks, child: eventMember }];
    for (const group of event.children ?? []) {
      const entriesMember = memberOf(group, 'hooks');
      const entries = memberValue(entriesMember);
      // A flat entry (Copilot CLI's style) is itself the element of the event's list.
      if (entries === undefined && isAssentEntryNode(group)) return removeAlong(text, [...outer, { container: event, child: group }]);
      if (entries?.type !== 'array') continue;
      const entry = entries.children?.find(isAssentEntryNode);
      if (entry === undefined) continue;
      // The group goes with its last entry (its matcher and the rest are assent's too).
      return removeAlong(text, [...outer, { container: event, child: group }, { container: entries, child: entry }]);
    }
  }
  return undefined;
}

/** The text without any assent hook entry (see withoutAssentHooks); `atRoot` as for removeOneAssentHook. */
export function removeAssentHooksText(text: string, atRoot = false): string {
  let current = text;
  for (;;) {
    const next = removeOneAssentHook(current, atRoot);
    if (next === undefined) return current;
    current = next;
  }
}

/** The text with assent's two groups appended to the agent's before-tool and after-tool lists (no assent entry may be there). */
export function addAssentHooksText(text: string, target: AgentTarget, desired: DesiredHooks, format: TextFormat): string {
  const groups: [string, unknown][] = desiredGroups(target, desired).map(([event, entry]) => [event, hookElement(target, entry)]);
  let current = text;
  const atRoot = target.hooksAtRoot === true;
  const root = parseJsonTree(current);
  if (!atRoot && memberOf(root, 'hooks') === undefined) return insertMember(current, root, 'hooks', Object.fromEntries(groups.map(([event, group]) => [event, [group]])), format);
  for (const [event, group] of groups) {
    const tree = parseJsonTree(current);
    const hooks = atRoot ? tree : memberValue(memberOf(tree, 'hooks'));
    if (hooks === undefined) return current;
    const list = memberValue(memberOf(hooks, event));
    current = list === undefined ? insertMember(current, hooks, event, [group], format) : appendElement(current, list, group, format);
  }
  return current;
}

/** The text with `mcpServers.assent` set to `server`. */
export function setAssentMcpServerText(text: string, server: { command: string; args: string[] }, format: TextFormat): string {
  const root = parseJsonTree(text);
  const servers = memberValue(memberOf(root, 'mcpServers'));
  if (servers === undefined) return insertMember(text, root, 'mcpServers', { [MCP_SERVER_NAME]: server }, format);
  const existing = memberValue(memberOf(servers, MCP_SERVER_NAME));
  return existing === undefined ? insertMember(text, servers, MCP_SERVER_NAME, server, format) : replaceValue(text, existing, server, format);
}

/** The text without `mcpServers.assent` (and without `mcpServers` when that was its only server). */
export function removeAssentMcpServerText(text: string): string {
  const root = parseJsonTree(text);
  const serversMember = memberOf(root, 'mcpServers');
  const servers = memberValue(serversMember);
  const assent = memberOf(servers, MCP_SERVER_NAME);
  if (root.type !== 'object' || serversMember === undefined || servers?.type !== 'object' || assent === undefined) return text;
  return removeAlong(text, [
    { container: root, child: serversMember },
    { container: servers, child: assent },
  ]);
}
