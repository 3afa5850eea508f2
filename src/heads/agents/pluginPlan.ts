// `assent install|uninstall opencode|kilo` (R-HOOK-14): the agent is reached
// through one plugin file in its plugin dir, which assent owns whole. Install
// writes it (refusing a file of that name that is not assent's); uninstall
// removes it with its load marker, so the dir is as it was before install.
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import { AGENT_TITLES, type AgentTarget } from './agentTargets.js';
import type { InstallRecords } from './installRecords.js';
import type { AgentPlan, EntryKind, FileChange, InstallRequest } from './agentPlan.js';
import { requiredAgentTimeoutSeconds } from '../../core/agent/hookDeadline.js';
import { isAssentPlugin, LOAD_MARKER_NAME, pluginText } from './pluginFile.js';
import { readFileState, resolveSettingsPath, type FileState } from './settingsFiles.js';

type MakeChange = (file: string, kinds: EntryKind[], before: FileState, afterText: string | undefined) => FileChange;

/** The plugin file with this assent's hook and timeout; a file of that name that assent did not write is refused. */
export function planPluginInstall(target: AgentTarget, request: InstallRequest, change: MakeChange): AgentPlan {
  if (request.mcp) {
    throw new AssentError('usage', `--mcp is not supported for ${AGENT_TITLES[target.agent]}: add \`assent mcp\` to the "mcp" section of its config by hand (docs/agents.md shows how). Nothing was changed`, {
      details: { agent: target.agent },
    });
  }
  const file = resolveSettingsPath(target.hooksFile);
  const before = readFileState(file);
  if (before.exists && !isAssentPlugin(before.text)) {
    throw new AssentError('conflict', `${file} exists and is not a plugin assent wrote; move it away (or rename it), then run this again. Nothing was changed`, { details: { path: file } });
  }
  const agent = target.agent === 'kilo' ? 'kilo' : 'opencode';
  const text = pluginText({ agent, installation: request.installation, timeoutSeconds: requiredAgentTimeoutSeconds(request.hookTimeoutSeconds) });
  return { target, files: [change(file, ['hooks'], before, text)] };
}

/** Removing assent's plugin file and its load marker; nothing when the file is not there or not assent's. */
export function planPluginUninstall(target: AgentTarget, records: InstallRecords, change: MakeChange): AgentPlan {
  const file = resolveSettingsPath(target.hooksFile);
  const before = readFileState(file);
  if (!before.exists || !isAssentPlugin(before.text)) return { target, files: [] };
  const planned = change(file, ['hooks'], before, undefined);
  // The file is assent's whole: removing it puts the dir back as it was, whatever the file held since.
  planned.restoredExactly = true;
  planned.alsoRemove = [path.join(path.dirname(file), LOAD_MARKER_NAME)];
  const record = records[file];
  if (record !== undefined) planned.record = record;
  return { target, files: [planned] };
}
