// R-HOOK-4: every failure of the hook blocks the call — the agent's deny JSON,
// one stderr line, exit 2 — without a daemon to ask (none runs here).
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { readEvent } from '../../../../src/heads/hook/hookProcess.js';
import { parseHookArgs, runHook, type HookDeps } from '../../../../src/heads/hook/hookRun.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function home(mode = 0o700): string {
  const root = mkdtempSync(join(tmpdir(), 'as-hookrun-'));
  roots.push(root);
  const dir = join(root, 'h');
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

const event = JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', cwd: '/w', tool_name: 'Bash', tool_input: { command: 'ls' } });

function deps(stateHome: string, text: string, started: string[] = []): HookDeps {
  return {
    readStdin: () => Promise.resolve({ text, oversized: false }),
    env: { ASSENT_HOME: stateHome },
    cwd: () => '/w',
    startDaemon: () => {
      started.push('spawn');
      return Promise.resolve();
    },
  };
}

function expectBlocked(outcome: Awaited<ReturnType<typeof runHook>>, shape: 'claude' | 'gemini', pattern: RegExp): void {
  expect(outcome.exitCode).toBe(2);
  const answer = JSON.parse(outcome.stdout) as Record<string, unknown>;
  const reason =
    shape === 'gemini'
      ? (expect(answer).toMatchObject({ decision: 'deny' }), answer['reason'])
      : (expect(answer).toMatchObject({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } }),
        (answer['hookSpecificOutput'] as Record<string, unknown>)['permissionDecisionReason']);
  expect(reason).toMatch(pattern);
  // Codex shows the stderr line to the model: the same reason, one line.
  expect(outcome.stderr).toBe(`${String(reason)}\n`);
}

describe('assent hook fails closed (R-HOOK-4)', () => {
  it('R-HOOK-4 bad arguments: no agent, an unknown agent, an extra argument or an unknown flag block the call', async () => {
    const dir = home();
    expectBlocked(await runHook([], deps(dir, event)), 'claude', /bad hook arguments \(no agent named/);
    expectBlocked(await runHook(['cursor'], deps(dir, event)), 'claude', /unknown agent "cursor"/);
    expectBlocked(await runHook(['gemini', 'extra'], deps(dir, event)), 'gemini', /unexpected argument "extra"/);
    expectBlocked(await runHook(['codex', '--before'], deps(dir, event)), 'claude', /unknown option "--before"/);
    expect(parseHookArgs(['claude'])).toEqual({ agent: 'claude-code', mode: 'before' });
    expect(parseHookArgs(['gemini', '--after'])).toEqual({ agent: 'gemini', mode: 'after' });
  });

  it('R-HOOK-4 no daemon after the one auto-spawn attempt: blocked, naming unavailable and what the operator can do', async () => {
    const started: string[] = [];
    const outcome = await runHook(['claude-code'], deps(home(), event, started));
    expect(started).toEqual(['spawn']);
    expectBlocked(outcome, 'claude', /^assent blocked claude\/Bash: unavailable .*assent daemon run/);
  });

  it('R-HOOK-4 a failing auto-spawn blocks with its reason', async () => {
    const dir = home();
    const outcome = await runHook(['gemini'], {
      ...deps(dir, JSON.stringify({ hook_event_name: 'BeforeTool', session_id: 's', tool_name: 'run_shell_command', tool_input: { command: 'ls' } })),
      startDaemon: () => Promise.reject(new Error('spawn refused')),
    });
    expectBlocked(outcome, 'gemini', /^assent blocked gemini\/run_shell_command: internal \(spawn refused\)/);
  });

  it('R-STATE-1 R-HOOK-4 a state directory writable by group or others blocks before any socket is trusted or any daemon started', async () => {
    const started: string[] = [];
    const dir = home(0o770);
    chmodSync(dir, 0o770);
    const outcome = await runHook(['codex'], deps(dir, event, started));
    expect(started).toEqual([]);
    expectBlocked(outcome, 'claude', /state_insecure .*writable by group or others/);
  });

  it('R-HOOK-4 an oversized event blocks without parsing it', async () => {
    const outcome = await runHook(['claude-code'], { ...deps(home(), ''), readStdin: () => Promise.resolve({ text: '', oversized: true }) });
    expectBlocked(outcome, 'claude', /larger than 1048576 bytes/);
  });

  it('R-HOOK-4 stdin is read up to 1 MiB: one byte more is oversized, invalid UTF-8 is refused', async () => {
    const exact = '{' + ' '.repeat(1_048_574) + '}';
    await expect(readEvent(Readable.from([Buffer.from(exact)]))).resolves.toEqual({ text: exact, oversized: false });
    await expect(readEvent(Readable.from([Buffer.from(`${exact} `)]))).resolves.toEqual({ text: '', oversized: true });
    await expect(readEvent(Readable.from([Buffer.from([0x7b, 0xff, 0x7d])]))).rejects.toThrow(/not valid UTF-8/);
    const never = new Readable({ read: () => undefined });
    await expect(readEvent(never, 50)).rejects.toThrow(/no complete hook event arrived/);
    never.destroy();
  });

  it('R-HOOK-4 an event it cannot read blocks, in the shape of the named agent', async () => {
    expectBlocked(await runHook(['gemini'], deps(home(), 'nope')), 'gemini', /not valid JSON/);
    expectBlocked(await runHook(['claude-code'], deps(home(), JSON.stringify({ ...JSON.parse(event), tool_input: undefined }))), 'claude', /^assent blocked claude\/Bash: the PreToolUse event has no tool_input/);
  });

  it('R-HOOK-6 an after-event with no daemon records nothing, starts no daemon and does not block (the call already ran)', async () => {
    const started: string[] = [];
    const after = JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 's', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: '' });
    const outcome = await runHook(['codex', '--after'], deps(home(), after, started));
    expect(started).toEqual([]);
    expect(outcome).toMatchObject({ stdout: '{}\n', exitCode: 0 });
    expect(outcome.stderr).toMatch(/not recorded .*stays "started"/);
  });

  it('R-HOOK-6 (hardening 19.8c) an after-event that cannot be read never blocks: the neutral answer, exit 0, one stderr line saying it was not recorded', async () => {
    const cases: [string[], HookDeps][] = [
      [['codex', '--after'], deps(home(), 'nope')],
      [['claude-code', '--after'], deps(home(), JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 's' }))],
      [['gemini', '--after'], deps(home(), JSON.stringify({ hook_event_name: 'BeforeTool', session_id: 's', tool_name: 'x', tool_input: {} }))],
      [['codex', '--after'], { ...deps(home(), ''), readStdin: () => Promise.resolve({ text: '', oversized: true }) }],
      [['codex', '--after'], { ...deps(home(), ''), readStdin: () => Promise.reject(new Error('stdin could not be read (EIO)')) }],
      [['gemini', '--after'], deps(home(0o777), JSON.stringify({ hook_event_name: 'AfterTool', session_id: 's', tool_name: 'run_shell_command', tool_input: { command: 'ls' } }))],
    ];
    for (const [args, run] of cases) {
      const outcome = await runHook(args, run);
      expect(outcome, JSON.stringify(args)).toMatchObject({ stdout: '{}\n', exitCode: 0 });
      expect(outcome.stderr).toMatch(/^assent: the end of this call was not recorded \(.+\); its audit line stays "started"\.\n$/);
    }
  });

  it('R-HOOK-4 (hardening 19.8d) a cwd that is not an absolute path blocks, as any malformed event does; a missing cwd falls back to the hook\'s own', async () => {
    for (const cwd of ['relative/dir', '', '.', '~/project', 42, '/w\u0000/x', `/${'a'.repeat(5000)}`]) {
      const outcome = await runHook(['claude-code'], deps(home(), JSON.stringify({ ...JSON.parse(event), cwd })));
      expectBlocked(outcome, 'claude', /^assent blocked claude\/Bash: the PreToolUse event's cwd is not an absolute path/);
    }
    const gemini = await runHook(['gemini'], deps(home(), JSON.stringify({ hook_event_name: 'BeforeTool', session_id: 's', cwd: 'src', tool_name: 'read_file', tool_input: { absolute_path: 'a' } })));
    expectBlocked(gemini, 'gemini', /cwd is not an absolute path/);
  });

  it('R-HOOK-4 (hardening 19.8b) -h and --help are bad arguments: they block with the usage, in the named agent\'s shape', async () => {
    expectBlocked(await runHook(['-h'], deps(home(), event)), 'claude', /bad hook arguments \(no agent named \(help is not an argument a hook run takes\); usage: assent hook/);
    expectBlocked(await runHook(['gemini', '--help'], deps(home(), event)), 'gemini', /-h|--help is not an argument a hook run takes; usage: assent hook/);
    expectBlocked(await runHook(['codex', '-h'], deps(home(), event)), 'claude', /"?-h"? is not an argument a hook run takes/);
  });
});
