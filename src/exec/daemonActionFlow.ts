// `assent action run --via-daemon` (SPEC §6, R-J-3, R-J-7): an `ask` action is
// filed with the daemon and waits for any human channel; the approval comes
// back as a proof that is consumed (intent recorded durably) right before the
// spawn, and the outcome is recorded after. A proof exported by
// `assent approve ID --export-proof` can be presented instead of waiting.
import { hash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { AssentError } from '../core/base/errors.js';
import type { ExecAction } from '../core/exec/action.js';
import { parseExecPolicy, parseExecRequest } from '../core/exec/execFiles.js';
import { evaluateExecPolicy } from '../core/exec/execPolicy.js';
import type { SignalSource } from '../channels/ttyChallenge.js';
import { effectiveExecAction } from './environment.js';
import { readLimitedFile, UNREADABLE } from './readLimitedFile.js';
import { SPAWN_FAILED, launchReport, refusalReport } from './report.js';
import type { ExecReason, ExecReport } from './report.js';
import type { ReadActionFile } from './revision.js';
import { DEFAULT_EXEC_LIMITS, launchChild, superviseChild } from './runChild.js';
import type { ChildOutcome, ExecLimits, SpawnFn } from './runChild.js';
import { runActionFlow } from './actionFlow.js';
import type { ActionPaths } from './actionFlow.js';

/** The part of a daemon connection this flow uses. */
export interface DaemonCaller {
  call<T>(method: string, params?: unknown, options?: { signal?: AbortSignal }): Promise<T>;
  close(): void;
}

export interface DaemonActionDeps {
  connect: () => Promise<DaemonCaller>;
  signals: SignalSource;
  /** A proof read from stdin or a file; when absent the flow files an approval and waits. */
  proof?: string;
  readFile?: ReadActionFile;
  spawn?: SpawnFn;
  limits?: ExecLimits;
  now?: () => number;
  diagnose?: (text: string) => void;
}

interface Prepared {
  action: ExecAction;
  revision: string;
  decision: 'allow' | 'ask' | 'deny';
}

interface ConsumeResult {
  outcome: 'consumed' | 'replay';
  approvalId: string;
  effect: { id: string; state: string };
}

/**
 * Reads both files and derives what the proof binds: the effective action
 * (defaults included, exactly what would be spawned) and the policy revision
 * (digest of the policy file's bytes).
 */
async function prepare(paths: ActionPaths, read: ReadActionFile): Promise<Prepared> {
  const policyFile = await read(paths.policy, 'policy');
  const requestFile = await read(paths.request, 'request');
  const policy = parseExecPolicy(policyFile.bytes);
  const request = parseExecRequest(requestFile.bytes);
  return {
    action: effectiveExecAction(request.action),
    revision: `v1:sha256:${hash('sha256', policyFile.bytes, 'hex')}`,
    decision: evaluateExecPolicy(policy, request.action),
  };
}

function loadFailureReason(error: unknown): ExecReason {
  if (error instanceof AssentError && error.details?.['reason'] === UNREADABLE) return 'configuration-unavailable';
  if (error instanceof AssentError && error.type === 'invalid_input') return 'policy-deny';
  return 'preparation-failed';
}

function messageOf(error: unknown): string {
  return error instanceof AssentError ? error.message : error instanceof Error ? error.message : String(error);
}

/** Maps a refused consumption to the report's stable reason. */
function consumptionFailureReason(error: unknown): ExecReason {
  if (error instanceof AssentError && error.type === 'proof_invalid') {
    const reason = error.details?.['reason'];
    return reason === 'revision-changed' || reason === 'other-action' ? 'configuration-changed' : 'confirmation-denied';
  }
  return 'confirmation-unavailable';
}

export async function runActionViaDaemon(paths: ActionPaths, deps: DaemonActionDeps): Promise<ExecReport> {
  const read = deps.readFile ?? readLimitedFile;
  const diagnose = deps.diagnose ?? (() => undefined);
  const now = deps.now ?? (() => performance.now());
  let prepared: Prepared;
  try {
    prepared = await prepare(paths, read);
  } catch (error) {
    diagnose(`assent: ${messageOf(error)}\n`);
    return refusalReport(loadFailureReason(error));
  }
  if (prepared.decision === 'deny') {
    diagnose('assent: the policy denies this action; nothing was started.\n');
    return refusalReport('policy-deny');
  }
  if (prepared.decision === 'allow' && deps.proof === undefined) {
    // Allow needs nobody: run exactly as `assent action run` does.
    const direct: Parameters<typeof runActionFlow>[1] = { signals: deps.signals, diagnose, readFile: read };
    if (deps.spawn !== undefined) direct.spawn = deps.spawn;
    if (deps.limits !== undefined) direct.limits = deps.limits;
    return runActionFlow(paths, direct);
  }

  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) deps.signals.on(signal, onSignal);
  let client: DaemonCaller | undefined;
  try {
    try {
      client = await deps.connect();
    } catch (error) {
      diagnose(`assent: no assent daemon to ask (${messageOf(error)}); nothing was started. Start one with \`assent daemon run\`.\n`);
      return refusalReport('confirmation-unavailable');
    }

    let proof = deps.proof;
    if (proof === undefined) {
      diagnose('assent: waiting for an operator to approve this action (assent pending / assent approve ID, watch, or the web page)…\n');
      try {
        const issued = await client.call<{ approvalId: string; proof: string }>(
          'actions.request',
          { action: prepared.action, revision: prepared.revision, caller: { command: 'action run --via-daemon' } },
          { signal: controller.signal },
        );
        proof = issued.proof;
        diagnose(`assent: approval ${issued.approvalId} was granted.\n`);
      } catch (error) {
        if (controller.signal.aborted) {
          diagnose('assent: cancelled while waiting for approval; nothing was started.\n');
          return refusalReport('action-cancelled');
        }
        diagnose(`assent: ${messageOf(error)}\n`);
        return refusalReport(error instanceof AssentError && error.type === 'policy_denied' ? 'confirmation-denied' : 'confirmation-unavailable');
      }
    }

    // Read the files again: the proof is consumed for the bytes that will run now, never for a stale view.
    let current: Prepared;
    try {
      current = await prepare(paths, read);
    } catch (error) {
      diagnose(`assent: ${messageOf(error)}\n`);
      return refusalReport('configuration-unavailable');
    }
    if (controller.signal.aborted) {
      diagnose('assent: cancelled before launch; the proof was not used.\n');
      return refusalReport('action-cancelled');
    }

    let consumed: ConsumeResult;
    try {
      consumed = await client.call<ConsumeResult>('proofs.consume', { proof, action: current.action, revision: current.revision });
    } catch (error) {
      diagnose(`assent: ${messageOf(error)}\n`);
      return refusalReport(consumptionFailureReason(error));
    }
    if (consumed.outcome === 'replay') {
      diagnose(
        `assent: this proof was already used for this exact action (approval ${consumed.approvalId}, effect ${consumed.effect.id}: ${consumed.effect.state}); ` +
          'nothing was run again. See `assent effects show ' +
          `${consumed.effect.id}\`.\n`,
      );
      return refusalReport('launch-failed');
    }

    // The intent is durable: from here on a crash leaves an honest `uncertain`, never a second run.
    const started = now();
    let outcome: ChildOutcome;
    let child: ChildProcess | undefined;
    try {
      child = launchChild(current.action, deps.spawn);
    } catch {
      child = undefined;
    }
    if (child === undefined) outcome = { reason: 'spawn-failed', execution: { ...SPAWN_FAILED } };
    else outcome = await superviseChild(child, { limits: deps.limits ?? DEFAULT_EXEC_LIMITS, signal: controller.signal });
    const ok = outcome.execution.state === 'exited' && outcome.execution.exitCode === 0;
    try {
      await client.call('effects.finish', { effectId: consumed.effect.id, ok, durationMs: Math.max(0, Math.round(now() - started)) });
    } catch (error) {
      diagnose(`assent: the outcome of effect ${consumed.effect.id} could not be recorded (${messageOf(error)}); the daemon will show it as uncertain.\n`);
    }
    return launchReport(outcome.reason, outcome.execution, { policyDecision: prepared.decision === 'ask' ? 'ask' : 'allow' });
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) deps.signals.off(signal, onSignal);
    client?.close();
  }
}
