// Where each agent CLI reads its hooks and MCP servers, and the shape and units
// of its hook entries (SPEC §17, docs/agents-testing.md: observed with Claude
// Code 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0).
import * as os from 'node:os';
import * as path from 'node:path';
import { AssentError } from '../../core/errors.js';

export type AgentId = 'claude-code' | 'codex' | 'gemini';
export type InstallScope = 'user' | 'project';

export const AGENT_IDS: readonly AgentId[] = ['claude-code', 'codex', 'gemini'];

/** Names of the agent as people see them in messages. */
export const AGENT_TITLES: Record<AgentId, string> = { 'claude-code': 'Claude Code', codex: 'Codex', gemini: 'Gemini CLI' };

/** R-SH-0: the hook name, with `claude` accepted for `claude-code`. */
export function parseAgent(name: string): AgentId {
  if (name === 'claude') return 'claude-code';
  if ((AGENT_IDS as readonly string[]).includes(name)) return name as AgentId;
  throw new AssentError('usage', `unknown agent ${JSON.stringify(name)}; use claude-code (or claude), codex or gemini`, { details: { agent: name } });
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
  /** The JSON file whose `hooks` object holds the agent's hook entries. */
  hooksFile: string;
  /** Event names of the before-tool and after-tool hooks. */
  events: { before: string; after: string };
  /** The matcher that selects every tool. */
  matcher: string;
  /** Matchers the agent treats as "every tool" (an entry with one of these, or none, covers all tools). */
  allToolsMatchers: readonly string[];
  /** The unit of a hook entry's `timeout`. */
  timeoutUnit: 'seconds' | 'milliseconds';
  /** The agent's own hook timeout when an entry names none, in seconds. */
  defaultTimeoutSeconds: number;
  mcp: McpLocation;
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
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '*',
        allToolsMatchers: ['*', ''],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 600,
        mcp: { format: 'json', file: scope === 'user' ? path.join(configDir ?? where.homedir, '.claude.json') : path.join(project, '.mcp.json') },
      };
    }
    case 'codex': {
      const codexHome = scope === 'user' ? (dirFromEnv(where, 'CODEX_HOME') ?? path.join(where.homedir, '.codex')) : path.join(project, '.codex');
      return {
        agent,
        scope,
        hooksFile: path.join(codexHome, 'hooks.json'),
        events: { before: 'PreToolUse', after: 'PostToolUse' },
        matcher: '*',
        allToolsMatchers: ['*', ''],
        timeoutUnit: 'seconds',
        defaultTimeoutSeconds: 600,
        mcp: { format: 'toml', file: path.join(codexHome, 'config.toml') },
      };
    }
    case 'gemini': {
      const home = dirFromEnv(where, 'GEMINI_CLI_HOME') ?? where.homedir;
      const settings = scope === 'user' ? path.join(home, '.gemini', 'settings.json') : path.join(project, '.gemini', 'settings.json');
      return {
        agent,
        scope,
        hooksFile: settings,
        events: { before: 'BeforeTool', after: 'AfterTool' },
        matcher: '.*',
        allToolsMatchers: ['.*', ''],
        timeoutUnit: 'milliseconds',
        defaultTimeoutSeconds: 60,
        mcp: { format: 'json', file: settings },
      };
    }
  }
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
  }
}
