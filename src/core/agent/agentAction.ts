// Agent actions (SPEC §17): a call of an agent's own built-in tool, seen through
// that agent's hook. This module names the agents, the kind of each tool (R-HOOK-2)
// and the MCP tool names the agents use. It imports nothing, so the hook's thin
// client can load it without the rest of the core.

/** The agents assent hooks into, by their hook name (R-SH-0). */
export const AGENT_NAMES = ['claude-code', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'qwen', 'droid', 'auggie', 'cline'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** The short alias of each agent: the first half of its tool ids (`claude/Bash`) and the `server` of its calls. */
export const AGENT_ALIAS: Readonly<Record<AgentName, string>> = Object.freeze({
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  opencode: 'opencode',
  kilo: 'kilo',
  copilot: 'copilot',
  qwen: 'qwen',
  droid: 'droid',
  auggie: 'auggie',
  cline: 'cline',
});

/** What an agent action does, as far as its tool name says (R-HOOK-2). */
export const AGENT_ACTION_KINDS = ['shell', 'read', 'write', 'fetch', 'mcp', 'other'] as const;
export type AgentActionKind = (typeof AGENT_ACTION_KINDS)[number];

/**
 * The MCP server entry `assent install --mcp` writes. A call under it is the
 * gateway's only when a live gateway session also lists the tool (R-HOOK-5,
 * R-HOOK-13); the name alone proves nothing.
 */
export const GATEWAY_SERVER_NAME = 'assent';

/** The synthetic tool `assent doctor` sends through an installed hook: always denied, nothing filed, run or audited. */
export const CANARY_TOOL = 'AssentDoctorCanary';

/** Words the canary's denial always contains, so doctor can tell it from any other answer. */
export const CANARY_REASON = 'assent doctor canary: this synthetic call is always denied; the hook works.';

/** The agent named by a hook argument; `claude` is accepted for `claude-code` (R-SH-0). */
/**
 * Agents whose hook answer can replace the command that runs with its confined
 * form (R-SH-14), each seen doing so with its real CLI (docs/agents.md): Claude
 * Code's and Codex's `updatedInput`, Gemini CLI's `hookSpecificOutput.tool_input`,
 * Copilot CLI's `modifiedArgs`, and assent's own OpenCode/Kilo plugin, which
 * writes the rewritten input into the call's `output.args`, Factory Droid's
 * `updatedInput` (merged into the input) and Auggie's `updatedInput` (which
 * replaces the input). Qwen Code's hook cannot: there a command that could run
 * confined keeps asking.
 */
export const REWRITING_AGENTS = ['claude-code', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'droid', 'auggie'] as const satisfies readonly AgentName[];
export type RewritingAgent = (typeof REWRITING_AGENTS)[number];

export function isRewritingAgent(agent: AgentName): agent is RewritingAgent {
  return (REWRITING_AGENTS as readonly AgentName[]).includes(agent);
}

export function parseAgentName(text: string): AgentName | undefined {
  if (text === 'claude') return 'claude-code';
  return (AGENT_NAMES as readonly string[]).includes(text) ? (text as AgentName) : undefined;
}

const OPENCODE_KINDS: Readonly<Record<string, AgentActionKind>> = Object.freeze({
  bash: 'shell',
  read: 'read',
  grep: 'read',
  glob: 'read',
  list: 'read',
  write: 'write',
  edit: 'write',
  patch: 'write',
  multiedit: 'write',
  webfetch: 'fetch',
});

const KINDS: Readonly<Record<AgentName, Readonly<Record<string, AgentActionKind>>>> = Object.freeze({
  'claude-code': {
    Bash: 'shell',
    Read: 'read',
    Grep: 'read',
    Glob: 'read',
    LS: 'read',
    NotebookRead: 'read',
    Edit: 'write',
    Write: 'write',
    MultiEdit: 'write',
    NotebookEdit: 'write',
    WebFetch: 'fetch',
  },
  codex: {
    Bash: 'shell',
    apply_patch: 'write',
  },
  gemini: {
    run_shell_command: 'shell',
    read_file: 'read',
    read_many_files: 'read',
    glob: 'read',
    search_file_content: 'read',
    grep_search: 'read',
    list_directory: 'read',
    write_file: 'write',
    replace: 'write',
    edit: 'write',
    web_fetch: 'fetch',
  },
  // OpenCode and Kilo Code share one engine (R-HOOK-14).
  opencode: OPENCODE_KINDS,
  kilo: OPENCODE_KINDS,
  copilot: {
    bash: 'shell',
    view: 'read',
    grep: 'read',
    glob: 'read',
    create: 'write',
    edit: 'write',
    web_fetch: 'fetch',
  },
  qwen: {
    run_shell_command: 'shell',
    read_file: 'read',
    read_many_files: 'read',
    glob: 'read',
    grep_search: 'read',
    list_directory: 'read',
    write_file: 'write',
    edit: 'write',
    notebook_edit: 'write',
    web_fetch: 'fetch',
  },
  // Factory Droid's built-in tools (0.225.1): `Script` runs JavaScript that calls tools, so it is `other`.
  droid: {
    Execute: 'shell',
    Read: 'read',
    LS: 'read',
    Glob: 'read',
    Grep: 'read',
    Create: 'write',
    Edit: 'write',
    MultiEdit: 'write',
    ApplyPatch: 'write',
    FetchUrl: 'fetch',
  },
  // Auggie's local tools (0.36.0). `write-process` types into a running process and `kill-process` ends one, so they
  // are `other`, as are `codebase-retrieval` (a search Augment's server runs) and `view-session` (past sessions).
  auggie: {
    'launch-process': 'shell',
    view: 'read',
    'save-file': 'write',
    'str-replace-editor': 'write',
    'remove-files': 'write',
    apply_patch: 'write',
    'web-fetch': 'fetch',
  },
  // Cline CLI's tools (3.0.65): `run_commands` runs each of its commands from the workspace root, `search_codebase`
  // searches the contents of the workspace by regex; `skills` and the team tools start work of their own, so they are `other`.
  cline: {
    run_commands: 'shell',
    read_files: 'read',
    search_codebase: 'read',
    editor: 'write',
    apply_patch: 'write',
    fetch_web_content: 'fetch',
  },
});

/**
 * The agents' bookkeeping tools (R-POL-8): they act on nothing outside the
 * agent — a to-do list, a plan, a subagent whose own tool calls pass through
 * the hook again — so `policy.agents.bookkeeping` (allow by default) decides
 * them. `NotebookRead` reads a file, so it stays a `read` judged by the paths.
 */
const BOOKKEEPING: Readonly<Record<AgentName, readonly string[]>> = Object.freeze({
  'claude-code': ['TodoWrite', 'TodoRead', 'Task', 'Agent', 'ExitPlanMode'],
  codex: ['update_plan'],
  gemini: ['write_todos'],
  // `task` starts a subagent whose own tool calls pass the plugin again (AGENT-CLIS.md).
  opencode: ['todowrite', 'todoread', 'task'],
  kilo: ['todowrite', 'todoread', 'task', 'board_read', 'board_post', 'schedule_wakeup', 'cancel_wakeup'],
  // The agent's own shells (listing them, reading their output) and its own notes; `write_bash` types into a shell and is not one.
  copilot: ['report_intent', 'update_todo', 'list_bash', 'read_bash', 'list_agents', 'read_agent', 'fetch_copilot_cli_documentation'],
  qwen: ['todo_write', 'exit_plan_mode', 'tool_search', 'get_goal', 'update_goal', 'list_agents'],
  // A subagent (`Task`) sends its own tool calls through the hook again, under its own session id (observed with 0.225.1).
  droid: ['TodoWrite', 'Task', 'TaskOutput', 'TaskStop', 'ToolSearch', 'AskUser', 'ExitSpecMode'],
  // Its task list, the output of the processes it launched, and the untruncated text of a tool result it already got.
  auggie: ['view_tasklist', 'reorganize_tasklist', 'update_tasks', 'add_tasks', 'read-process', 'list-processes', 'view-range-untruncated', 'search-untruncated'],
  // A question to the person at the terminal, and the run's final answer.
  cline: ['ask_question', 'submit_and_exit'],
});

/** Whether `toolName` is one of `agent`'s bookkeeping tools. */
export function isBookkeepingTool(agent: AgentName, toolName: string): boolean {
  return BOOKKEEPING[agent].includes(toolName);
}

/** Every agent's bookkeeping tools, for docs and `policy explain`. */
export function bookkeepingTools(agent: AgentName): readonly string[] {
  return BOOKKEEPING[agent];
}

/** The MCP server and tool of an agent's MCP tool name, or undefined when the name is not one. */
export interface McpToolRef {
  server: string;
  tool: string;
}

/** How an agent spells an MCP tool: a prefix before the server, a separator between server and tool (R-HOOK-14). */
interface McpNaming {
  prefix: string;
  separator: string;
  /** The agent's built-in tools carry no prefix either, so only a server the agent (or its plugin) reported makes a name an MCP tool. */
  needsReportedServer: boolean;
  /** The server comes last: `<tool><separator><server>` (Auggie). */
  serverLast?: true;
}

function mcpNaming(agent: AgentName): McpNaming {
  switch (agent) {
    case 'gemini':
      return { prefix: 'mcp_', separator: '_', needsReportedServer: false };
    case 'opencode':
    case 'kilo':
      return { prefix: '', separator: '_', needsReportedServer: true };
    case 'copilot':
      // Copilot's built-in tools use `_`, never `-`: a hyphen means `<server>-<tool>`.
      return { prefix: '', separator: '-', needsReportedServer: false };
    case 'droid':
      // Droid names an MCP tool `<server>___<tool>` (three underscores); its built-in tools have none.
      return { prefix: '', separator: '___', needsReportedServer: false };
    case 'cline':
      // Cline names one `<server>__<tool>` (both with [^a-zA-Z0-9._-] made `_`, cut at 180 characters); its built-in tools use single underscores.
      return { prefix: '', separator: '__', needsReportedServer: false };
    case 'auggie':
      // Auggie names one `<tool>_<server>` (both with [^A-Za-z0-9_-] made `_`, cut at 64 characters); its hook reports the server.
      return { prefix: '', separator: '_', needsReportedServer: true, serverLast: true };
    default:
      return { prefix: 'mcp__', separator: '__', needsReportedServer: false };
  }
}

/**
 * Splits an agent's MCP tool name: `mcp__<server>__<tool>` (Claude Code, Codex,
 * Qwen Code), `mcp_<server>_<tool>` (Gemini CLI), `<server>-<tool>` (Copilot
 * CLI), `<server>___<tool>` (Factory Droid), `<server>__<tool>` (Cline CLI), `<server>_<tool>` (OpenCode, Kilo: only with the server their plugin
 * reported, since built-in names have no prefix), `<tool>_<server>` (Auggie:
 * only with the server its hook reported; a name Auggie cut at 64 characters
 * is the tool as it stands). A separator may also occur
 * inside a server name, so the server the agent reported beside the name is
 * used when it fits the name; otherwise the name is split at the first separator.
 */
export function mcpToolOf(agent: AgentName, toolName: string, reportedServer?: string): McpToolRef | undefined {
  const { prefix, separator, needsReportedServer, serverLast } = mcpNaming(agent);
  if (serverLast === true) {
    if (reportedServer === undefined || reportedServer === '' || toolName === '') return undefined;
    const suffix = `${separator}${reportedServer}`;
    const tool = toolName.endsWith(suffix) && toolName.length > suffix.length ? toolName.slice(0, -suffix.length) : toolName;
    return { server: reportedServer, tool };
  }
  if (!toolName.startsWith(prefix)) return undefined;
  const rest = toolName.slice(prefix.length);
  if (needsReportedServer && (reportedServer === undefined || !rest.startsWith(`${reportedServer}${separator}`))) return undefined;
  if (reportedServer !== undefined && reportedServer !== '' && rest.startsWith(`${reportedServer}${separator}`)) {
    const tool = rest.slice(reportedServer.length + separator.length);
    if (tool !== '') return { server: reportedServer, tool };
  }
  const at = rest.indexOf(separator);
  if (at <= 0 || at + separator.length >= rest.length) return undefined;
  return { server: rest.slice(0, at), tool: rest.slice(at + separator.length) };
}

/**
 * The tool name a gateway would list for this agent tool name, when the name
 * sits under the gateway's entry: `mcp__assent__<tool>` (Claude Code, Codex),
 * `mcp_assent_<tool>` (Gemini CLI), and the server the agent reported, if it
 * reported one, is that entry. Everything after the entry's separator is the
 * tool: `mcp__assent__fs__write_file` gives `fs__write_file`, never `fs`. Only
 * a candidate: the daemon passes the call only if a live gateway lists it.
 */
export function gatewayToolCandidate(agent: AgentName, toolName: string, reportedServer?: string): string | undefined {
  if (reportedServer !== undefined && reportedServer !== '' && reportedServer !== GATEWAY_SERVER_NAME) return undefined;
  const naming = mcpNaming(agent);
  if (naming.needsReportedServer && reportedServer !== GATEWAY_SERVER_NAME) return undefined;
  if (naming.serverLast === true) {
    const suffix = `${naming.separator}${GATEWAY_SERVER_NAME}`;
    return toolName.endsWith(suffix) && toolName.length > suffix.length ? toolName.slice(0, -suffix.length) : undefined;
  }
  const prefix = `${naming.prefix}${GATEWAY_SERVER_NAME}${naming.separator}`;
  if (!toolName.startsWith(prefix) || toolName.length === prefix.length) return undefined;
  return toolName.slice(prefix.length);
}

/** The kind of an agent's tool call (R-HOOK-2); a name not listed is `other`. */
export function agentActionKind(agent: AgentName, toolName: string, reportedServer?: string): AgentActionKind {
  if (mcpToolOf(agent, toolName, reportedServer) !== undefined) return 'mcp';
  return Object.prototype.hasOwnProperty.call(KINDS[agent], toolName) ? (KINDS[agent][toolName] as AgentActionKind) : 'other';
}

/** The built-in tools of `agent` whose actions are of one of `kinds` (R-HOOK-2), by their names. */
export function agentToolsOfKinds(agent: AgentName, kinds: readonly AgentActionKind[]): string[] {
  return Object.entries(KINDS[agent])
    .filter(([, kind]) => kinds.includes(kind))
    .map(([name]) => name);
}

/** The tool id of an agent action: `<agent alias>/<tool name>` (R-HOOK-2), e.g. `claude/Bash`. */
export function agentToolId(agent: AgentName, toolName: string): string {
  return `${AGENT_ALIAS[agent]}/${toolName}`;
}

/** The agent action a hook event describes (R-HOOK-2): what the daemon decides. */
export interface AgentAction {
  agent: AgentName;
  sessionId: string;
  cwd: string;
  tool: string;
  kind: AgentActionKind;
  /** The exact `tool_input`; the approval is bound to its digest. */
  input: Record<string, unknown>;
  /** The agent's id of this tool call (Claude Code, Codex); Gemini CLI, Copilot CLI, Factory Droid and Auggie send none. */
  toolUseId?: string;
  /** For `mcp` actions: the server the agent reported beside the tool name, if any. */
  mcpServer?: string;
  /**
   * Claude Code's `permission_mode` (`default`, `acceptEdits`, `plan`, `auto`, …): whether
   * an `ask` would show its dialog (R-HOOK-9). Decides nothing else.
   */
  permissionMode?: string;
}
