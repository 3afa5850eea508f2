// The answer a hook prints, in exactly the shape its agent reads (R-HOOK-1):
// mixing shapes makes Claude Code ignore the answer and Codex run the call
// (docs/agents-testing.md), so each agent gets its own and nothing else.
import { isRewritingAgent, type AgentName, type RewritingAgent } from '../../core/agent/agentAction.js';

export type HookDecision = 'allow' | 'deny';
/** What a before-tool hook may answer: `ask` only for Claude Code with hooks.claudeNativePrompt (R-HOOK-9), which shows its own dialog then. */
export type BeforeDecision = HookDecision | 'ask';

/** Longest reason written; a reason is one line a model and a person can read. */
const MAX_REASON_CHARS = 4000;

/** A reason as one line: line breaks and other controls become spaces, the length is bounded. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS - 1)}…` : flat;
}

/**
 * How each agent that can rewrite a call is told to run the confined form
 * instead (R-SH-14), in the one form its CLI was seen to apply: a form an agent
 * ignores would run the original command, unconfined, with no error. Claude
 * Code and Codex read `updatedInput` beside an explicit allow (Codex ignores it
 * without one); Gemini CLI replaces the whole input with
 * `hookSpecificOutput.tool_input`; Copilot CLI's own hook style reads
 * `modifiedArgs`; assent's OpenCode/Kilo plugin reads its own decision
 * `confine`, which a plugin from before confinement treats as a refusal.
 * Factory Droid merges `updatedInput` into the input; it is sent without a
 * permissionDecision, since Droid's "allow" would also skip Droid's own
 * autonomy check (as an allow does, see beforeAnswer). Auggie replaces the
 * whole input with `updatedInput` (the full input is sent) beside an allow,
 * which does not lift its own tool permissions.
 */
const CONFINED_FORM: Readonly<Record<RewritingAgent, (reason: string, updatedInput: Record<string, unknown>) => unknown>> = {
  'claude-code': (reason, updatedInput) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: reason, updatedInput } }),
  codex: (reason, updatedInput) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: reason, updatedInput } }),
  gemini: (reason, updatedInput) => ({ decision: 'allow', reason, hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: updatedInput } }),
  copilot: (reason, updatedInput) => ({ permissionDecision: 'allow', permissionDecisionReason: reason, modifiedArgs: updatedInput }),
  opencode: (reason, updatedInput) => ({ decision: 'confine', reason, updatedInput }),
  kilo: (reason, updatedInput) => ({ decision: 'confine', reason, updatedInput }),
  droid: (_reason, updatedInput) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput } }),
  auggie: (reason, updatedInput) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: reason, updatedInput } }),
};

/** A shell word that is `text` exactly: single-quoted, each `'` closed, escaped and reopened. */
function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * How Cline CLI (3.0.65) is told no. Its only refusal, `{"cancel":true}`, ends
 * the whole task and the model never reads why. A `run_commands` call is
 * refused instead by replacing its input with one fixed command that prints
 * the reason on stderr and exits 126: the call's own command never runs, the
 * model reads the reason as the result, and the task goes on. Any other tool,
 * or a call whose tool is not known, is cancelled.
 */
function clineRefusal(text: string, tool: string | undefined): string {
  if (tool === 'run_commands') return JSON.stringify({ overrideInput: { commands: [`printf '%s\\n' ${singleQuoted(text)} >&2; exit 126`] } });
  return JSON.stringify({ cancel: true, errorMessage: text });
}

/**
 * Agents that are told a deny with exit 2 as well as the deny JSON (the reason
 * also on stderr). Factory Droid takes the first hook answer that carries a
 * permissionDecision, so another hook's earlier "allow" wins over assent's JSON
 * deny; an exit 2 of any hook blocks the call whatever the others said
 * (observed with Droid 0.225.1, docs/agents.md).
 */
export function deniesWithExit2(agent: AgentName): boolean {
  return agent === 'droid';
}

/**
 * Agents that show the person a hook's stderr, not the JSON reason, when it
 * blocks a call: Auggie prints "Blocked by hook" unless the hook wrote to
 * stderr (its model reads the JSON reason either way; observed with 0.36.0).
 */
export function deniesWithStderr(agent: AgentName): boolean {
  return agent === 'auggie';
}

/**
 * The before-tool answer. Claude Code, Codex, Qwen Code, Factory Droid and Auggie:
 * `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":…,"permissionDecisionReason":…}}`;
 * Gemini CLI and assent's OpenCode/Kilo plugin: `{"decision":…,"reason":…}`;
 * Cline CLI: `{}` to run, `{"cancel":true,"errorMessage":…}` to refuse (it ends the task);
 * Copilot CLI: `{"permissionDecision":…,"permissionDecisionReason":…}` (its
 * own hook style reads no `hookSpecificOutput`). Codex and Factory Droid get
 * an allow as empty output: Codex shows a JSON allow as a failed hook, and
 * Droid's "allow" would skip its own autonomy check (a read-only `droid exec`
 * would then run a command it refuses). `updatedInput` only for a
 * confined allow (R-SH-14), and only to an agent that can rewrite (CONFINED_FORM):
 * the input with its command wrapped in `assent confine`, which is what was decided; otherwise what runs is
 * exactly what was asked (R-HOOK-2). `ask` is Claude Code's alone (R-HOOK-9);
 * asked of another agent's answer it is a deny, which fails closed — as is a
 * confined allow for an agent that cannot rewrite.
 */
export function beforeAnswer(agent: AgentName, asked: BeforeDecision, reason: string, updatedInput?: Record<string, unknown>, tool?: string): string {
  const text = oneLine(reason);
  if (updatedInput !== undefined && asked === 'allow' && isRewritingAgent(agent)) return JSON.stringify(CONFINED_FORM[agent](text, updatedInput));
  const decision: BeforeDecision = (asked === 'ask' && agent !== 'claude-code') || updatedInput !== undefined ? 'deny' : asked;
  switch (agent) {
    case 'gemini':
    case 'opencode':
    case 'kilo':
      return JSON.stringify({ decision, reason: text });
    case 'cline':
      return decision === 'allow' ? '{}' : clineRefusal(text, tool);
    case 'codex':
    case 'droid':
      if (decision === 'allow') return '';
      return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: text } });
    case 'copilot':
      return JSON.stringify({ permissionDecision: decision, permissionDecisionReason: text });
    default:
      return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: text } });
  }
}

/**
 * The answer to Claude Code's PermissionRequest (R-HOOK-9), which closes its
 * dialog: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":…,"message"?:…}}}`.
 * Never `updatedInput` or `updatedPermissions`: an allow lets this one call run as shown.
 */
export function dialogAnswer(decision: HookDecision, reason: string): string {
  const behavior = decision === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: oneLine(reason) };
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: behavior } });
}

/** The after-tool answer: an empty object, which changes nothing the agent does (the call already ran). */
export function afterAnswer(): string {
  return '{}';
}
