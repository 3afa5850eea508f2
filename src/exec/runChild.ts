// Direct child execution with the limits of R-EXEC-3: no shell, stdin ignored,
// stdout/stderr counted and dropped, bounded runtime and output, and a bounded
// wait for the kill to be confirmed. Only the direct child is controlled.
import { keepAliveTimers, type Timers } from '../core/base/timers.js';
import { spawn as nodeSpawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import type { ExecAction } from '../core/exec/action.js';
import type { ExecReason, ExecutionSummary, ExecState, Termination } from './report.js';

export interface ExecLimits {
  /** Wall time from launch until the child is stopped. */
  runtimeMs: number;
  /** stdout + stderr bytes allowed before the child is stopped. */
  outputBytes: number;
  /** How long to wait for a killed child's exit before calling termination unconfirmed. */
  terminationMs: number;
}

export const DEFAULT_EXEC_LIMITS: Readonly<ExecLimits> = Object.freeze({
  runtimeMs: 5_000,
  outputBytes: 64 * 1024,
  terminationMs: 1_000,
});

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;


export interface ChildOutcome {
  reason: ExecReason;
  execution: ExecutionSummary;
}

/**
 * Starts the process synchronously so the caller can spend its one launch
 * attempt exactly here. `action` must already be the effective action (env with
 * defaults); the environment is passed whole, so nothing is inherited.
 */
export function launchChild(action: ExecAction, spawn: SpawnFn = nodeSpawn): ChildProcess {
  return spawn(action.executable, action.args, {
    cwd: action.cwd,
    env: { ...action.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: false,
    windowsHide: true,
    detached: false,
  });
}

export interface SuperviseOptions {
  limits?: ExecLimits;
  /** Aborting asks for the child's termination (operator cancel, signals, EOF). */
  signal?: AbortSignal;
  timers?: Timers;
}

/** Watches a launched child until it is accounted for; never rejects. */
export function superviseChild(child: ChildProcess, options: SuperviseOptions = {}): Promise<ChildOutcome> {
  const limits = options.limits ?? DEFAULT_EXEC_LIMITS;
  const timers = options.timers ?? keepAliveTimers;
  return new Promise<ChildOutcome>((resolve) => {
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let spawned = false;
    let exited = false;
    let exitCode: number | null = null;
    let stopReason: ExecReason | undefined;
    let termination: Termination = 'not-requested';
    let openStreams = 0;
    let settled = false;
    let terminationTimer: unknown;

    const destroyStreams = (): void => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    };

    const settle = (reason: ExecReason, state: ExecState, outputComplete: boolean): void => {
      if (settled) return;
      settled = true;
      timers.clearTimeout(runtimeTimer);
      if (terminationTimer !== undefined) timers.clearTimeout(terminationTimer);
      options.signal?.removeEventListener('abort', onAbort);
      destroyStreams();
      resolve({ reason, execution: { state, exitCode, termination, stdoutBytes, stderrBytes, outputComplete } });
    };

    const stop = (reason: ExecReason): void => {
      if (settled || stopReason !== undefined) return;
      stopReason = reason;
      destroyStreams();
      if (exited) {
        // The direct child is gone; only a descendant still held the pipes.
        settle(reason, 'exited', false);
        return;
      }
      termination = 'unconfirmed';
      try {
        child.kill('SIGKILL');
      } catch {
        // kill reports failures through the result of the wait below.
      }
      terminationTimer = timers.setTimeout(() => settle(reason, 'unknown', false), limits.terminationMs);
    };

    const onAbort = (): void => stop('action-cancelled');

    const count = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
      if (stopReason !== undefined) return;
      if (which === 'stdout') stdoutBytes += chunk.byteLength;
      else stderrBytes += chunk.byteLength;
      if (stdoutBytes + stderrBytes > limits.outputBytes) stop('output-limit');
    };

    const streamClosed = (): void => {
      openStreams -= 1;
      if (openStreams === 0 && exited && stopReason === undefined) settle('child-exited', 'exited', true);
    };

    for (const [which, stream] of [['stdout', child.stdout], ['stderr', child.stderr]] as const) {
      if (!stream) continue;
      openStreams += 1;
      stream.on('data', count(which));
      stream.on('close', streamClosed);
      stream.on('error', () => stop('child-error'));
    }

    const runtimeTimer = timers.setTimeout(() => stop('runtime-timeout'), limits.runtimeMs);

    child.on('spawn', () => {
      spawned = true;
    });
    child.on('error', () => {
      if (!spawned && !exited) {
        settle('spawn-failed', 'spawn-failed', false);
        return;
      }
      stop('child-error');
    });
    child.on('exit', (code) => {
      exited = true;
      exitCode = code;
      if (stopReason !== undefined) {
        termination = 'confirmed';
        settle(stopReason, 'interrupted', false);
      } else if (openStreams === 0) {
        settle('child-exited', 'exited', true);
      }
    });

    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort);
  });
}
