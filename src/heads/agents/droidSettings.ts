// Factory Droid's own switches around the hooks.json assent installs into
// (observed with Droid 0.225.1, docs/agents.md): it reads an event's hooks from
// hooks.json when that file lists the event and from settings.json's "hooks"
// otherwise, reads the older hooks/hooks.json only while hooks.json is absent,
// and runs no hook at all while "hooksDisabled" is true — as the first of the
// machine's managed settings, the project's .factory/ of the working directory
// and the user's files that states it says; "allowManagedHooksOnly" in the
// managed settings drops every other hook.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import { droidFiles, type AgentTarget } from './agentTargets.js';
import { isAssentEntry } from './assentEntries.js';
import { isJsonObject, parseSettings, readFileState, type JsonObject } from './settingsFiles.js';

/** The machine's managed settings on Linux, which Droid reads before any other level. */
export const DROID_MANAGED_SETTINGS = '/etc/factory/settings.json';

/** The parsed file, or undefined when it is missing or cannot be read (doctor names unreadable files elsewhere). */
function readObject(file: string): JsonObject | undefined {
  try {
    const state = readFileState(file);
    return state.exists ? parseSettings(file, state.text, 'comments') : undefined;
  } catch {
    return undefined;
  }
}

function hooksOf(settings: JsonObject | undefined): JsonObject | undefined {
  const hooks = settings?.['hooks'];
  return isJsonObject(hooks) ? hooks : undefined;
}

/** Whether an event list holds any hook group (an empty list hides nothing: Droid skips it). */
function listsEvent(hooks: JsonObject | undefined, event: string): boolean {
  const groups = hooks?.[event];
  return Array.isArray(groups) && groups.length > 0;
}

/**
 * Refuses an install that would silently change which of the person's own
 * hooks Droid runs: a hooks.json created beside an older hooks/hooks.json
 * hides that file, and assent's event lists in hooks.json hide the same events
 * under settings.json's "hooks".
 */
export function checkDroidInstall(target: AgentTarget, hooksFile: string): void {
  const { settings, legacyHooks } = droidFiles(target);
  if (!fs.existsSync(hooksFile) && fs.existsSync(legacyHooks)) {
    throw new AssentError(
      'conflict',
      `Factory Droid reads its hooks from ${legacyHooks} while ${hooksFile} does not exist, so creating ${hooksFile} would switch those hooks off. Save the hooks once in droid's /hooks (it moves them to ${hooksFile}), or move the file there yourself, then run this again. Nothing was changed`,
      { details: { path: legacyHooks } },
    );
  }
  const current = readObject(hooksFile);
  const own = hooksOf(readObject(settings));
  const hidden = [target.events.before, target.events.after].filter((event) => listsEvent(own, event) && !listsEvent(current, event));
  if (hidden.length > 0) {
    throw new AssentError(
      'conflict',
      `${settings} holds your own ${hidden.join(' and ')} hooks under "hooks"; Factory Droid reads an event from ${hooksFile} whenever that file lists it, so adding assent's there would switch yours off. Move them into ${hooksFile} (its top level is the "hooks" object), then run this again. Nothing was changed`,
      { details: { path: settings } },
    );
  }
}

/** The `hooksDisabled` one Droid file states, and where. */
interface Switch {
  file: string;
  key: string;
  value: boolean;
}

function statedIn(file: string, atRoot: boolean, settings = readObject(file)): Switch | undefined {
  const value = (atRoot ? settings : hooksOf(settings))?.['hooksDisabled'];
  return typeof value === 'boolean' ? { file, key: atRoot ? `"hooksDisabled": ${String(value)}` : `"hooks": {"hooksDisabled": ${String(value)}}`, value } : undefined;
}

/** The hooks file Droid reads in a .factory dir: hooks.json, else the older hooks/hooks.json. */
function activeHooksFile(dir: string): string {
  const current = path.join(dir, 'hooks.json');
  const legacy = path.join(dir, 'hooks', 'hooks.json');
  return !fs.existsSync(current) && fs.existsSync(legacy) ? legacy : current;
}

/** What one level (a .factory dir) states: its hooks file wins over its settings.json's "hooks" (as Droid merges them). */
function levelSwitch(dir: string, hooksFile = activeHooksFile(dir), hooksJson?: JsonObject): Switch | undefined {
  return statedIn(hooksFile, true, hooksJson ?? readObject(hooksFile)) ?? statedIn(path.join(dir, 'settings.json'), false);
}

export interface DroidFindings {
  problems: string[];
  notes: string[];
}

const GATES_NOTHING = "Droid gates nothing while hooksDisabled is true (it runs no hook, assent's neither)";

/**
 * What keeps Droid from running assent's hooks in this scope. `hooksDisabled`
 * is decided by the first level that states it, hooks file before
 * settings.json within a level (observed with 0.225.1): the managed settings
 * (`managedFile`), then the project's .factory/ of the working directory (so a
 * repository can switch the person's hooks off, or back on), then the scope's
 * own files. `allowManagedHooksOnly` in the managed settings drops every other
 * hook; a `commandRegex` on assent's group limits it to some shell commands.
 */
export function droidFindings(target: AgentTarget, hooksFile: string, hooksJson: JsonObject, cwd: string, managedFile = DROID_MANAGED_SETTINGS): DroidFindings {
  const problems: string[] = [];
  const dir = path.dirname(hooksFile);
  const projectDir = path.join(cwd, '.factory');
  const managed = readObject(managedFile);
  const decided = statedIn(managedFile, false, managed);
  const project = target.scope === 'user' && path.resolve(projectDir) !== path.resolve(dir) ? levelSwitch(projectDir) : undefined;
  const own = levelSwitch(dir, hooksFile, hooksJson);
  if (decided !== undefined) {
    if (decided.value) problems.push(`${decided.key} in ${decided.file}, the managed settings that decide it before any other file: ${GATES_NOTHING}; ask whoever manages this machine`);
  } else {
    if (project?.value === true) problems.push(`${project.key} in ${project.file}: in this folder ${GATES_NOTHING}; remove it there`);
    if (own?.value === true) {
      const here = project?.value === false ? ` (here ${project.file} says false, which wins in this folder only)` : '';
      problems.push(`${own.key} in ${own.file}: ${GATES_NOTHING} in every folder whose own .factory/ does not say otherwise${here}; remove it, or switch hooks on again in droid's /hooks`);
    }
  }
  if (managed?.['allowManagedHooksOnly'] === true) {
    problems.push(`"allowManagedHooksOnly": true in ${managedFile}: Droid runs only the hooks of the managed settings, so it gates nothing through ${hooksFile}; ask whoever manages this machine to add assent's hook there`);
  }
  for (const event of [target.events.before, target.events.after]) {
    const groups = Array.isArray(hooksJson[event]) ? (hooksJson[event] as unknown[]) : [];
    for (const group of groups) {
      const entries = isJsonObject(group) && Array.isArray(group['hooks']) ? (group['hooks'] as unknown[]) : [];
      if (isJsonObject(group) && group['commandRegex'] !== undefined && entries.some(isAssentEntry)) {
        problems.push(`assent's ${event} group has "commandRegex" ${JSON.stringify(group['commandRegex'])}, so Droid runs it only for some shell commands and every other call without asking assent; run \`assent install droid\` again`);
      }
    }
  }
  const notes = [
    "Organization settings that Factory's servers send after a login can switch hooks off too (hooksDisabled, allowManagedHooksOnly); doctor cannot see those: `droid` shows the hooks it runs in /hooks.",
  ];
  return { problems, notes };
}
