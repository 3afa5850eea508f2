// The agent hook's one hard deadline (R-HOOK-11): how much of the agent's own
// hook timeout assent's hook may use, and how long a timeout `install` must
// write so that a person still gets the whole of hooks.timeoutSeconds.

/** The least time left between the hook's answer and the agent's own timeout. */
export const HOOK_MIN_MARGIN_SECONDS = 3;
/** The share of the agent's timeout kept as margin when that is more than the minimum. */
export const HOOK_MARGIN_FRACTION = 0.1;
/**
 * What the hook may spend before a waiting approval is even filed: one auto-spawn
 * of the daemon (its spawn lock and its wait to answer, R-D-1) and the hello.
 */
export const HOOK_SPAWN_ALLOWANCE_SECONDS = 12;
/** The longest agent timeout the hook's command line takes (a day; agents cap theirs far below). */
export const MAX_AGENT_TIMEOUT_SECONDS = 86_400;

/** Seconds kept between the hook's deadline and an agent timeout of `agentTimeoutSeconds`: 3 s or 10 %, whichever is more. */
export function hookMarginSeconds(agentTimeoutSeconds: number): number {
  return Math.max(HOOK_MIN_MARGIN_SECONDS, agentTimeoutSeconds * HOOK_MARGIN_FRACTION);
}

/** Milliseconds after its start at which the hook answers deny, whatever is pending, for an agent that waits `agentTimeoutSeconds`. */
export function hookDeadlineMs(agentTimeoutSeconds: number): number {
  return Math.max(0, Math.round((agentTimeoutSeconds - hookMarginSeconds(agentTimeoutSeconds)) * 1000));
}

/** Seconds the hook needs before its deadline: a spawn and hello, then the whole approval window. */
export function hookNeedsSeconds(hookTimeoutSeconds: number): number {
  return hookTimeoutSeconds + HOOK_SPAWN_ALLOWANCE_SECONDS;
}

/** Whether an agent timeout leaves the margin over what the hook needs (doctor's check, R-HOOK-11). */
export function agentTimeoutSuffices(agentTimeoutSeconds: number, hookTimeoutSeconds: number): boolean {
  return hookDeadlineMs(agentTimeoutSeconds) >= hookNeedsSeconds(hookTimeoutSeconds) * 1000;
}

/** The shortest whole-second agent timeout `install` writes: the hook's needs plus the margin. */
export function requiredAgentTimeoutSeconds(hookTimeoutSeconds: number): number {
  const needs = hookNeedsSeconds(hookTimeoutSeconds);
  let seconds = Math.ceil(Math.max(needs + HOOK_MIN_MARGIN_SECONDS, needs / (1 - HOOK_MARGIN_FRACTION)));
  while (!agentTimeoutSuffices(seconds, hookTimeoutSeconds)) seconds += 1;
  return seconds;
}

/**
 * Each agent's own hook timeout when its settings name none (AGENT-CLIS.md):
 * the deadline of a hook whose command line carries no `--timeout` (written by
 * an older `install`; doctor asks for a new install).
 */
export const AGENT_DEFAULT_TIMEOUT_SECONDS: Readonly<Record<'claude-code' | 'codex' | 'gemini' | 'opencode' | 'kilo' | 'copilot' | 'qwen' | 'droid' | 'auggie' | 'cline', number>> = Object.freeze({
  'claude-code': 600,
  codex: 600,
  gemini: 60,
  // OpenCode and Kilo have no hook timeout at all; assent's plugin always passes --timeout, and this bounds any other caller.
  opencode: 600,
  kilo: 600,
  copilot: 30,
  qwen: 60,
  droid: 60,
  auggie: 60,
  // Cline runs assent's plugin in-process and waits for it without a timeout; the plugin always passes --timeout.
  cline: 600,
});
