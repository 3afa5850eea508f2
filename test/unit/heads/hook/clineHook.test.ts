// Cline CLI (issue 36): its hook events become agent actions, assent answers
// in the one form Cline obeys ({} runs, {"cancel":true} refuses and ends the
// task), and what a Cline call touches is read only from forms Cline runs as
// assent judges them. The real CLI runs in test/e2e/agents/clineHooks.test.ts.
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actionCommand, actionPaths, actionUrl } from '../../../../src/core/agent/agentTargets.js';
import { agentActionKind, mcpToolOf } from '../../../../src/core/agent/agentAction.js';
import { clineHookText, isAssentClineHook } from '../../../../src/heads/agents/clineHooks.js';
import { judgeCanaryAnswer } from '../../../../src/heads/agents/hookDoctor.js';
import { planInstall, planUninstall } from '../../../../src/heads/agents/installPlan.js';
import { beforeAnswer, oneLine } from '../../../../src/heads/hook/hookAnswer.js';
import { failClosed } from '../../../../src/heads/hook/hookRun.js';
import { parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';

const installation = { node: '/usr/bin/node', hookEntry: '/opt/assent/dist/bin/assent-hook.js', cliEntry: '/opt/assent/dist/bin/assent.js' };

/** What Cline 3.0.65 wrote to a PreToolUse hook's stdin in a real run (docs/agents.md). */
const PRE = {
  clineVersion: '',
  timestamp: '2026-12-08T01:26:09.358Z',
  taskId: 'conv_1796693169193_rfca7j7',
  sessionContext: { rootSessionId: '1796693169083_63p8p' },
  workspaceRoots: ['/tmp/clh/work'],
  workspaceInfo: { rootPath: '/tmp/clh/work', hint: 'work' },
  userId: 'unknown',
  agent_id: 'agent_1796693169156_gp7fd4',
  parent_agent_id: null,
  hookName: 'tool_call',
  iteration: 1,
  tool_call: { id: 'call_1', name: 'run_commands', input: { commands: ['touch /tmp/clh/marker'] } },
  preToolUse: { toolName: 'run_commands', parameters: { commands: '["touch /tmp/clh/marker"]' } },
};

let sandbox: string;
beforeEach(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'assent-cline-refusal-'));
});
afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

describe('Cline CLI hook events and answers', () => {
  it('a tool_call is a before-event and a tool_result an after-event, with the task as the session and the first workspace root as the cwd', () => {
    expect(parseHookEvent('cline', 'before', JSON.stringify(PRE), '/elsewhere')).toEqual({
      ok: true,
      mode: 'before',
      event: 'PreToolUse',
      action: { agent: 'cline', sessionId: PRE.taskId, cwd: '/tmp/clh/work', tool: 'run_commands', kind: 'shell', input: PRE.tool_call.input, toolUseId: 'call_1' },
    });
    const { tool_call: call, preToolUse: _pre, ...rest } = PRE;
    const post = { ...rest, hookName: 'tool_result', tool_result: { ...call, output: [{ query: 'touch', result: '', success: true }], durationMs: 47 } };
    expect(parseHookEvent('cline', 'after', JSON.stringify(post), '/')).toMatchObject({ ok: true, mode: 'after', end: { agent: 'cline', sessionId: PRE.taskId, tool: 'run_commands', toolUseId: 'call_1', outcome: 'ok' } });
    const failed = { ...post, tool_result: { ...post.tool_result, error: 'exit 1' } };
    expect(parseHookEvent('cline', 'after', JSON.stringify(failed), '/')).toMatchObject({ ok: true, end: { outcome: 'error' } });
    // Another hook's event, a relative workspace root, no task id: each refused with its reason.
    expect(parseHookEvent('cline', 'before', JSON.stringify({ ...PRE, hookName: 'agent_start' }), '/')).toMatchObject({ ok: false, problem: expect.stringContaining('no hook_event_name') });
    expect(parseHookEvent('cline', 'before', JSON.stringify({ ...PRE, workspaceRoots: ['work'] }), '/')).toMatchObject({ ok: false, problem: expect.stringContaining('cwd is not an absolute path') });
    expect(parseHookEvent('cline', 'before', JSON.stringify({ ...PRE, taskId: undefined }), '/')).toMatchObject({ ok: false, problem: expect.stringContaining('session_id') });
  });

  it('a refused run_commands call runs one fixed command in its place that prints the reason and exits 126, whatever the reason says (bash as the oracle)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '\\', '$', '`', '(', ')', ';', '&', '|', '*', '%', '!', 'é', '\n', '-') }), (reason) => {
        const answer = JSON.parse(beforeAnswer('cline', 'deny', reason, undefined, 'run_commands')) as { overrideInput: { commands: string[] } };
        expect(Object.keys(answer)).toEqual(['overrideInput']);
        expect(answer.overrideInput.commands).toHaveLength(1);
        const run = spawnSync('bash', ['-c', answer.overrideInput.commands[0] as string], { cwd: sandbox, encoding: 'utf8' });
        expect(run.status).toBe(126);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(`${oneLine(reason)}\n`);
        expect(readdirSync(sandbox)).toEqual([]);
      }),
      { numRuns: 150 },
    );
    expect(JSON.parse(failClosed('cline', 'no daemon', 'run_commands').stdout)).toEqual({ overrideInput: { commands: ["printf '%s\\n' 'no daemon' >&2; exit 126"] } });
  });

  it('an allow is {}, and a refusal of any other tool or of a call whose tool is unknown, a prompt asked of Cline and a confined allow it cannot apply are {"cancel":true} with the reason', () => {
    expect(beforeAnswer('cline', 'allow', 'fine')).toBe('{}');
    expect(JSON.parse(beforeAnswer('cline', 'deny', 'r', undefined, 'editor'))).toEqual({ cancel: true, errorMessage: 'r' });
    expect(JSON.parse(beforeAnswer('cline', 'deny', 'assent refused cline/run_commands: policy'))).toEqual({ cancel: true, errorMessage: 'assent refused cline/run_commands: policy' });
    expect(JSON.parse(beforeAnswer('cline', 'ask', 'r'))).toEqual({ cancel: true, errorMessage: 'r' });
    expect(JSON.parse(beforeAnswer('cline', 'allow', 'r', { commands: ['confined'] }))).toEqual({ cancel: true, errorMessage: 'r' });
    expect(JSON.parse(failClosed('cline', 'no daemon').stdout)).toEqual({ cancel: true, errorMessage: 'no daemon' });
    // Doctor counts only the cancel: Cline reads no exit code.
    expect(judgeCanaryAnswer('cline', { exitCode: 0, signal: null, timedOut: false, stdout: '{"cancel":true,"errorMessage":"x"}', stderr: '' }).blocks).toBe(true);
    expect(judgeCanaryAnswer('cline', { exitCode: 2, signal: null, timedOut: false, stdout: '', stderr: 'denied' }).blocks).toBe(false);
    expect(judgeCanaryAnswer('cline', { exitCode: 0, signal: null, timedOut: false, stdout: '{"errorMessage":"x"}', stderr: '' }).blocks).toBe(false);
  });
});

describe('what a Cline call touches', () => {
  it('run_commands is judged only as one command string alone in the input: several commands, an argv entry or another key have no command (it asks)', () => {
    expect(actionCommand({ commands: ['git status'] }, 'cline')).toBe('git status');
    expect(actionCommand({ commands: 'git status' }, 'cline')).toBe('git status');
    expect(actionCommand({ command: 'git status' }, 'cline')).toBe('git status');
    expect(actionCommand({ commands: ['git status', 'rm -rf /'] }, 'cline')).toBeUndefined();
    expect(actionCommand({ commands: [{ command: 'cat', args: ['/etc/shadow'] }] }, 'cline')).toBeUndefined();
    expect(actionCommand({ command: 'cat', args: ['/etc/shadow'] }, 'cline')).toBeUndefined();
    expect(actionCommand({ commands: ['ls'], cwd: '/' }, 'cline')).toBeUndefined();
    // Whatever the input, a command is named only when it is exactly the one string Cline runs.
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('commands', 'command', 'cmd', 'args', 'cwd'), fc.oneof(fc.string(), fc.array(fc.oneof(fc.string(), fc.record({ command: fc.string() }))))), (input) => {
        const command = actionCommand(input, 'cline');
        if (command === undefined) return;
        const keys = Object.keys(input);
        expect(keys.length).toBe(1);
        const value = input[keys[0] as string];
        expect(Array.isArray(value) ? value : [value]).toEqual([command]);
      }),
      { numRuns: 500 },
    );
  });

  it('read_files names its files in any of the forms Cline reads; an unknown field or entry makes the paths unknown', () => {
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: [{ path: '/a', start_line: 1 }, 'b'] } })).toEqual({ paths: ['/a', 'b'] });
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { file_paths: ['/a'], paths: '/b' } })).toEqual({ paths: ['/a', '/b'] });
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: [{ path: '/a', encoding: 'x' }] } }).unknown).toMatch(/not a path/);
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: ['/a'], root: '/' } }).unknown).toMatch(/field "root"/);
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: {} }).unknown).toMatch(/names no file/);
    expect(actionPaths({ agent: 'cline', tool: 'editor', input: { path: '/w/x.ts', new_text: 'y' } })).toEqual({ paths: ['/w/x.ts'] });
    expect(actionPaths({ agent: 'cline', tool: 'search_codebase', input: { queries: ['TODO'] } })).toEqual({ paths: ['.'], recursive: true });
    expect(actionPaths({ agent: 'cline', tool: 'apply_patch', input: { input: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch' } })).toEqual({ paths: ['src/a.ts'] });
  });

  it('fetch_web_content names its URL when it makes one request; an MCP tool is <server>__<tool>; the rest are other tools', () => {
    expect(actionUrl({ requests: [{ url: 'https://example.com/a', prompt: 'p' }] })).toBe('https://example.com/a');
    expect(actionUrl({ requests: [{ url: 'https://a.example' }, { url: 'https://b.example' }] })).toBeUndefined();
    expect(agentActionKind('cline', 'fetch_web_content')).toBe('fetch');
    expect(mcpToolOf('cline', 'everything__echo')).toEqual({ server: 'everything', tool: 'echo' });
    expect(agentActionKind('cline', 'run_commands')).toBe('shell');
    expect(agentActionKind('cline', 'skills')).toBe('other');
  });
});

describe('assent install|uninstall cline', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'assent-cline-install-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  const where = (): { env: NodeJS.ProcessEnv; homedir: string; cwd: string } => ({ env: {}, homedir: home, cwd: join(home, 'work') });

  it('writes PreToolUse.sh and PostToolUse.sh, each one exec of the hook with Cline\'s fixed 120 s; uninstall removes both; a file of that name assent did not write is refused', () => {
    const plan = planInstall({ agent: 'cline', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
    const dir = join(home, '.cline', 'hooks');
    expect(plan.files.map((file) => file.file)).toEqual([join(dir, 'PreToolUse.sh'), join(dir, 'PostToolUse.sh')]);
    expect(plan.files[0]?.afterText).toBe(clineHookText(installation, false));
    expect(plan.files[0]?.afterText).toContain('exec "/usr/bin/node" "/opt/assent/dist/bin/assent-hook.js" cline --timeout 120\n');
    expect(plan.files[1]?.afterText).toContain('cline --after --timeout 120\n');
    for (const file of plan.files) expect(isAssentClineHook(file.afterText ?? '')).toBe(true);
    mkdirSync(dir, { recursive: true });
    for (const file of plan.files) writeFileSync(file.file, file.afterText ?? '');
    const removal = planUninstall({ agent: 'cline', scope: 'user', where: where(), mcp: false, records: {} });
    expect(removal.files.map((file) => [file.file, file.afterText, file.restoredExactly])).toEqual([
      [join(dir, 'PreToolUse.sh'), undefined, true],
      [join(dir, 'PostToolUse.sh'), undefined, true],
    ]);
    writeFileSync(join(dir, 'PreToolUse.sh'), '#!/bin/sh\necho "{}"\n');
    expect(() => planInstall({ agent: 'cline', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: false })).toThrow(/is not a hook file assent wrote/);
    expect(planUninstall({ agent: 'cline', scope: 'user', where: where(), mcp: false, records: {} }).files.map((file) => file.file)).toEqual([join(dir, 'PostToolUse.sh')]);
    expect(readFileSync(join(dir, 'PreToolUse.sh'), 'utf8')).toBe('#!/bin/sh\necho "{}"\n');
    expect(existsSync(join(dir, 'PostToolUse.sh'))).toBe(true);
    expect(planInstall({ agent: 'cline', scope: 'user', where: { ...where(), env: { CLINE_DIR: join(home, 'other') } }, installation, hookTimeoutSeconds: 110, mcp: false }).files[0]?.file).toBe(join(home, 'other', 'hooks', 'PreToolUse.sh'));
  });
});
