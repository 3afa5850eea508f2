// The two `action` flows: non-interactive run (allow only) and the one-attempt
// terminal confirmation (SPEC §6, §7). Each returns the redacted report; the
// CLI head only prints it and maps it to an exit code.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import { parseExecPolicy, parseExecRequest } from '../core/exec/execFiles.js';
import type { ExecPolicy, ExecRequest } from '../core/exec/execFiles.js';
import { evaluateExecPolicy } from '../core/exec/execPolicy.js';
import { GrantOwner } from '../core/approval/grant.js';
import type { LaunchOutcome, RevisionBinding } from '../core/approval/grant.js';
import { newChallenge } from '../core/base/ids.js';
import type { RandomBytes } from '../core/base/ids.js';
import { renderExecPreview } from '../core/approval/preview.js';
import { describeRefusal, isInteractiveTerminal, TerminalConfirmation } from '../channels/ttyChallenge.js';
import type { SignalSource, TerminalInput, TerminalOutput } from '../channels/ttyChallenge.js';
import { effectiveExecAction } from './environment.js';
import { readLimitedFile, UNREADABLE } from './readLimitedFile.js';
import { SPAWN_FAILED, launchReport, refusalReport } from './report.js';
import type { ExecReason, ExecReport } from './report.js';
import { RevisionKeeper } from './revision.js';
import type { ReadActionFile } from './revision.js';
import { DEFAULT_EXEC_LIMITS, launchChild, superviseChild } from './runChild.js';
import type { ChildOutcome, ExecLimits, SpawnFn } from './runChild.js';

export interface ActionPaths {
  policy: string;
  request: string;
}

export interface ActionFlowDeps {
  readFile?: ReadActionFile;
  spawn?: SpawnFn;
  limits?: ExecLimits;
  random?: RandomBytes;
  /** Human diagnostics (stderr); never receives values from the action files. */
  diagnose?: (text: string) => void;
}

export interface ConfirmFlowDeps extends ActionFlowDeps {
  clock: Clock;
  input: TerminalInput;
  output: TerminalOutput;
  signals: SignalSource;
  deadlineMs?: number;
}

/** Maps a load failure to its report reason: unreadable files are unavailable, every other violation denies. */
function loadFailureReason(error: unknown): ExecReason {
  if (error instanceof AssentError && error.details?.['reason'] === UNREADABLE) return 'configuration-unavailable';
  if (error instanceof AssentError && error.type === 'invalid_input') return 'policy-deny';
  return 'preparation-failed';
}

function messageOf(error: unknown): string {
  return error instanceof AssentError ? error.message : 'The action files could not be prepared.';
}

function parseBoth(policyBytes: Uint8Array, requestBytes: Uint8Array): { policy: ExecPolicy; request: ExecRequest } {
  return { policy: parseExecPolicy(policyBytes), request: parseExecRequest(requestBytes) };
}

/** Starts the child; a synchronous spawn failure becomes a spawn-failed outcome. */
async function runLaunched(start: () => ChildProcess, limits: ExecLimits, signal: AbortSignal): Promise<ChildOutcome> {
  let child: ChildProcess;
  try {
    child = start();
  } catch {
    return { reason: 'spawn-failed', execution: { ...SPAWN_FAILED } };
  }
  return superviseChild(child, { limits, signal });
}

/** `assent action run`: allow runs at once; ask and deny are refused without any prompt. */
export async function runActionFlow(paths: ActionPaths, deps: ActionFlowDeps & { signals: SignalSource }): Promise<ExecReport> {
  const read = deps.readFile ?? readLimitedFile;
  const diagnose = deps.diagnose ?? (() => undefined);
  let parsed: { policy: ExecPolicy; request: ExecRequest };
  try {
    const policyFile = await read(paths.policy, 'policy');
    const requestFile = await read(paths.request, 'request');
    parsed = parseBoth(policyFile.bytes, requestFile.bytes);
  } catch (error) {
    diagnose(`assent: ${messageOf(error)}\n`);
    return refusalReport(loadFailureReason(error));
  }
  const decision = evaluateExecPolicy(parsed.policy, parsed.request.action);
  if (decision === 'deny') {
    diagnose('assent: the policy denies this action; nothing was started.\n');
    return refusalReport('policy-deny');
  }
  if (decision === 'ask') {
    diagnose('assent: the policy asks for a person to confirm this action; run `assent action confirm POLICY REQUEST` in a terminal.\n');
    return refusalReport('policy-ask');
  }
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) deps.signals.on(signal, onSignal);
  try {
    const action = effectiveExecAction(parsed.request.action);
    const outcome = await runLaunched(() => launchChild(action, deps.spawn), deps.limits ?? DEFAULT_EXEC_LIMITS, controller.signal);
    return launchReport(outcome.reason, outcome.execution);
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) deps.signals.off(signal, onSignal);
  }
}

/**
 * `assent action confirm`: capture the binding, evaluate, show the complete
 * preview, read one answer, re-check the files, spend the grant on one launch.
 */
export async function confirmActionFlow(paths: ActionPaths, deps: ConfirmFlowDeps): Promise<ExecReport> {
  // R-TTY-1: checked before anything else is read; nothing is written to the terminal.
  if (!isInteractiveTerminal(deps.input, deps.output)) return refusalReport('terminal-required');

  const random = deps.random ?? randomBytes;
  const terminal = new TerminalConfirmation({
    input: deps.input,
    output: deps.output,
    signals: deps.signals,
    ...(deps.deadlineMs === undefined ? {} : { deadlineMs: deps.deadlineMs }),
  });
  const owner = new GrantOwner(deps.clock);
  const keeper = new RevisionKeeper(paths, deps.readFile ?? readLimitedFile, random);
  try {
    let parsed: { policy: ExecPolicy; request: ExecRequest };
    let binding: RevisionBinding;
    try {
      const captured = await keeper.capture();
      binding = owner.bind();
      parsed = parseBoth(captured.policy.bytes, captured.request.bytes);
    } catch (error) {
      terminal.say(`assent: ${messageOf(error)}\n`);
      return refusalReport(loadFailureReason(error));
    }
    const policyDecision = evaluateExecPolicy(parsed.policy, parsed.request.action);
    if (policyDecision === 'deny') {
      terminal.say('assent: the policy denies this action; nothing was started and no confirmation is offered.\n');
      return refusalReport('policy-deny');
    }
    const action = effectiveExecAction(parsed.request.action);
    const challenge = newChallenge(random);
    const deadlineMs = deps.deadlineMs ?? 60_000;
    let preview: string;
    try {
      preview = renderExecPreview({ action, challenge, deadlineSeconds: Math.ceil(deadlineMs / 1000), policyDecision });
    } catch (error) {
      terminal.say(`assent: ${messageOf(error)}\n`);
      return refusalReport('preparation-failed');
    }

    const answer = await terminal.ask(preview, challenge);
    if (!answer.confirmed) {
      terminal.say(describeRefusal(answer.cause));
      return refusalReport(answer.reason);
    }
    const grant = owner.issue(binding);

    // R-TTY-7: the files must still hold exactly the evaluated bytes.
    const check = await keeper.verify();
    if (check !== 'unchanged') {
      owner.revokeBinding(binding);
      terminal.say(
        check === 'changed'
          ? 'assent: not run — the policy or request file changed after the preview was shown. Review it again with a new command.\n'
          : 'assent: not run — the policy or request file can no longer be read. Check the files and run the command again.\n',
      );
      return refusalReport(check === 'changed' ? 'configuration-changed' : 'configuration-unavailable');
    }
    // R-TTY-8/9: a cancel that arrived before launch prevents it.
    if (terminal.cancelled.aborted) {
      terminal.say('assent: not run — cancelled before launch.\n');
      return refusalReport('action-cancelled');
    }
    // The attempt is spent inside launchWith, before the spawn: a spawn that throws has used it.
    let attempt: LaunchOutcome<ChildProcess>;
    try {
      attempt = owner.launchWith(grant, binding, () => launchChild(action, deps.spawn));
    } catch {
      terminal.say('assent: the process could not be started; check the executable and cwd in the request.\n');
      return launchReport('spawn-failed', SPAWN_FAILED, { policyDecision });
    }
    if (!attempt.launched) {
      terminal.say('assent: not run — the confirmation expired or was revoked before launch. Run the command again.\n');
      return refusalReport('launch-failed');
    }
    const outcome = await superviseChild(attempt.value, { limits: deps.limits ?? DEFAULT_EXEC_LIMITS, signal: terminal.cancelled });
    terminal.say(`assent: finished (${outcome.reason}).\n`);
    return launchReport(outcome.reason, outcome.execution, { policyDecision });
  } finally {
    owner.close();
    terminal.close();
  }
}
