// R-HOOK-12 with the built hook and a real daemon: a hook whose agent goes away
// while it waits (a signal; its parent gone; killed outright) withdraws its
// approval — it leaves `assent pending`, every view says "withdrawn by the
// agent", the audit has exactly one `withdrawn` line — and an allowed call
// whose after-event never comes gets one `no_outcome` line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditLines, makeTempHome, type TempHome } from '../helpers/daemon.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { HOOK_ENTRY, runHook, shellEvent } from '../helpers/hook.js';
import { PtySession } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();

async function setup(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

const EVERY_COMMAND_ASKS = { policy: { commands: { default: 'prompt', rules: [] } } };

async function pendingIds(home: TempHome): Promise<string[]> {
  return (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((a) => a.id);
}

async function waitForPending(home: TempHome): Promise<string> {
  for (let i = 0; i < 300; i += 1) {
    const [id] = await pendingIds(home);
    if (id !== undefined) return id;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no pending approval appeared');
}

function startHook(home: TempHome, command: string): ChildProcess {
  const child = spawn(process.execPath, [HOOK_ENTRY, 'claude-code', '--timeout', '60'], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  child.stdin?.end(JSON.stringify(shellEvent('claude-code', command)));
  return child;
}

const exitOf = (child: ChildProcess): Promise<number | null> => new Promise((resolve) => child.once('exit', (code) => resolve(code)));

async function expectWithdrawn(home: TempHome, id: string): Promise<void> {
  await expect.poll(() => pendingIds(home)).toEqual([]);
  await expect.poll(() => auditLines(home).filter((line) => line['approvalId'] === id).map((line) => line['outcome'])).toEqual(['withdrawn']);
  // Deciding it afterwards names what happened: nobody denied it.
  const late = await home.runCli(['deny', id]);
  expect(late.stderr).toContain(`approval ${id} was already withdrawn by the agent`);
}

describe('R-HOOK-12 withdrawn calls', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`R-HOOK-12 ${signal} to a waiting hook withdraws its approval: gone from pending, one withdrawn audit line; the hook still blocks (exit 2)`, async () => {
      const home = await setup(EVERY_COMMAND_ASKS);
      const hook = startHook(home, `echo ${signal}`);
      const id = await waitForPending(home);
      const exited = exitOf(hook);
      hook.kill(signal);
      expect(await exited).toBe(2);
      await expectWithdrawn(home, id);
    });
  }

  it('R-HOOK-12 a hook whose parent exits (no signal reaches the hook) withdraws its approval', async () => {
    const home = await setup(EVERY_COMMAND_ASKS);
    // A parent that starts the hook, hands it the event and exits, as an agent does that quits on Ctrl+C.
    const script = `
      const { spawn } = require('node:child_process');
      const hook = spawn(process.execPath, [${JSON.stringify(HOOK_ENTRY)}, 'gemini', '--timeout', '60'], { stdio: ['pipe', 'ignore', 'ignore'] });
      process.stdout.write(String(hook.pid) + '\\n');
      hook.stdin.end(${JSON.stringify(JSON.stringify({ hook_event_name: 'BeforeTool', session_id: 's-parent', cwd: '/tmp', tool_name: 'run_shell_command', tool_input: { command: 'echo parent' } }))});
      setTimeout(() => process.exit(0), 60_000);
    `;
    const parent = spawn(process.execPath, ['-e', script], { env: home.env, stdio: ['ignore', 'pipe', 'ignore'] });
    cleanups.push(() => parent.kill('SIGKILL'));
    const hookPid = await new Promise<number>((resolve) => parent.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString('utf8').trim()))));
    cleanups.push(() => {
      try {
        process.kill(hookPid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    });
    const id = await waitForPending(home);
    parent.kill('SIGKILL');
    await expectWithdrawn(home, id);
  });

  it('R-HOOK-12 a hook killed outright (SIGKILL, no chance to say anything) is withdrawn too: a hook never re-attaches', async () => {
    const home = await setup(EVERY_COMMAND_ASKS);
    const hook = startHook(home, 'echo killed');
    const id = await waitForPending(home);
    hook.kill('SIGKILL');
    await expectWithdrawn(home, id);
  });

  it('R-HOOK-12 `assent approve --watch` says "withdrawn by the agent", not "denied elsewhere"', async () => {
    const home = await setup(EVERY_COMMAND_ASKS);
    const outFile = `${home.home}/watch.out`;
    const watch = new PtySession(['approve', '--watch'], { outFile, env: { ASSENT_HOME: home.home } });
    cleanups.push(() => watch.kill());
    const hook = startHook(home, 'echo watched');
    const id = await waitForPending(home);
    await watch.waitFor(new RegExp(id));
    hook.kill('SIGTERM');
    await watch.waitFor(new RegExp(`${id} \\(claude/Bash\\) was withdrawn by the agent; removed\\.`), 10_000);
    expect(watch.screen).not.toMatch(/elsewhere/);
  });

  it('R-HOOK-12 an allowed call whose after-event never comes gets one no_outcome line after hooks.timeoutSeconds; a late after-event records nothing more', async () => {
    const home = await setup({ hooks: { timeoutSeconds: 1 }, policy: { tools: { 'claude/Bash': 'allow' } } });
    const event = shellEvent('claude-code', 'echo allowed');
    const before = await runHook(['claude-code', '--timeout', '20'], event, home.env);
    expect(before.code).toBe(0);
    await expect.poll(() => auditLines(home).map((line) => line['outcome']), { timeout: 5000 }).toEqual(['started', 'no_outcome']);
    const [started, ended] = auditLines(home) as [Record<string, unknown>, Record<string, unknown>];
    expect(ended).toMatchObject({ callId: started['callId'], agent: 'claude-code', tool: 'Bash' });
    expect(ended['durationMs']).toBeUndefined();
    await runHook(['claude-code', '--after', '--timeout', '20'], { ...event, hook_event_name: 'PostToolUse', tool_response: 'late' }, home.env);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(auditLines(home).map((line) => line['outcome'])).toEqual(['started', 'no_outcome']);
  });
});
