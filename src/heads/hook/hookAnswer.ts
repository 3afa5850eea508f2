// The answer a hook prints, in exactly the shape its agent reads (R-HOOK-1):
// mixing shapes makes Claude Code ignore the answer and Codex run the call
// (docs/agents-testing.md), so each agent gets its own and nothing else.
import type { AgentName } from '../../core/agentAction.js';

export type HookDecision = 'allow' | 'deny';

/** Longest reason written; a reason is one line a model and a person can read. */
const MAX_REASON_CHARS = 4000;

/** A reason as one line: line breaks and other controls become spaces, the length is bounded. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS - 1)}…` : flat;
}

/**
 * The before-tool answer. Claude Code and Codex:
 * `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":…,"permissionDecisionReason":…}}`;
 * Gemini CLI: `{"decision":…,"reason":…}`. Never `ask`, never `updatedInput`:
 * what runs is exactly what was decided (R-HOOK-2). Codex's allow is empty:
 * Codex shows a hook that answers `permissionDecision: "allow"` as failed on
 * every allowed call, and one that exits 0 with no output as completed
 * (docs/agents-testing.md); the caller exits 0 with it.
 */
export function beforeAnswer(agent: AgentName, decision: HookDecision, reason: string): string {
  const text = oneLine(reason);
  if (agent === 'gemini') return JSON.stringify({ decision, reason: text });
  if (agent === 'codex' && decision === 'allow') return '';
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: text } });
}

/** The after-tool answer: an empty object, which changes nothing the agent does (the call already ran). */
export function afterAnswer(): string {
  return '{}';
}
