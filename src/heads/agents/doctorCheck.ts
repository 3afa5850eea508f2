// What one doctor check of an agent and scope needs and what it reports, shared
// by the hook check (hookDoctor.ts) and the plugin check (pluginDoctor.ts).
import type { AgentId, InstallScope, TargetEnvironment } from './agentTargets.js';
import type { AssentInstallation } from './hookCommand.js';
import type { InstallRecords } from './installRecords.js';

export interface ShellRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** Runs a command line the way the agents run hooks, with `input` on stdin. */
export type CommandRunner = (command: string, input: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }) => Promise<ShellRun>;

export interface AgentReport {
  agent: AgentId;
  scope: InstallScope;
  installed: boolean;
  settingsPath: string;
  /** The installed before-tool command; null when there is none. */
  command: string | null;
  timeoutOk: boolean;
  blocksCanary: boolean;
  /** Whether the `assent` MCP server is registered in this scope. */
  mcp: boolean;
  problems: string[];
  /** Things doctor cannot check and a person should know. */
  notes: string[];
  /** Codex only: what its config.toml records about a person's /hooks trust of assent's before-tool hook. */
  codexTrust?: 'missing' | 'disabled' | 'recorded' | 'unreadable';
  /** Auggie only: whether Augment's server had its hooks on at Auggie's last start, as its log says (auggieSettings.ts). */
  auggieHooks?: 'on' | 'off' | 'unknown';
}

export interface DoctorDependencies {
  where: TargetEnvironment;
  installation: AssentInstallation;
  hookTimeoutSeconds: number;
  /** `hooks.claudeNativePrompt` of the daemon's configuration (R-HOOK-9): Claude Code then needs its PermissionRequest hook. */
  claudeNativePrompt?: boolean;
  records: InstallRecords;
  run: CommandRunner;
  now: () => Date;
}
