// The shape of a planned `assent install` / `assent uninstall` for one agent:
// each file's change, computed before anything is written, whether the agent
// is reached through its settings files (installPlan.ts) or a plugin file (pluginPlan.ts).
import type { AgentId, AgentTarget, InstallScope, TargetEnvironment } from './agentTargets.js';
import type { AssentInstallation } from './hookCommand.js';
import type { InstallRecord } from './installRecords.js';
import type { FileState } from './settingsFiles.js';

export type EntryKind = 'hooks' | 'mcp';

/** What happens to one file. */
export interface FileChange {
  /** The file as edited (symlinks resolved). */
  file: string;
  kinds: EntryKind[];
  before: FileState;
  /** The new text; undefined when the file is to be deleted (uninstall of a file install created). */
  afterText: string | undefined;
  changed: boolean;
  diff: string[];
  /** Uninstall: the bytes from before install are put back exactly (false: assent's entries were removed and the rest re-serialized). */
  restoredExactly?: boolean;
  /** Uninstall of a changed JSON file: only assent's entries were cut from its text (false: the file was re-serialized). */
  textKept?: boolean;
  /** Uninstall: the record this change came from, to clean up after it. */
  record?: InstallRecord;
  /** Uninstall: files that go with this one (the plugin's load marker), removed after it. */
  alsoRemove?: string[];
}

export interface AgentPlan {
  target: AgentTarget;
  files: FileChange[];
}

export interface InstallRequest {
  agent: AgentId;
  scope: InstallScope;
  where: TargetEnvironment;
  installation: AssentInstallation;
  /** `hooks.timeoutSeconds` of the config. */
  hookTimeoutSeconds: number;
  /** `hooks.claudeNativePrompt` of the config: Claude Code also gets the PermissionRequest hook (R-HOOK-9). */
  claudeNativePrompt?: boolean;
  mcp: boolean;
}
