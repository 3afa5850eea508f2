// R-HOOK-11: one hard deadline, from the agent's hook timeout on the hook's
// command line less a margin of max(3 s, 10 %), counted from the hook's start.
// By then the hook answers deny (exit 2) whatever is pending: a spawn that
// never ends, a daemon that never answers; and it tells the daemon the deadline.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hookDeadlineMs, hookMarginSeconds } from '../../../../src/core/agent/hookDeadline.js';
import { hookAnswerBy, parseHookArgs, runHook, type HookDeps } from '../../../../src/heads/hook/hookRun.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stateHome(): string {
  const root = mkdtempSync(join(tmpdir(), 'as-dl-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'h');
  mkdirSync(dir);
  chmodSync(dir, 0o700);
  return dir;
}

const event = JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', cwd: '/w', tool_name: 'Bash', tool_input: { command: 'ls' } });

function deps(home: string, extra: Partial<HookDeps> = {}): HookDeps {
  return { readStdin: () => Promise.resolve({ text: event, oversized: false }), env: { ASSENT_HOME: home }, cwd: () => '/w', ...extra };
}

function reasonOf(stdout: string): string {
  const answer = JSON.parse(stdout) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  expect(answer.hookSpecificOutput?.permissionDecision).toBe('deny');
  return answer.hookSpecificOutput?.permissionDecisionReason ?? '';
}

describe('R-HOOK-11 the hook has one hard deadline', () => {
  it('R-HOOK-11 the margin is 3 s or 10 %, whichever is more; --timeout takes whole seconds, once; a bad value blocks naming the fix', () => {
    expect(hookMarginSeconds(6)).toBe(3);
    expect(hookMarginSeconds(136)).toBeCloseTo(13.6);
    expect(hookDeadlineMs(6)).toBe(3000);
    expect(parseHookArgs(['codex', '--timeout', '6'])).toEqual({ agent: 'codex', mode: 'before', timeoutSeconds: 6 });
    expect(parseHookArgs(['gemini', '--after', '--timeout=125'])).toEqual({ agent: 'gemini', mode: 'after', timeoutSeconds: 125 });
    expect(parseHookArgs(['codex'])).toEqual({ agent: 'codex', mode: 'before' });
    for (const bad of [['codex', '--timeout'], ['codex', '--timeout', '0'], ['codex', '--timeout', '1.5'], ['codex', '--timeout', 'x'], ['codex', '--timeout', '100000']]) {
      expect((parseHookArgs(bad) as { problem: string }).problem).toMatch(/--timeout takes the agent's hook timeout in whole seconds .*run `assent install` again/);
    }
    expect((parseHookArgs(['codex', '--timeout', '5', '--timeout', '6']) as { problem: string }).problem).toMatch(/--timeout given more than once/);
    // Without --timeout (an older install) the agent's own default applies: Gemini CLI's is 60 s.
    expect(hookAnswerBy({ agent: 'gemini', mode: 'before' }, 1000)).toBe(1000 + 54_000);
  });

  it('R-HOOK-11 a daemon spawn that never ends is cut at the deadline: deny, exit 2, naming the installed timeout; the spawn was given only what was left', async () => {
    const home = stateHome();
    const waits: number[] = [];
    const startedAt = Date.now();
    const outcome = await runHook(['claude-code', '--timeout', '4'], deps(home, { startedAt, startDaemon: (_p, _e, waitMs) => (waits.push(waitMs), new Promise<void>(() => undefined)) }));
    const elapsed = Date.now() - startedAt;
    expect(outcome.exitCode).toBe(2);
    expect(reasonOf(outcome.stdout)).toMatch(/^assent blocked claude\/Bash: timeout \(no decision within the hook's deadline of 1 s \(the agent's hook timeout of 4 s given on the hook's command line/);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(4000);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(1000);
  });

  it('R-HOOK-11 the deadline counts from the hook\'s start, not from when it asks', async () => {
    const startedAt = Date.now() - 2500;
    const outcome = await runHook(['codex', '--timeout', '5'], deps(stateHome(), { startedAt, startDaemon: () => new Promise<void>(() => undefined) }));
    expect(outcome.exitCode).toBe(2);
    expect(Date.now() - startedAt).toBeLessThan(4000);
  });

  it('R-HOOK-11 a daemon that takes the request and never answers: deny at the deadline; the request told the daemon that deadline', async () => {
    const home = stateHome();
    const received: string[] = [];
    const server: Server = createServer((socket) => socket.on('data', (chunk: Buffer) => received.push(chunk.toString('utf8'))));
    await new Promise<void>((resolve) => server.listen(join(home, 'daemon.sock'), resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const startedAt = Date.now();
    const outcome = await runHook(['codex', '--timeout', '4'], deps(home, { startedAt, firstAnswerMs: 60_000 }));
    expect(outcome.exitCode).toBe(2);
    expect(reasonOf(outcome.stdout)).toMatch(/timeout \(no decision within the hook's deadline of 1 s/);
    expect(Date.now() - startedAt).toBeLessThan(4000);
    const request = received.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { method: string; params: { answerBy?: number } }).find((frame) => frame.method === 'agents.authorize');
    expect(request?.params.answerBy).toBe(startedAt + 1000);
  });

  it('R-HOOK-11 an approval\'s expiry notice never moves the wait past the deadline', async () => {
    const home = stateHome();
    const server: Server = createServer((socket) =>
      socket.once('data', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'agents.pending', params: { approvalId: 'abcde', expiresAt: Date.now() + 60_000 } })}\n`)),
    );
    await new Promise<void>((resolve) => server.listen(join(home, 'daemon.sock'), resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const startedAt = Date.now();
    const outcome = await runHook(['codex', '--timeout', '5'], deps(home, { startedAt }));
    expect(outcome.exitCode).toBe(2);
    expect(Date.now() - startedAt).toBeLessThan(5000);
  });
});
