// Reading one hook event (R-HOOK-1, R-HOOK-2): the JSON an agent writes to its
// hook's stdin becomes an agent action (before a call) or an action end (after
// it). Anything unexpected is a refusal with a reason; nothing here decides policy.
import { agentActionKind, type AgentAction, type AgentName } from '../../core/agent/agentAction.js';

/** The largest event read (R-HOOK-1). */
export const MAX_EVENT_BYTES = 1_048_576;

export type HookMode = 'before' | 'after';

/**
 * The event names each agent sends its before-tool and after-tool hooks.
 * OpenCode's and Kilo's are the plugin hook names assent's plugin file sends;
 * Copilot CLI's events carry no name, so the hook's mode names them.
 */
export const HOOK_EVENTS: Readonly<Record<AgentName, { before: readonly string[]; after: readonly string[] }>> = Object.freeze({
  'claude-code': { before: ['PreToolUse'], after: ['PostToolUse', 'PostToolUseFailure'] },
  codex: { before: ['PreToolUse'], after: ['PostToolUse'] },
  gemini: { before: ['BeforeTool'], after: ['AfterTool'] },
  opencode: { before: ['tool.execute.before'], after: ['tool.execute.after'] },
  kilo: { before: ['tool.execute.before'], after: ['tool.execute.after'] },
  copilot: { before: ['preToolUse'], after: ['postToolUse'] },
  qwen: { before: ['PreToolUse'], after: ['PostToolUse', 'PostToolUseFailure'] },
  droid: { before: ['PreToolUse'], after: ['PostToolUse'] },
  auggie: { before: ['PreToolUse'], after: ['PostToolUse'] },
  cline: { before: ['PreToolUse'], after: ['PostToolUse'] },
});

/**
 * Copilot CLI's own hook input (`{sessionId, timestamp, cwd, toolName,
 * toolArgs, toolResult?}`, AGENT-CLIS.md) in the field names the other agents
 * use. Anything but that shape is left as it is, and refused further on.
 */
export function copilotEventFields(value: Record<string, unknown>, mode: HookMode): Record<string, unknown> {
  if ('hook_event_name' in value || 'tool_name' in value) return value;
  let input = value['toolArgs'];
  // Some Copilot versions send the arguments as a JSON string; one that does not parse stays a string and is refused.
  if (typeof input === 'string') {
    try {
      input = JSON.parse(input) as unknown;
    } catch {
      // Refused below: tool_input is not an object.
    }
  }
  const fields: Record<string, unknown> = { hook_event_name: HOOK_EVENTS.copilot[mode][0], session_id: value['sessionId'], cwd: value['cwd'], tool_name: value['toolName'], tool_input: input };
  if (value['toolResult'] !== undefined) fields['tool_response'] = value['toolResult'];
  return fields;
}

/**
 * Auggie's hook input (0.36.0: `{hook_event_name, conversation_id,
 * workspace_roots, tool_name, tool_input, tool_output, tool_error,
 * is_mcp_tool, mcp_metadata?}`, docs/agents.md) in the field names the other
 * agents use: the conversation is the session; the cwd is the workspace root
 * (where Auggie resolves the tools' relative paths), and for `launch-process`
 * the `cwd` of its input resolved against that root, where the command runs;
 * `mcp_metadata.mcpExecutedToolServerName` (sent with the group's
 * `includeMCPMetadata`) is the MCP server; `tool_error` a failure.
 */
export function auggieEventFields(value: Record<string, unknown>): Record<string, unknown> {
  if (!('conversation_id' in value) || 'session_id' in value) return value;
  const fields: Record<string, unknown> = { ...value, session_id: value['conversation_id'] };
  const roots = value['workspace_roots'];
  const root = Array.isArray(roots) && typeof roots[0] === 'string' ? roots[0] : undefined;
  const input = value['tool_input'];
  const runsIn = value['tool_name'] === 'launch-process' && isObject(input) && typeof input['cwd'] === 'string' && input['cwd'] !== '' ? input['cwd'] : undefined;
  // Refused below unless absolute: a relative root would make the paths of the call mean other files.
  // Joined, not normalized (the hook loads no path module, R-HOOK-8): the daemon resolves the call's paths against it.
  if (root !== undefined) fields['cwd'] = runsIn === undefined || !root.startsWith('/') ? root : runsIn.startsWith('/') ? runsIn : `${root.replace(/\/+$/, '')}/${runsIn}`;
  const metadata = value['mcp_metadata'];
  if (value['is_mcp_tool'] === true && isObject(metadata) && typeof metadata['mcpExecutedToolServerName'] === 'string') fields['mcp_server'] = { name: metadata['mcpExecutedToolServerName'] };
  if (value['hook_event_name'] === 'PostToolUse') {
    const error = value['tool_error'];
    fields['tool_response'] = error === undefined || error === null || error === '' ? { output: value['tool_output'] } : { error };
  }
  return fields;
}

/**
 * Cline CLI's hook input (3.0.65: `{taskId, workspaceRoots, hookName,
 * tool_call: {id, name, input}}` before a call, `{…, hookName: "tool_result",
 * tool_result: {id, name, input, output, error?}}` after it) in the field
 * names the other agents use: the task is the session, the first workspace
 * root the cwd (run_commands runs there, and paths are resolved against it).
 * Any other `hookName` gets no event name and is refused further on.
 */
export function clineEventFields(value: Record<string, unknown>): Record<string, unknown> {
  if ('hook_event_name' in value) return value;
  const after = value['hookName'] === 'tool_result';
  const call = value[after ? 'tool_result' : 'tool_call'];
  const fields: Record<string, unknown> = { session_id: value['taskId'] };
  if (value['hookName'] === 'tool_call' || after) fields['hook_event_name'] = after ? 'PostToolUse' : 'PreToolUse';
  const roots = value['workspaceRoots'];
  if (Array.isArray(roots) && roots.length > 0) fields['cwd'] = roots[0];
  if (isObject(call)) {
    fields['tool_name'] = call['name'];
    fields['tool_input'] = call['input'];
    if (call['id'] !== undefined) fields['tool_use_id'] = call['id'];
    if (after) fields['tool_response'] = { error: call['error'] ?? null };
  }
  return fields;
}

/** The end of a call, from an after-event (R-HOOK-6). */
export interface AgentActionEndEvent {
  agent: AgentName;
  sessionId: string;
  tool: string;
  input: Record<string, unknown>;
  toolUseId?: string;
  mcpServer?: string;
  outcome: 'ok' | 'error';
  durationMs?: number;
}

/**
 * Claude Code's PermissionRequest event, sent as its own permission dialog opens
 * (R-HOOK-9): the call it asks about, without a tool-use id. The before-tool
 * hook command handles it too, so one installed command serves both.
 */
export const DIALOG_EVENTS: Readonly<Partial<Record<AgentName, string>>> = Object.freeze({ 'claude-code': 'PermissionRequest' });

/** The call an agent's own dialog asks about. */
export interface DialogEvent {
  agent: AgentName;
  sessionId: string;
  tool: string;
  input: Record<string, unknown>;
}

export type ParsedEvent =
  | { ok: true; mode: 'before'; event: string; action: AgentAction }
  | { ok: true; mode: 'dialog'; event: string; dialog: DialogEvent }
  | { ok: true; mode: 'after'; event: string; end: AgentActionEndEvent }
  | { ok: false; problem: string; event?: string; tool?: string };

const MAX_ID_CHARS = 200;
/** The longest cwd accepted: PATH_MAX on Linux. */
export const MAX_CWD_CHARS = 4096;

/** A working directory the daemon can resolve the call's paths against: absolute (POSIX), no NUL, bounded. */
function isAbsoluteCwd(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('/') && value.length <= MAX_CWD_CHARS && !value.includes('\u0000');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shortString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS ? value : undefined;
}

/**
 * The MCP server the agent names beside an MCP tool: Claude Code's (and assent's
 * OpenCode plugin's) `mcp_server.name`, Gemini CLI's `mcp_context.server_name`.
 */
function reportedMcpServer(event: Record<string, unknown>): string | undefined {
  const claude = event['mcp_server'];
  if (isObject(claude)) return shortString(claude['name']);
  const gemini = event['mcp_context'];
  if (isObject(gemini)) return shortString(gemini['server_name']);
  return undefined;
}

/**
 * Whether the agent says the tool failed. Only explicit signs count: a
 * failure event, an error flag or field in `tool_response`, an interrupted run.
 * Anything else is `ok`; a shell command's exit code is not in every event.
 */
export function outcomeOf(eventName: string, response: unknown): 'ok' | 'error' {
  if (eventName === 'PostToolUseFailure') return 'error';
  if (!isObject(response)) return 'ok';
  if (response['is_error'] === true || response['isError'] === true || response['interrupted'] === true || response['success'] === false) return 'error';
  // Copilot CLI: `toolResult.resultType` is "success" for a call that worked.
  if (typeof response['resultType'] === 'string' && response['resultType'] !== 'success') return 'error';
  const error = response['error'];
  return error !== undefined && error !== null && error !== false && error !== '' ? 'error' : 'ok';
}

/**
 * Parses one event for `agent` in `mode`. `fallbackCwd` stands in when the
 * agent sends no `cwd` (the hook runs in the agent's working directory); a
 * `cwd` that is there must be an absolute path.
 */
export function parseHookEvent(agent: AgentName, mode: HookMode, text: string, fallbackCwd: string): ParsedEvent {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, problem: text.trim() === '' ? 'the hook event on stdin was empty' : 'the hook event on stdin is not valid JSON' };
  }
  if (!isObject(raw)) return { ok: false, problem: 'the hook event on stdin is not a JSON object' };
  const value = agent === 'copilot' ? copilotEventFields(raw, mode) : agent === 'auggie' ? auggieEventFields(raw) : agent === 'cline' ? clineEventFields(raw) : raw;
  const eventName = typeof value['hook_event_name'] === 'string' ? value['hook_event_name'] : undefined;
  const tool = shortString(value['tool_name']);
  const known = HOOK_EVENTS[agent];
  const failed = (problem: string): ParsedEvent => {
    const result: ParsedEvent = { ok: false, problem };
    if (eventName !== undefined) result.event = eventName;
    if (tool !== undefined) result.tool = tool;
    return result;
  };
  if (eventName === undefined) return failed('the hook event has no hook_event_name');
  const dialog = mode === 'before' && DIALOG_EVENTS[agent] === eventName;
  if (!known[mode].includes(eventName) && !dialog) {
    const expected = known[mode].join(' or ');
    return failed(
      `the hook event ${JSON.stringify(eventName.slice(0, 60))} is not one this hook handles (assent hook ${agent}${mode === 'after' ? ' --after' : ''} expects ${expected})`,
    );
  }
  if (tool === undefined) return failed(`the ${eventName} event has no tool_name (or one longer than ${MAX_ID_CHARS} characters)`);
  const sessionId = shortString(value['session_id']);
  if (sessionId === undefined) return failed(`the ${eventName} event has no session_id (or one longer than ${MAX_ID_CHARS} characters)`);
  const input = value['tool_input'];
  if (input === undefined) return failed(`the ${eventName} event has no tool_input`);
  if (!isObject(input)) return failed(`the ${eventName} event's tool_input is not a JSON object`);
  const toolUseId = value['tool_use_id'] === undefined ? undefined : shortString(value['tool_use_id']);
  if (value['tool_use_id'] !== undefined && toolUseId === undefined) return failed(`the ${eventName} event's tool_use_id is not a string of 1 to ${MAX_ID_CHARS} characters`);
  const mcpServer = reportedMcpServer(value);
  if (dialog) return { ok: true, mode: 'dialog', event: eventName, dialog: { agent, sessionId, tool, input } };
  if (mode === 'before') {
    // Paths in the call are resolved against cwd: a relative, empty or odd one could make them mean another file.
    const rawCwd = value['cwd'];
    if (rawCwd !== undefined && !isAbsoluteCwd(rawCwd)) {
      return failed(`the ${eventName} event's cwd is not an absolute path (a string starting with "/", no NUL, at most ${MAX_CWD_CHARS} characters)`);
    }
    const cwd = typeof rawCwd === 'string' ? rawCwd : fallbackCwd;
    const action: AgentAction = { agent, sessionId, cwd, tool, kind: agentActionKind(agent, tool, mcpServer), input };
    if (toolUseId !== undefined) action.toolUseId = toolUseId;
    if (mcpServer !== undefined) action.mcpServer = mcpServer;
    // Only Claude Code's: whether its dialog would show for an `ask` (R-HOOK-9).
    const permissionMode = agent === 'claude-code' ? shortString(value['permission_mode']) : undefined;
    if (permissionMode !== undefined && permissionMode.length <= 40) action.permissionMode = permissionMode;
    return { ok: true, mode, event: eventName, action };
  }
  const end: AgentActionEndEvent = { agent, sessionId, tool, input, outcome: outcomeOf(eventName, value['tool_response']) };
  if (toolUseId !== undefined) end.toolUseId = toolUseId;
  if (mcpServer !== undefined) end.mcpServer = mcpServer;
  const duration = value['duration_ms'];
  if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0 && duration <= 86_400_000) end.durationMs = Math.round(duration);
  return { ok: true, mode, event: eventName, end };
}
