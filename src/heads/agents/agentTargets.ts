// Where each agent CLI reads its hooks and MCP servers, and the shape and units
// of its hook entries (SPEC §17, docs/agents-testing.md: observed with Claude
// Code 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0, OpenCode 1.18.33, Kilo Code
// 7.7.7, Copilot CLI 1.0.102, Qwen Code 0.24.4, Factory Droid 0.225.1, Auggie 0.36.0, Cline CLI 3.0.65).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import type { JsonDialect } from './settingsFiles.js';

export type AgentId = 'claude-code' | 'codex' | 'gemini' | 'opencode' | 'kilo' | 'copilot' | 'qwen' | 'droid' | 'auggie' | 'cline';
export type InstallScope = 'user' | 'project';

export const AGENT_IDS: readonly AgentId[] = ['claude-code', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'qwen', 'droid', 'auggie', 'cline'];

/** Names of the agent as people see them in messages. */
export const AGENT_TITLES: Record<AgentId, string> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  opencode: 'OpenCode',
  kilo: 'Kilo Code',
  copilot: 'Copilot CLI',
  qwen: 'Qwen Code',
  droid: 'Factory Droid',
  auggie: 'Auggie',
  cline: 'Cline CLI',
};

/** The agents' names as `install`, `uninstall` and `hook` take them, for help and messages. */
export const AGENT_LIST_TEXT = 'claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline';

/**
 * Agents assent does not gate yet, and why, as observed with each real CLI
 * (docs/agents.md): `assent install NAME` says so instead of "unknown agent".
 */
const NOT_SUPPORTED: Readonly<Record<string, string>> = {
  crush: "Crush's npm package downloads its binary from outside the registry at install, so its hooks could not be observed here",
  continue: "Continue CLI (cn) ships a hook system that nothing calls in 1.5.47: a real run's deny hook never ran and the command did; its tool permissions take no external program",
  cn: "Continue CLI (cn) ships a hook system that nothing calls in 1.5.47: a real run's deny hook never ran and the command did; its tool permissions take no external program",
};

/** R-SH-0: the hook name, with `claude` accepted for `claude-code`. */
export function parseAgent(name: string): AgentId {
  if (name === 'claude') return 'claude-code';
  if ((AGENT_IDS as readonly string[]).includes(name)) return name as AgentId;
  const why = NOT_SUPPORTED[name];
  if (why !== undefined) throw new AssentError('usage', `${name} is not supported: ${why} (docs/agents.md); supported: ${AGENT_LIST_TEXT}`, { details: { agent: name } });
  throw new AssentError('usage', `unknown agent ${JSON.stringify(name)}; use ${AGENT_LIST_TEXT}`, { details: { agent: name } });
}

/** Agents reached through a plugin file that `install` writes (R-HOOK-14), not through hook entries in a settings file. */
export function isPluginAgent(agent: AgentId): agent is PluginAgent {
  return agent === 'opencode' || agent === 'kilo';
}

/** The agents reached through assent's plugin file. */
export type PluginAgent = 'opencode' | 'kilo';

/** Agents reached through hook files that `install` writes whole (Cline CLI's `PreToolUse.sh` and `PostToolUse.sh`), not through entries in a settings file. */
export function isHookFileAgent(agent: AgentId): agent is 'cline' {
  return agent === 'cline';
}

export function parseScope(value: string | undefined): InstallScope {
  if (value === undefined || value === 'user') return 'user';
  if (value === 'project') return 'project';
  throw new AssentError('usage', `unknown --scope ${JSON.stringify(value)}; use user (the default) or project`, { details: { scope: value } });
}

/** Where an agent keeps its MCP servers: a JSON file with a `mcpServers` object, or Codex's config.toml. */
export type McpLocation = { format: 'json'; file: string } | { format: 'toml'; file: string };

export interface AgentTarget {
  agent: AgentId;
  scope: InstallScope;
  /** The JSON file whose `hooks` object holds the agent's hook entries; for OpenCode and Kilo, the plugin file. */
  hooksFile: string;
  /** The file's top level is the `hooks` object itself (Factory Droid's hooks.json: `{"PreToolUse":[…]}`). */
  hooksAtRoot?: true;
  /** Written into assent's groups beside `matcher` and `hooks` (Auggie's `metadata`, which makes it report an MCP call's server). */
  groupMetadata?: Readonly<Record<string, boolean>>;
  /**
   * How entries sit in an event's list: `grouped` `{matcher, hooks:[{type, command, timeout}]}`
   * (Claude Code's shape), or `flat` `{type, bash, timeoutSec}` (Copilot CLI's own).
   */
  entryStyle: 'grouped' | 'flat';
  /**
   * Event names of the before-tool and after-tool hooks, and of the agent's
   * permission-dialog hook where assent can answer the dialog (R-HOOK-9: Claude
   * Code's PermissionRequest, installed with hooks.claudeNativePrompt).
   */
  events: { before: string; after: string; dialog?: string };
  /** The matcher that selects every tool. */
  matcher: string;
  /** Matchers the agent treats as "every tool" (an entry with one of these, or none, covers all tools). */
  allToolsMatchers: readonly string[];
  /** The unit of a hook entry's `timeout`. */
  timeoutUnit: 'seconds' | 'milliseconds';
  /** The agent's own hook timeout when an entry names none, in seconds. */
  defaultTimeoutSeconds: number;
  mcp: McpLocation;
  /**
   * How the agent reads its JSON settings files: Gemini CLI, Qwen Code and
   * Factory Droid accept comments, so a file there may hold them and keeps
   * them; the others are read and edited as plain JSON.
   */
  jsonDialect: JsonDialect;
}

export interface TargetEnvironment {
  env: NodeJS.ProcessEnv;
  homedir: string;
  cwd: string;
}

export function currentEnvironment(): TargetEnvironment {
  return { env: process.env, homedir: os.homedir(), cwd: process.cwd() };
}

/** An environment variable naming a directory, resolved against the cwd when relative; undefined when unset or empty. */
function dirFromEnv(where: TargetEnvironment, name: string): string | undefined {
  const value = where.env[name];
  return value === undefined || value === '' ? undefined : path.resolve(where.cwd, value);
}

/**
 * The files one agent reads for one scope. Claude Code honours
 * CLAUDE_CONFIG_DIR (settings.json and .claude.json inside it), Codex
 * CODEX_HOME, Gemini CLI GEMINI_CLI_HOME (it replaces the home directory).
 */
export function agentTarget(agent: AgentId, scope: InstallScope, where: TargetEnvironment): AgentTarget {
  const project = where.cwd;
  switch (agent) {
    case 'claude-code': {
      const configDir = dirFromEnv(where, 'CLAUDE_CONFIG_DIR');
      return {
        agent,
        scope,
        hooksFile: scope === 'user' ? path.join(configDir ?? path.join(where.homedir, '.claude'), 'settings.json') : path.join(project, '.claude', 'settings.json'),
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse', dialog: 'PermissionRequest' },
        matcher: '*',
        allToolsMatchers: ['*', ''],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 600,
        mcp: { format: 'json', file: scope === 'user' ? path.join(configDir ?? where.homedir, '.claude.json') : path.join(project, '.mcp.json') },
        jsonDialect: 'json',
      };
    }
    case 'codex': {
      const codexHome = scope === 'user' ? (dirFromEnv(where, 'CODEX_HOME') ?? path.join(where.homedir, '.codex')) : path.join(project, '.codex');
      return {
        agent,
        scope,
        hooksFile: path.join(codexHome, 'hooks.json'),
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '*',
        allToolsMatchers: ['*', ''],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 600,
        mcp: { format: 'toml', file: path.join(codexHome, 'config.toml') },
        jsonDialect: 'json',
      };
    }
    case 'gemini': {
      const home = dirFromEnv(where, 'GEMINI_CLI_HOME') ?? where.homedir;
      const settings = scope === 'user' ? path.join(home, '.gemini', 'settings.json') : path.join(project, '.gemini', 'settings.json');
      return {
        agent,
        scope,
        hooksFile: settings,
        entryStyle: 'grouped',
        events: { before: 'BeforeTool', after: 'AfterTool' },
        matcher: '.*',
        allToolsMatchers: ['.*', ''],
        timeoutUnit: 'milliseconds',
        defaultTimeoutSeconds: 60,
        mcp: { format: 'json', file: settings },
        jsonDialect: 'comments',
      };
    }
    case 'opencode':
    case 'kilo': {
      // The engine's config dir: $XDG_CONFIG_HOME/<name> (~/.config/<name>), or .<name> in the project; plugins in plugin/.
      const configHome = dirFromEnv(where, 'XDG_CONFIG_HOME') ?? path.join(where.homedir, '.config');
      const dir = scope === 'user' ? path.join(configHome, agent) : path.join(project, `.${agent}`);
      return {
        agent,
        scope,
        hooksFile: path.join(dir, 'plugin', PLUGIN_FILE_NAME),
        entryStyle: 'grouped',
        events: { before: 'tool.execute.before', after: 'tool.execute.after' },
        matcher: '*',
        allToolsMatchers: ['*'],
        timeoutUnit: 'seconds',
        // The agent has no timeout at all: the plugin brings its own (R-HOOK-14).
        defaultTimeoutSeconds: Number.POSITIVE_INFINITY,
        mcp: { format: 'json', file: path.join(dir, `${agent}.json`) },
        jsonDialect: 'json',
      };
    }
    case 'cline': {
      // Cline CLI 3.0.65 runs every file named after an event in $CLINE_DIR/hooks (~/.cline/hooks), ~/Documents/Cline/Hooks
      // and the workspace's .clinerules/hooks and .cline/hooks; its MCP servers sit in data/settings.
      const clineDir = dirFromEnv(where, 'CLINE_DIR') ?? path.join(where.homedir, '.cline');
      const dir = scope === 'user' ? clineDir : path.join(project, '.cline');
      return {
        agent,
        scope,
        hooksFile: path.join(dir, 'hooks', 'PreToolUse.sh'),
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '*',
        allToolsMatchers: ['*'],
        timeoutUnit: 'seconds',
        // Fixed: Cline gives every hook command 120 s, then runs the call; no setting changes it.
        defaultTimeoutSeconds: 120,
        mcp: { format: 'json', file: path.join(clineDir, 'data', 'settings', 'cline_mcp_settings.json') },
        jsonDialect: 'json',
      };
    }
    case 'copilot': {
      if (scope === 'project') {
        throw new AssentError(
          'usage',
          'Copilot CLI reads repository hooks (.github/hooks/*.json) only in a folder it trusts, so assent installs into your user settings only: run `assent install copilot` without --scope',
          { details: { agent, scope } },
        );
      }
      const dir = dirFromEnv(where, 'COPILOT_HOME') ?? path.join(where.homedir, '.copilot');
      return {
        agent,
        scope,
        hooksFile: path.join(dir, 'settings.json'),
        entryStyle: 'flat',
        events: { before: 'preToolUse', after: 'postToolUse' },
        matcher: '*',
        allToolsMatchers: ['*'],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 30,
        mcp: { format: 'json', file: path.join(dir, 'mcp-config.json') },
        jsonDialect: 'json',
      };
    }
    case 'qwen': {
      const settings = scope === 'user' ? path.join(where.homedir, '.qwen', 'settings.json') : path.join(project, '.qwen', 'settings.json');
      return {
        agent,
        scope,
        hooksFile: settings,
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '.*',
        allToolsMatchers: ['.*', '*', ''],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 60,
        mcp: { format: 'json', file: settings },
        jsonDialect: 'comments',
      };
    }
    case 'droid': {
      // Droid 0.225.1 reads hooks.json first: an event it lists there hides the same event under settings.json's "hooks".
      const dir = scope === 'user' ? path.join(where.homedir, '.factory') : path.join(project, '.factory');
      return {
        agent,
        scope,
        hooksFile: path.join(dir, 'hooks.json'),
        hooksAtRoot: true,
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '*',
        allToolsMatchers: ['*', '', '.*'],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 60,
        mcp: { format: 'json', file: path.join(dir, 'mcp.json') },
        // Droid reads comments in its JSON files; a trailing comma makes it skip the whole file without a word.
        jsonDialect: 'comments',
      };
    }
    case 'auggie': {
      // Auggie 0.36.0 merges the hooks of /etc/augment/settings.json, ~/.augment/settings.json and the workspace
      // root's .augment/settings.local.json and .augment/settings.json; MCP servers sit in the same file.
      const settings = scope === 'user' ? path.join(where.homedir, '.augment', 'settings.json') : path.join(auggieWorkspaceRoot(project), '.augment', 'settings.json');
      return {
        agent,
        scope,
        hooksFile: settings,
        entryStyle: 'grouped',
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '.*',
        // Auggie reads a missing or empty matcher as ".*"; it is a regular expression.
        allToolsMatchers: ['.*', ''],
        groupMetadata: { includeMCPMetadata: true },
        timeoutUnit: 'milliseconds',
        defaultTimeoutSeconds: 60,
        mcp: { format: 'json', file: settings },
        // Auggie reads comments (and trailing commas) in settings.json; it rewrites the file itself, without them, when it saves a setting.
        jsonDialect: 'comments',
      };
    }
  }
}

/** Auggie's workspace root for a folder: the git repository's root above it (what Auggie picks), else the folder itself. */
export function auggieWorkspaceRoot(cwd: string): string {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/** Factory Droid's other files: the settings.json whose "hooks" it reads too, and the older hooks/hooks.json it reads while hooks.json is absent. */
export function droidFiles(target: Pick<AgentTarget, 'hooksFile'>): { settings: string; legacyHooks: string } {
  const dir = path.dirname(target.hooksFile);
  return { settings: path.join(dir, 'settings.json'), legacyHooks: path.join(dir, 'hooks', 'hooks.json') };
}

/** The plugin file assent writes into OpenCode's and Kilo's plugin dirs. */
export const PLUGIN_FILE_NAME = 'assent.js';

/** Agents whose `--mcp` entry assent does not write: their MCP settings take another shape (docs/agents.md says how to add it by hand). */
export function supportsMcpInstall(agent: AgentId): boolean {
  return agent === 'claude-code' || agent === 'codex' || agent === 'gemini' || agent === 'qwen' || agent === 'auggie';
}

/** What a person should know after installing into this target: the agent's own switches that keep hooks from running. */
export function installNotes(target: AgentTarget, mcp: boolean): string[] {
  switch (target.agent) {
    case 'claude-code':
      return target.scope === 'project' && mcp ? [`Claude Code asks you once to approve the MCP server in ${target.mcp.file} before it starts it.`] : [];
    case 'codex':
      return [
        'Codex runs a hook only after you have trusted it: open codex and review the new hooks with /hooks. Until then Codex runs every call without asking assent, and `codex exec` says nothing about it.',
        ...(target.scope === 'project' ? [`Codex reads ${target.hooksFile} only in a project it trusts (accept when codex asks, or run \`codex exec --trust\` once).`] : []),
      ];
    case 'gemini':
      return ['Gemini CLI runs no hook in a folder it does not trust (security.folderTrust); trust the folder when it asks.'];
    case 'opencode':
    case 'kilo': {
      const title = AGENT_TITLES[target.agent];
      return [
        `${title} loads the plugin at its next start. It skips a plugin that fails to load without saying so, and \`--pure\` (or ${target.agent === 'opencode' ? 'OPENCODE_PURE' : 'KILO_PURE'}) runs it without plugins: then nothing is gated. \`assent doctor\` shows whether the last run loaded it.`,
      ];
    }
    case 'cline':
      return [
        "Cline CLI's only refusal ({\"cancel\":true}) ends the whole task: assent refuses a run_commands call instead by running, in its place, a command that prints the reason (the model reads it and goes on), and cancels any other refused call. A hook that prints nothing, or more than 120 s of waiting, runs the call; assent's hook answers before, so a person has about 96 s to decide.",
        `\`--config\` or CLINE_DIR pointing at another folder, and \`--hooks-dir\`, make Cline read other hook files: without assent's there, nothing is gated. \`assent doctor\` checks ${path.dirname(target.hooksFile)}.`,
      ];
    case 'copilot':
      return ['Copilot CLI runs the call when a hook times out; the hook answers before its timeoutSec. Hooks in .github/hooks load only in a folder Copilot trusts; assent installs into ~/.copilot/settings.json, which always loads.'];
    case 'qwen':
      return ['Qwen Code runs the call when a hook times out, exits 1 or prints nothing; assent\'s hook answers deny (exit 2) before its timeout on every failure.'];
    case 'droid':
      return [
        'Factory Droid runs the call when a hook times out, exits 1 or prints nothing; assent\'s hook answers deny with exit 2 before its timeout, which also wins over another hook\'s allow.',
        `"hooksDisabled": true (Droid's /hooks toggle, in ${droidFiles(target).settings} under "hooks", or in a project's .factory/settings.json or .factory/hooks.json) switches off every hook: then Droid gates nothing. \`assent doctor\` checks for it.`,
      ];
    case 'auggie':
      return [
        "Auggie runs hooks only while Augment's server switches them on for your account (the enable_hooks feature flag); while it is off Auggie runs every call without asking assent and says nothing. To check: start auggie and type /hooks (Auggie offers that command only while hooks are on); `assent doctor` reads what Auggie's own log says of its last start.",
        "Auggie runs the call when a hook times out, exits 1 or prints nothing; assent's hook answers deny (exit 2) before its timeout on every failure.",
        ...(mcp
          ? [`Auggie starts MCP servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER of its environment: if you set ASSENT_HOME, add it under "env" of the "assent" entry in ${target.mcp.file}.`]
          : []),
      ];
  }
}
