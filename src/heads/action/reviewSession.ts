// The review broker's confirmation state for one connection (SPEC §6, §7): the
// revision binding is captured once when the broker starts; every call borrows
// it for a fresh terminal confirmation without recapturing, and the first
// change or read failure revokes it for the rest of the connection.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import type { Clock } from '../../core/base/clock.js';
import { AssentError } from '../../core/base/errors.js';
import type { ExecAction } from '../../core/exec/action.js';
import { parseExecPolicy, parseExecRequest } from '../../core/exec/execFiles.js';
import { evaluateExecPolicy } from '../../core/exec/execPolicy.js';
import { GrantOwner } from '../../core/approval/grant.js';
import type { Grant, LaunchOutcome, RevisionBinding } from '../../core/approval/grant.js';
import { newChallenge } from '../../core/base/ids.js';
import type { RandomBytes } from '../../core/base/ids.js';
import { renderExecPreview } from '../../core/approval/preview.js';
import { CONFIRM_DEADLINE_MS, describeRefusal, TerminalConfirmation } from '../../channels/ttyChallenge.js';
import type { SignalSource, TerminalInput, TerminalOutput } from '../../channels/ttyChallenge.js';
import { effectiveExecAction } from '../../exec/environment.js';
import { readLimitedFile, UNREADABLE } from '../../exec/readLimitedFile.js';
import { SPAWN_FAILED, launchReport, refusalReport } from '../../exec/report.js';
import type { ExecReason, ExecReport } from '../../exec/report.js';
import { RevisionKeeper } from '../../exec/revision.js';
import type { ReadActionFile } from '../../exec/revision.js';
import { DEFAULT_EXEC_LIMITS, launchChild, superviseChild } from '../../exec/runChild.js';
import type { ExecLimits, SpawnFn } from '../../exec/runChild.js';

export interface ReviewSessionOptions {
  paths: { policy: string; request: string };
  clock: Clock;
  input: TerminalInput;
  output: TerminalOutput;
  /** Signals for the open confirmation; the broker feeds it (process signals and its own shutdown). */
  signals: SignalSource;
  deadlineMs?: number;
  readFile?: ReadActionFile;
  spawn?: SpawnFn;
  limits?: ExecLimits;
  random?: RandomBytes;
  /** Called when the terminal input ends (Ctrl+D, hang-up) while no prompt is open. */
  onInputEnded?: () => void;
}

const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** A per-call signal source; TerminalConfirmation listens to it while the call is open. */
class CallSignals extends EventEmitter implements SignalSource {
  override on(signal: NodeJS.Signals, listener: () => void): this {
    return super.on(signal, listener);
  }
  override off(signal: NodeJS.Signals, listener: () => void): this {
    return super.off(signal, listener);
  }
}

function loadFailureReason(error: unknown): ExecReason {
  if (error instanceof AssentError && error.details?.['reason'] === UNREADABLE) return 'configuration-unavailable';
  if (error instanceof AssentError && error.type === 'invalid_input') return 'policy-deny';
  return 'preparation-failed';
}

export class ReviewSession {
  private readonly owner: GrantOwner;
  private readonly keeper: RevisionKeeper;
  private readonly random: RandomBytes;
  private binding: RevisionBinding | undefined;
  private revokedReason: ExecReason | undefined;
  private policyDecision: 'allow' | 'ask' | 'deny' = 'deny';
  private action: ExecAction | undefined;
  private callCount = 0;
  private idle = false;
  private closed = false;
  private readonly discard = (): void => undefined;
  private readonly onIdleEnd = (): void => this.options.onInputEnded?.();

  constructor(private readonly options: ReviewSessionOptions) {
    this.random = options.random ?? randomBytes;
    this.owner = new GrantOwner(options.clock);
    this.keeper = new RevisionKeeper(options.paths, options.readFile ?? readLimitedFile, this.random);
  }

  /** Calls answered so far (confirmed or not). */
  get calls(): number {
    return this.callCount;
  }

  get decision(): 'allow' | 'ask' | 'deny' {
    return this.policyDecision;
  }

  /**
   * Between prompts the terminal stays in normal mode and what is typed is
   * read and dropped, so an answer typed for a withdrawn or finished prompt
   * can never be taken as the start of the next one.
   */
  private setIdle(on: boolean): void {
    if (on === this.idle || (on && this.closed)) return;
    this.idle = on;
    const { input } = this.options;
    if (on) {
      input.on('data', this.discard);
      input.on('end', this.onIdleEnd);
      input.resume();
    } else {
      input.off('data', this.discard);
      input.off('end', this.onIdleEnd);
      input.pause();
    }
  }

  private say(text: string): void {
    try {
      this.options.output.write(text);
    } catch {
      // The terminal is gone; the next confirmation refuses on its own.
    }
  }

  /**
   * Captures the binding and evaluates the policy once (R-TTY-2). Returns a
   * refusal report when the files cannot be used at all, undefined when ready.
   */
  async open(): Promise<ExecReport | undefined> {
    try {
      const captured = await this.keeper.capture();
      this.binding = this.owner.bind();
      const policy = parseExecPolicy(captured.policy.bytes);
      const request = parseExecRequest(captured.request.bytes);
      this.policyDecision = evaluateExecPolicy(policy, request.action);
      this.action = effectiveExecAction(request.action);
      this.setIdle(true);
      return undefined;
    } catch (error) {
      this.say(`assent: ${error instanceof AssentError ? error.message : 'The action files could not be prepared.'}\n`);
      if (this.binding) this.owner.revokeBinding(this.binding);
      return refusalReport(loadFailureReason(error));
    }
  }

  private revoke(reason: 'configuration-changed' | 'configuration-unavailable'): ExecReport {
    if (this.binding) this.owner.revokeBinding(this.binding);
    this.revokedReason = reason;
    this.say(
      reason === 'configuration-changed'
        ? 'assent: the policy or request file changed after the broker started; nothing more runs on this connection. Start a new review to continue.\n'
        : 'assent: the policy or request file can no longer be read; nothing more runs on this connection. Check the files and start a new review.\n',
    );
    return refusalReport(reason);
  }

  /** Is the captured revision still live and still on disk? */
  private async bindingStillHolds(): Promise<ExecReport | undefined> {
    if (this.revokedReason !== undefined) return refusalReport(this.revokedReason);
    if (!this.binding || !this.owner.isLive(this.binding)) return refusalReport('configuration-changed');
    const check = await this.keeper.verify();
    if (check === 'changed') return this.revoke('configuration-changed');
    if (check === 'unavailable') return this.revoke('configuration-unavailable');
    return undefined;
  }

  /**
   * One `execute_selected` call: deny answers at once; allow and ask need
   * `RUN <challenge>` typed here. `cancelled` (the client withdrew the call)
   * refuses before launch and stops the child after it, like a terminal cancel.
   */
  async confirmCall(cancelled?: AbortSignal): Promise<ExecReport> {
    this.callCount += 1;
    const callNumber = this.callCount;
    if (cancelled?.aborted) {
      this.say(`assent: call ${callNumber} was withdrawn by the client before it was shown; nothing was started.\n`);
      return refusalReport('action-cancelled');
    }
    const stale = await this.bindingStillHolds();
    if (stale) return stale;
    const binding = this.binding as RevisionBinding;
    const action = this.action as ExecAction;
    if (this.policyDecision === 'deny') {
      this.say(`assent: call ${callNumber} refused — the policy denies this action; nothing was started and no confirmation is offered.\n`);
      return refusalReport('policy-deny');
    }
    const policyDecision = this.policyDecision;
    const deadlineMs = this.options.deadlineMs ?? CONFIRM_DEADLINE_MS;
    const challenge = newChallenge(this.random);
    let preview: string;
    try {
      preview = renderExecPreview({ action, challenge, deadlineSeconds: Math.ceil(deadlineMs / 1000), policyDecision });
    } catch (error) {
      this.say(`assent: ${error instanceof AssentError ? error.message : 'The preview could not be prepared.'}\n`);
      return refusalReport('preparation-failed');
    }
    // The open confirmation hears the broker's signals and the client's cancel as one source.
    const callSignals = new CallSignals();
    const forward = (): void => void callSignals.emit('SIGTERM');
    for (const signal of FORWARDED_SIGNALS) this.options.signals.on(signal, forward);
    const onClientCancel = (): void => {
      this.say(`\nassent: the client withdrew call ${callNumber}.\n`);
      forward();
    };
    cancelled?.addEventListener('abort', onClientCancel);
    this.setIdle(false);
    const terminal = new TerminalConfirmation({
      input: this.options.input,
      output: this.options.output,
      signals: callSignals,
      deadlineMs,
    });
    let grant: Grant | undefined;
    try {
      terminal.say(`\nassent: the connected MCP client called execute_selected (call ${callNumber}).`);
      const answer = await terminal.ask(preview, challenge);
      if (!answer.confirmed) {
        terminal.say(describeRefusal(answer.cause).replace('Run the command again to get a fresh challenge.', 'The client may call again for a fresh challenge.'));
        return refusalReport(answer.reason);
      }
      grant = this.owner.issue(binding);
      // R-TTY-7: the files must still hold exactly the bytes captured for this connection.
      const changed = await this.bindingStillHolds();
      if (changed) return changed;
      if (terminal.cancelled.aborted) {
        terminal.say('assent: not run — cancelled before launch.\n');
        return refusalReport('action-cancelled');
      }
      let attempt: LaunchOutcome<ChildProcess>;
      try {
        attempt = this.owner.launchWith(grant, binding, () => launchChild(action, this.options.spawn));
      } catch {
        terminal.say('assent: the process could not be started; check the executable and cwd in the request.\n');
        return launchReport('spawn-failed', { ...SPAWN_FAILED }, { policyDecision });
      }
      if (!attempt.launched) {
        terminal.say('assent: not run — the confirmation expired or was revoked before launch. The client may call again.\n');
        return refusalReport('launch-failed');
      }
      const outcome = await superviseChild(attempt.value, { limits: this.options.limits ?? DEFAULT_EXEC_LIMITS, signal: terminal.cancelled });
      terminal.say(`assent: call ${callNumber} finished (${outcome.reason}).\n`);
      return launchReport(outcome.reason, outcome.execution, { policyDecision });
    } finally {
      if (grant) this.owner.revoke(grant);
      terminal.close();
      this.setIdle(true);
      cancelled?.removeEventListener('abort', onClientCancel);
      for (const signal of FORWARDED_SIGNALS) this.options.signals.off(signal, forward);
    }
  }

  /** Revokes the binding and every grant: nothing authorizes a launch after the broker ends. */
  close(): void {
    this.setIdle(false);
    this.closed = true;
    this.owner.close();
  }
}
