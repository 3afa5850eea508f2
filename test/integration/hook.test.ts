// The built hook against a real daemon over its real socket (SPEC §17):
// R-HOOK-1..4 answers and failures, R-HOOK-6/10 audit, approvals from the
// CLI in a real terminal and from the HTTP API, hooks.timeoutSeconds.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { PtySession, runCliInTerminal } from '../helpers/pty.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(config: Record<string, unknown>, start = true): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  if (start) await home.startDaemon();
  return home;
}

interface Pending {
  id: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  argsSha256: string;
  caller: Record<string, unknown>;
  sessionId: string;
}

async function pending(home: TempHome): Promise<Pending[]> {
  const result = await home.runCli(['pending', '--json']);
  return (JSON.parse(result.stdout) as { data: Pending[] }).data;
}

async function waitForPending(home: TempHome, count = 1): Promise<Pending[]> {
  for (let i = 0; i < 300; i += 1) {
    const list = await pending(home);
    if (list.length >= count) return list;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no pending approval appeared');
}

function auditText(home: TempHome): string {
  try {
    return readdirSync(home.paths.auditDir)
      .map((name) => readFileSync(join(home.paths.auditDir, name), 'utf8'))
      .join('');
  } catch {
    return '';
  }
}

/** exit 2, the agent's deny JSON on stdout, the same reason as exactly one line on stderr (R-HOOK-4). */
function expectFailClosed(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  const answer = answerOf(result.stdout);
  expect(answer.decision).toBe('deny');
  expect(answer.reason).toMatch(pattern);
  expect(result.stderr).toBe(`${answer.reason}\n`);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
}

const ALLOW_ALL = { policy: { agents: { default: 'allow' } } };

describe('assent hook against a real daemon', () => {
  it('R-HOOK-4 invalid JSON, 2 MiB of input, an unknown event name or a missing tool_input: exit 2, deny on stdout, one line on stderr, nothing filed or audited', async () => {
    const home = await setup({});
    const cases: [string[], string, RegExp][] = [
      [['claude-code'], '{"hook_event_name":"PreToolUse",', /not valid JSON/],
      [['claude-code'], `{"x":"${'a'.repeat(2 * 1024 * 1024)}"}`, /larger than 1048576 bytes/],
      [['claude-code'], JSON.stringify(shellEvent('claude-code', 'ls', { hook_event_name: 'Stop' })), /"Stop" is not one this hook handles/],
      [['claude-code'], JSON.stringify(shellEvent('claude-code', 'ls', { tool_input: undefined })), /has no tool_input/],
      [['codex'], JSON.stringify(shellEvent('codex', 'ls', { tool_input: undefined })), /has no tool_input/],
      [['gemini'], JSON.stringify(shellEvent('gemini', 'ls', { tool_input: undefined })), /has no tool_input/],
      [['gemini'], JSON.stringify(shellEvent('claude-code', 'ls')), /expects BeforeTool/],
    ];
    for (const [args, input, pattern] of cases) {
      const result = await runHook(args, input, home.env);
      expectFailClosed(result, pattern);
      if (args[0] === 'gemini') expect(answerOf(result.stdout).raw).toEqual({ decision: 'deny', reason: answerOf(result.stdout).reason });
    }
    expect(await pending(home)).toEqual([]);
    expect(auditLines(home)).toEqual([]);
  });

  it('R-HOOK-4 (hardening 19.8b) -h and --help are bad arguments for the hook binary and for `assent hook`: exit 2, deny JSON, the usage on stderr, nothing decided', async () => {
    const home = await setup(ALLOW_ALL);
    const event = JSON.stringify(shellEvent('codex', 'ls'));
    const runs = [
      await runHook(['-h'], event, home.env),
      await runHook(['--help'], event, home.env),
      await runHook(['codex', '-h'], event, home.env),
      await runHook(['gemini', '--after', '--help'], event, home.env),
      await home.runCli(['hook', '-h'], { input: event }),
      await home.runCli(['hook', 'codex', '--help'], { input: event }),
    ];
    for (const result of runs) expectFailClosed(result, /bad hook arguments .*usage: assent hook claude-code\|codex\|gemini/);
    expect(await pending(home)).toEqual([]);
    expect(auditText(home)).toBe('');
  });

  it('R-HOOK-6 (hardening 19.8c) the built hook answers an unreadable after-event with its neutral answer and exit 0, never a PreToolUse deny', async () => {
    const home = await setup(ALLOW_ALL);
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      for (const input of ['not json', '', JSON.stringify({ hook_event_name: 'Stop' }), `{"x":"${'a'.repeat(2 * 1024 * 1024)}"}`]) {
        const result = await runHook([agent, '--after'], input, home.env);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toBe('{}\n');
        expect(result.stderr).toMatch(/^assent: the end of this call was not recorded .*stays "started"\.\n$/);
      }
    }
  });

  it('R-HOOK-1 R-HOOK-2 an allowed call answers allow in the agent shape, never with updatedInput, and files nothing', async () => {
    const home = await setup(ALLOW_ALL);
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      const result = await runHook([agent], shellEvent(agent, 'ls -la'), home.env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      const answer = answerOf(result.stdout);
      expect(answer.decision).toBe('allow');
      expect(result.stdout).not.toContain('updatedInput');
      if (agent === 'gemini') expect(Object.keys(answer.raw).sort()).toEqual(['decision', 'reason']);
      // Codex shows a JSON allow as a failed hook; its allow is exit 0 with nothing printed (issue 20).
      else if (agent === 'codex') expect(result.stdout).toBe('');
      else expect(Object.keys(answer.raw)).toEqual(['hookSpecificOutput']);
    }
    // `assent hook` through the CLI entry answers the same.
    const viaCli = await home.runCli(['hook', 'claude'], { input: JSON.stringify(shellEvent('claude-code', 'ls')) });
    expect(viaCli.code).toBe(0);
    expect(answerOf(viaCli.stdout).decision).toBe('allow');
    expect(await pending(home)).toEqual([]);
  });

  it('R-HOOK-4 R-D-1 no daemon: the hook starts one once and gets its decision; with auto-spawn off it blocks', async () => {
    const home = await setup(ALLOW_ALL, false);
    const off = await runHook(['codex'], shellEvent('codex', 'ls'), { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
    expectFailClosed(off, /^assent blocked codex\/Bash: unavailable .*assent daemon run/);
    const spawned = await runHook(['codex'], shellEvent('codex', 'ls'), home.env);
    expect(spawned.code, spawned.stderr).toBe(0);
    expect(answerOf(spawned.stdout).decision).toBe('allow');
  });

  it('R-STATE-1 R-HOOK-4 a state directory writable by group or others blocks every agent, even with a daemon running', async () => {
    const home = await setup(ALLOW_ALL);
    chmodSync(home.home, 0o775);
    cleanups.push(() => chmodSync(home.home, 0o700));
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      expectFailClosed(await runHook([agent], shellEvent(agent, 'ls'), home.env), /state_insecure .*writable by group or others/);
    }
  });

  it('R-HOOK-4 a socket that accepts and closes without answering blocks every agent', async () => {
    const home = await setup(ALLOW_ALL, false);
    const socket = join(home.home, 'refusing.sock');
    const server: Server = createServer((connection) => connection.destroy());
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      expectFailClosed(await runHook([agent], shellEvent(agent, 'ls'), { ...home.env, ASSENT_SOCKET: socket }), /^assent blocked (claude\/Bash|codex\/Bash|gemini\/run_shell_command): unavailable \(the daemon (connection failed|on .* closed the connection before answering)/);
    }
  });

  it('R-HOOK-4 a prompt left unanswered ends as consent_timeout after hooks.timeoutSeconds (2 s): a policy answer, exit 0', async () => {
    const home = await setup({ hooks: { timeoutSeconds: 2 } });
    const result = await runHook(['claude-code'], shellEvent('claude-code', 'make release'), home.env);
    expect(result.code, result.stderr).toBe(0);
    const answer = answerOf(result.stdout);
    expect(answer.decision).toBe('deny');
    expect(answer.reason).toMatch(/^assent refused claude\/Bash: consent_timeout \(approval [a-z]{5}\)\. Nobody approved the call within hooks\.timeoutSeconds \(2 s\)/);
    expect(result.ms).toBeGreaterThanOrEqual(1900);
    expect(result.ms).toBeLessThan(12_000);
    await expect.poll(() => auditLines(home).map((line) => line['outcome'])).toEqual(['consent_timeout']);
  });

  it('R-HOOK-3 R-CLI-1 a prompt is listed with agent, tool, cwd, session and the complete command; `assent approve` typed in a real terminal releases the hook once', async () => {
    const home = await setup({});
    const command = 'printf "\u001b[31mred\u001b[0m" && rm -rf ./build';
    const waiting = runHook(['claude-code'], shellEvent('claude-code', command, { session_id: 'sess-approve' }), home.env);
    const [listed] = await waitForPending(home);
    expect(listed).toMatchObject({
      server: 'claude',
      tool: 'Bash',
      args: { command, description: 'run it' },
      sessionId: 'sess-approve',
      caller: { head: 'hook', agent: 'claude-code', cwd: '/work/project', kind: 'shell' },
    });
    const human = await home.runCli(['pending']);
    expect(human.stdout).toContain('claude/Bash');
    expect(human.stdout).toContain('agent     claude-code');
    expect(human.stdout).toContain('cwd       /work/project');
    expect(human.stdout).toContain('command   printf "\\u001b[31mred\\u001b[0m" && rm -rf ./build');
    expect(human.stdout).not.toContain('\u001b');

    const pty = new PtySession(['approve', listed?.id ?? ''], { outFile: join(home.home, 'approve.out'), env: { ASSENT_HOME: home.home } });
    cleanups.push(() => pty.kill());
    await pty.waitFor(/command {3}printf/);
    const code = await pty.waitFor(/Type ([a-z]{4}) to approve/);
    pty.type(`${code[1]}\r`);
    expect((await pty.finish(join(home.home, 'approve.out'))).exitCode, pty.screen).toBe(0);
    const result = await waiting;
    expect(result.code, result.stderr).toBe(0);
    expect(answerOf(result.stdout)).toMatchObject({ decision: 'allow' });
    expect(result.stdout).not.toContain('updatedInput');
    expect(await pending(home)).toEqual([]);
    await expect.poll(() => auditLines(home).length).toBe(1);
    const [started] = auditLines(home);
    expect(started).toMatchObject({ agent: 'claude-code', server: 'claude', tool: 'Bash', outcome: 'started', channel: 'cli', approvalId: listed?.id, argsSha256: listed?.argsSha256 });
    expect(started?.['waitedForConsentMs']).toBeGreaterThan(0);
  });

  it('R-HOOK-3 R-WEB-4 an approval decided over the HTTP API (bearer token) releases the hook; a denial blocks it with the operator\'s reason', async () => {
    const home = await setup({});
    const web = (JSON.parse((await runCliInTerminal(home, ['web', '--json'])).stdout) as { data: { url: string } }).data;
    const tokenFile = join(home.home, '..', 'hook.token');
    expect((await runCliInTerminal(home, ['token', 'create', '--name', 'hook', '--ttl', '10m', '--out', tokenFile])).code).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const decide = (body: Record<string, unknown>): Promise<Response> =>
      fetch(`${web.url}api/v1/approvals.decide`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const allowed = runHook(['gemini'], shellEvent('gemini', 'npm publish'), home.env);
    const [first] = await waitForPending(home);
    expect(first).toMatchObject({ server: 'gemini', tool: 'run_shell_command', args: { command: 'npm publish' } });
    expect((await decide({ id: first?.id, behavior: 'allow' })).status).toBe(200);
    const released = await allowed;
    expect(released.code).toBe(0);
    expect(answerOf(released.stdout).raw).toEqual({ decision: 'allow', reason: expect.stringContaining(`web, approval ${first?.id ?? ''}`) });
    // The first resolver won: a second decision is a conflict.
    expect((await decide({ id: first?.id, behavior: 'deny' })).status).toBe(409);

    const denied = runHook(['codex'], shellEvent('codex', 'git push --force'), home.env);
    const [second] = await waitForPending(home);
    expect((await decide({ id: second?.id, behavior: 'deny', reason: 'not on main' })).status).toBe(200);
    const blocked = await denied;
    expect(blocked.code).toBe(0);
    expect(answerOf(blocked.stdout)).toMatchObject({ decision: 'deny', reason: expect.stringContaining('consent_denied') });
    expect(answerOf(blocked.stdout).reason).toContain('Reason given: not on main');
    await expect.poll(() => auditLines(home).map((line) => [line['agent'], line['outcome'], line['channel']])).toEqual([
      ['gemini', 'started', 'web'],
      ['codex', 'consent_denied', 'web'],
    ]);
  });

  it('R-CLI-3 R-D-6 a decision in one `assent watch` releases the waiting hook and the prompt disappears from every other open watch', async () => {
    const home = await setup({});
    const watchers = ['a', 'b'].map((name) => {
      const pty = new PtySession(['watch'], { outFile: join(home.home, `watch-${name}.out`), env: { ASSENT_HOME: home.home } });
      cleanups.push(() => pty.kill());
      return pty;
    });
    for (const pty of watchers) await pty.waitFor(/Waiting for requests/);
    const waiting = runHook(['codex'], shellEvent('codex', 'terraform apply -auto-approve'), home.env);
    const [first, second] = watchers as [PtySession, PtySession];
    for (const pty of watchers) await pty.waitFor(/command {3}terraform apply -auto-approve/);
    const code = await first.waitFor(/\[([a-z]{5})\] type ([a-z]{4}) \+ Enter/);
    first.type(`${code[2]}\r`);
    const result = await waiting;
    expect(result.code, result.stderr).toBe(0);
    expect(answerOf(result.stdout).decision).toBe('allow');
    await second.waitFor(new RegExp(`${code[1]} \\(codex/Bash\\) was approved via cli elsewhere; removed`));
    expect(await pending(home)).toEqual([]);
  });

  it('R-HOOK-2 changing one byte of tool_input between two identical-looking calls gives two approvals with different digests', async () => {
    const home = await setup({ hooks: { timeoutSeconds: 30 } });
    const a = runHook(['claude-code'], shellEvent('claude-code', 'deploy --target=prod'), home.env);
    const b = runHook(['claude-code'], shellEvent('claude-code', 'deploy --target=prod\u00a0'), home.env);
    const listed = await waitForPending(home, 2);
    expect(listed).toHaveLength(2);
    expect(listed[0]?.argsSha256).not.toBe(listed[1]?.argsSha256);
    for (const approval of listed) expect((await home.runCli(['deny', approval.id])).code).toBe(0);
    for (const result of await Promise.all([a, b])) expect(answerOf(result.stdout).decision).toBe('deny');
  });

  it('R-HOOK-6 R-HOOK-10 R-AUD-1 the decision line and the after-event line share a callId; agent, tool, argsSha256, outcome, durationMs; no raw command or path', async () => {
    const home = await setup(ALLOW_ALL);
    const secret = 'cat /home/me/.ssh/SECRET-KEY-FILE';
    const before = shellEvent('codex', secret, { tool_use_id: 'call_77', cwd: '/home/me/PRIVATE-DIR' });
    expect((await runHook(['codex'], before, home.env)).code).toBe(0);
    const after = await runHook(['codex', '--after'], { ...before, hook_event_name: 'PostToolUse', tool_response: 'output' }, home.env);
    expect(after).toMatchObject({ code: 0, stdout: '{}\n', stderr: '' });
    // Gemini: no tool-use id, matched by session, tool and input digest.
    const gemini = shellEvent('gemini', secret);
    expect((await runHook(['gemini'], gemini, home.env)).code).toBe(0);
    await runHook(['gemini', '--after'], { ...gemini, hook_event_name: 'AfterTool', tool_response: { llmContent: '', error: 'exit 1' } }, home.env);
    await expect.poll(() => auditLines(home).length).toBe(4);
    const lines = auditLines(home);
    const [codexStart, codexEnd, geminiStart, geminiEnd] = lines as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    expect(codexStart).toMatchObject({ agent: 'codex', server: 'codex', tool: 'Bash', outcome: 'started', waitedForConsentMs: 0 });
    expect(codexEnd).toMatchObject({ agent: 'codex', server: 'codex', tool: 'Bash', outcome: 'ok', callId: codexStart['callId'], argsSha256: codexStart['argsSha256'] });
    expect(typeof codexEnd['durationMs']).toBe('number');
    expect(geminiEnd).toMatchObject({ agent: 'gemini', outcome: 'error', callId: geminiStart['callId'] });
    const text = auditText(home);
    expect(text).not.toContain('SECRET-KEY-FILE');
    expect(text).not.toContain('PRIVATE-DIR');
    expect(text).not.toContain('.ssh');
  });

  it('the doctor canary is blocked through the installed path (hook, socket, daemon) and files and audits nothing', async () => {
    const home = await setup({ policy: { agents: { default: 'allow' }, tools: { 'claude/AssentDoctorCanary': 'allow' } } });
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      const event = { ...shellEvent(agent, ''), tool_name: 'AssentDoctorCanary', tool_input: {} };
      const result = await runHook([agent], event, home.env);
      expect(result.code).toBe(0);
      expect(answerOf(result.stdout)).toMatchObject({ decision: 'deny', reason: expect.stringContaining('assent doctor canary') });
    }
    expect(await pending(home)).toEqual([]);
    await home.runCli(['daemon', 'stop']);
    expect(auditLines(home)).toEqual([]);
    rmSync(home.paths.auditDir, { recursive: true, force: true });
  });
});
