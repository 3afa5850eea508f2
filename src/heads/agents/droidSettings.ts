// Factory Droid's own switches around the hooks.json assent installs into
// (observed with Droid 0.225.1, docs/agents.md): it reads an event's hooks from
// hooks.json when that file lists the event and from settings.json's "hooks"
// otherwise, reads the older hooks/hooks.json only while hooks.json is absent,
// and runs no hook at all while a "hooksDisabled" it reads is true — in the
// user's files, in the project's .factory/ of the working directory, or in the
// machine's managed settings, where "allowManagedHooksOnly" also drops them.
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

/** One Droid file that switches hooks off, and what it says. */
interface Switch {
  file: string;
  key: string;
}

function hooksDisabledIn(file: string, atRoot: boolean): Switch | undefined {
  const settings = readObject(file);
  const holder = atRoot ? settings : hooksOf(settings);
  return holder?.['hooksDisabled'] === true ? { file, key: atRoot ? '"hooksDisabled": true' : '"hooks": {"hooksDisabled": true}' } : undefined;
}

/** The hooks file Droid reads in a .factory dir: hooks.json, else the older hooks/hooks.json. */
function activeHooksFile(dir: string): string {
  const current = path.join(dir, 'hooks.json');
  const legacy = path.join(dir, 'hooks', 'hooks.json');
  return !fs.existsSync(current) && fs.existsSync(legacy) ? legacy : current;
}

export interface DroidFindings {
  problems: string[];
  notes: string[];
}

/**
 * What keeps Droid from running assent's hooks in this scope: `hooksDisabled`
 * in the scope's hooks file or settings.json, in the project's .factory/ of the
 * working directory (a repository can switch the person's hooks off), in the
 * managed settings (`managedFile`, read as Droid reads it); a
 * `commandRegex` on assent's group, which limits it to some shell commands.
 */
export function droidFindings(target: AgentTarget, hooksFile: string, hooksJson: JsonObject, cwd: string, managedFile = DROID_MANAGED_SETTINGS): DroidFindings {
  const problems: string[] = [];
  const dirs = [path.dirname(hooksFile)];
  const project = path.join(cwd, '.factory');
  if (target.scope === 'user' && path.resolve(project) !== path.resolve(dirs[0] as string)) dirs.push(project);
  const switches: Switch[] = [];
  const own = hooksJson['hooksDisabled'] === true ? { file: hooksFile, key: '"hooksDisabled": true' } : undefined;
  if (own !== undefined) switches.push(own);
  for (const dir of dirs) {
    const hooks = dir === dirs[0] ? undefined : hooksDisabledIn(activeHooksFile(dir), true);
    const settings = hooksDisabledIn(path.join(dir, 'settings.json'), false);
    for (const found of [hooks, settings]) if (found !== undefined) switches.push(found);
  }
  const managed = readObject(managedFile);
  const managedSwitch = hooksDisabledIn(managedFile, false);
  if (managedSwitch !== undefined) switches.push(managedSwitch);
  for (const found of switches) {
    problems.push(`${found.key} in ${found.file}: Droid gates nothing while hooksDisabled is true (it runs no hook, assent's neither); remove it, or switch hooks on again in droid's /hooks`);
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
