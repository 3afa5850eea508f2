import { EventEmitter } from 'node:events';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { effectiveExecAction, DEFAULT_EXEC_ENV } from '../../../src/exec/environment.js';
import { launchChild, superviseChild } from '../../../src/exec/runChild.js';

const fast = { runtimeMs: 300, outputBytes: 1000, terminationMs: 1000 };

function run(executable: string, args: string[], limits = fast, signal?: AbortSignal) {
  const child = launchChild({ executable, cwd: '/', args, env: { ...DEFAULT_EXEC_ENV } });
  return superviseChild(child, { limits, ...(signal ? { signal } : {}) });
}

/** A child that never exits on its own and ignores kill. */
function stubbornChild(): ChildProcess {
  const child = new EventEmitter() as ChildProcess & EventEmitter;
  Object.assign(child, { stdout: new PassThrough(), stderr: new PassThrough(), kill: () => true });
  queueMicrotask(() => child.emit('spawn'));
  return child;
}

describe('R-EXEC-3 runChild', () => {
  it('R-EXEC-3 counts stdout and stderr and reports a clean exit', async () => {
    const outcome = await run('/bin/sh', ['-c', 'printf abc; printf de >&2']);
    expect(outcome).toEqual({
      reason: 'child-exited',
      execution: { state: 'exited', exitCode: 0, termination: 'not-requested', stdoutBytes: 3, stderrBytes: 2, outputComplete: true },
    });
  });

  it('R-EXEC-3 stops a child at the runtime limit and confirms termination', async () => {
    const outcome = await run('/bin/sleep', ['10']);
    expect(outcome.reason).toBe('runtime-timeout');
    expect(outcome.execution).toMatchObject({ state: 'interrupted', termination: 'confirmed', outputComplete: false });
  });

  it('R-EXEC-3 stops a child past the combined output limit', async () => {
    const outcome = await run('/bin/sh', ['-c', 'head -c 600 /dev/zero; head -c 600 /dev/zero >&2; sleep 5']);
    expect(outcome.reason).toBe('output-limit');
    expect(outcome.execution.stdoutBytes + outcome.execution.stderrBytes).toBeGreaterThan(1000);
    expect(outcome.execution).toMatchObject({ termination: 'confirmed', outputComplete: false });
  });

  it('R-EXEC-3 exactly the limit of output is complete', async () => {
    const outcome = await run('/usr/bin/head', ['-c', '1000', '/dev/zero']);
    expect(outcome).toMatchObject({ reason: 'child-exited', execution: { stdoutBytes: 1000, outputComplete: true } });
  });

  it('R-EXEC-3 termination is unconfirmed when the child does not exit within the bound', async () => {
    const outcome = await superviseChild(stubbornChild(), { limits: { runtimeMs: 20, outputBytes: 10, terminationMs: 50 } });
    expect(outcome).toMatchObject({ reason: 'runtime-timeout', execution: { state: 'unknown', termination: 'unconfirmed' } });
  });

  it('R-TTY-9 an abort after launch stops the child: interrupted, action-cancelled', async () => {
    const controller = new AbortController();
    const pending = run('/bin/sleep', ['10'], { ...fast, runtimeMs: 5000 }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    const outcome = await pending;
    expect(outcome).toMatchObject({ reason: 'action-cancelled', execution: { state: 'interrupted', termination: 'confirmed' } });
  });

  it('R-EXEC-5 a missing executable is spawn-failed', async () => {
    const outcome = await run('/nonexistent/program', []);
    expect(outcome).toMatchObject({ reason: 'spawn-failed', execution: { state: 'spawn-failed', exitCode: null } });
  });

  it('R-EXEC-2/R-EXEC-3 spawns without a shell, stdin ignored, with exactly the given environment', () => {
    let seen: { command: string; args: readonly string[]; options: SpawnOptions } | undefined;
    const action = effectiveExecAction({ executable: '/bin/x', cwd: '/w', args: ['$(rm)', '*'], env: { A: '1', PATH: '/opt' } });
    launchChild(action, (command, args, options) => {
      seen = { command, args, options };
      return stubbornChild();
    });
    expect(seen?.command).toBe('/bin/x');
    expect(seen?.args).toEqual(['$(rm)', '*']);
    expect(seen?.options).toMatchObject({ cwd: '/w', shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(seen?.options.env).toEqual({ A: '1', PATH: '/opt', LANG: 'C.UTF-8' });
  });
});
