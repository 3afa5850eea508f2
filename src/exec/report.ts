// The one JSON report of an `action` command (R-EXEC-4..6). It carries states,
// counts and stable reasons only: never paths, args, env values, output,
// grants or digests, so it is safe to hand back to the agent that asked.

/** Stable reason strings (R-EXEC-5). */
export const EXEC_REASONS = [
  'policy-deny',
  'policy-ask',
  'configuration-changed',
  'configuration-unavailable',
  'action-cancelled',
  'terminal-required',
  'confirmation-denied',
  'confirmation-unavailable',
  'preparation-failed',
  'launch-failed',
  'spawn-failed',
  'child-exited',
  'runtime-timeout',
  'output-limit',
  'child-error',
] as const;

export type ExecReason = (typeof EXEC_REASONS)[number];

export type ExecState = 'not-started' | 'exited' | 'interrupted' | 'spawn-failed' | 'unknown';
export type Termination = 'not-requested' | 'confirmed' | 'unconfirmed';

export interface ExecutionSummary {
  state: ExecState;
  exitCode: number | null;
  termination: Termination;
  stdoutBytes: number;
  stderrBytes: number;
  outputComplete: boolean;
}

/** The execution of a child that never started: the spawn itself failed. */
export const SPAWN_FAILED: ExecutionSummary = Object.freeze({
  state: 'spawn-failed',
  exitCode: null,
  termination: 'not-requested',
  stdoutBytes: 0,
  stderrBytes: 0,
  outputComplete: false,
});

export interface ExecReport {
  schemaVersion: 1;
  mode: 'action-exec';
  decision: 'allow' | 'deny';
  reason: ExecReason;
  execution: ExecutionSummary;
  control: 'direct-child-only';
  descendantControl: 'unsupported';
  authorization?: 'operator-confirmed';
  policyDecision?: 'ask' | 'allow';
}

export const NOT_STARTED: Readonly<ExecutionSummary> = Object.freeze({
  state: 'not-started',
  exitCode: null,
  termination: 'not-requested',
  stdoutBytes: 0,
  stderrBytes: 0,
  outputComplete: false,
});

/** A refusal: nothing ran. */
export function refusalReport(reason: ExecReason): ExecReport {
  return {
    schemaVersion: 1,
    mode: 'action-exec',
    decision: 'deny',
    reason,
    execution: { ...NOT_STARTED },
    control: 'direct-child-only',
    descendantControl: 'unsupported',
  };
}

/** A launch happened (or was attempted): the outcome of the child decides the reason. */
export function launchReport(
  reason: ExecReason,
  execution: ExecutionSummary,
  confirmation?: { policyDecision: 'ask' | 'allow' },
): ExecReport {
  const report: ExecReport = {
    schemaVersion: 1,
    mode: 'action-exec',
    decision: 'allow',
    reason,
    execution: { ...execution },
    control: 'direct-child-only',
    descendantControl: 'unsupported',
  };
  if (confirmation) {
    report.authorization = 'operator-confirmed';
    report.policyDecision = confirmation.policyDecision;
  }
  return report;
}

/** R-EXEC-6: 0 only for an allowed child that exited 0 with its whole output read; 2 otherwise. */
export function exitCodeForReport(report: ExecReport): number {
  const e = report.execution;
  return report.decision === 'allow' && e.state === 'exited' && e.exitCode === 0 && e.outputComplete ? 0 : 2;
}

/** The stdout line for a bad command line (exit 1). */
export const BAD_ARGUMENTS_LINE = `${JSON.stringify({ error: 'expected-action-exec-arguments' })}\n`;
