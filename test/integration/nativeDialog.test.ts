// R-HOOK-9 with the built hook and a real daemon, Claude Code's events as
// observed: with hooks.claudeNativePrompt a prompt answers `ask` and stays filed
// in assent; the PermissionRequest hook waits for that approval's decision,
// whoever gives it; its end before a decision (the dialog's "no") and an
// after-event (the dialog's "yes") are the person's answer, channel `agent`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditLines, makeTempHome, type TempHome } from '../helpers/daemon.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { answerOf, HOOK_ENTRY, runHook, shellEvent } from '../helpers/hook.js';

const cleanups = cleanupsAfterEach();

async function setup(hooks: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(
    home.paths.config,
    JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, hooks, policy: { commands: { default: 'prompt', rules: [] } }, ...extra }),
    { mode: 0o600 },
  );
  await home.startDaemon();
  return home;
}

const NATIVE = { claudeNativePrompt: true };

async function pendingIds(home: TempHome): Promise<string[]> {
  return (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((a) => a.id);
}

/** What the PermissionRequest hook gets: the PreToolUse event's call, without a tool-use id. */
function dialogEvent(pre: Record<string, unknown>): Record<string, unknown> {
  const { tool_use_id: _id, ...rest } = pre;
  return { ...rest, hook_event_name: 'PermissionRequest', permission_suggestions: [] };
}

function afterEvent(pre: Record<string, unknown>): Record<string, unknown> {
  return { ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: '', stderr: '', interrupted: false } };
}

interface Running {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string }>;
}

/** Whether the process holds a socket beyond its stdio (which Node's spawn makes socket pairs): the hook's one connection to the daemon. */
function connected(child: ChildProcess): boolean {
  try {
    return readdirSync(`/proc/${child.pid}/fd`).some((fd) => {
      if (Number(fd) <= 2) return false;
      try {
        return readlinkSync(`/proc/${child.pid}/fd/${fd}`).startsWith('socket:');
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

function startDialogHook(home: TempHome, event: Record<string, unknown>): Running {
  const child = spawn(process.execPath, [HOOK_ENTRY, 'claude-code', '--timeout', '60'], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  const done = new Promise<{ code: number | null; stdout: string }>((resolve) => child.once('exit', (code) => resolve({ code, stdout })));
  child.stdin?.end(JSON.stringify(event));
  return { child, done };
}

/** The PreToolUse answer `ask` and the approval id it names. */
async function ask(home: TempHome, pre: Record<string, unknown>): Promise<string> {
  const run = await runHook(['claude-code', '--timeout', '60'], pre, home.env);
  expect(run.code, run.stderr).toBe(0);
  const answer = answerOf(run.stdout);
  expect(answer.decision).toBe('ask');
  const id = /approval ([a-z0-9]+)/.exec(answer.reason)?.[1];
  expect(id, answer.reason).toBeDefined();
  expect(await pendingIds(home)).toEqual([id]);
  return id as string;
}

const linesOf = (home: TempHome, id: string): Record<string, unknown>[] => auditLines(home).filter((line) => line['approvalId'] === id);

describe('R-HOOK-9 approving in the agent\'s own dialog (hooks.claudeNativePrompt)', () => {
  it('R-HOOK-9 a decision in assent answers the waiting PermissionRequest hook in the dialog\'s form (here `assent deny`; the TUI test approves), so the dialog closes', async () => {
    const home = await setup(NATIVE);
    const pre = shellEvent('claude-code', 'echo approved-by-cli');
    const id = await ask(home, pre);
    const dialog = startDialogHook(home, dialogEvent(pre));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const denied = await home.runCli(['deny', id]);
    expect(denied.code, denied.stderr).toBe(0);
    const answer = await dialog.done;
    expect(answer.code).toBe(0);
    expect(JSON.parse(answer.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny' } } });
    // The decision's line is written in the audit's next batch, which may follow the hook's answer.
    await expect.poll(() => linesOf(home, id).map((line) => [line['outcome'], line['channel']]), { timeout: 10_000 }).toEqual([['consent_denied', 'cli']]);
  });

  it('R-HOOK-9 the PermissionRequest hook ending before a decision (the dialog\'s "no" sends it SIGTERM) denies the approval, channel agent', async () => {
    const home = await setup(NATIVE);
    const pre = shellEvent('claude-code', 'echo declined-in-dialog');
    const id = await ask(home, pre);
    const dialog = startDialogHook(home, dialogEvent(pre));
    // Once its connection to the daemon is open (and its request sent), as the dialog is when a person answers it.
    await expect.poll(() => connected(dialog.child), { timeout: 10_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    dialog.child.kill('SIGTERM');
    // The hook still answers, a deny in the dialog's form, once its withdrawal reached the daemon.
    const ended = await dialog.done;
    expect(ended.code).toBe(0);
    expect(JSON.parse(ended.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny' } } });
    await expect.poll(() => linesOf(home, id).map((line) => [line['outcome'], line['channel']]), { timeout: 10_000 }).toEqual([['consent_denied', 'agent']]);
    expect(await pendingIds(home)).toEqual([]);
  });

  it('R-HOOK-9 an after-event for a call still pending (the dialog\'s "yes") approves it with channel agent and records its end; the waiting dialog hook is answered allow', async () => {
    const home = await setup(NATIVE);
    const pre = shellEvent('claude-code', 'echo yes-in-dialog');
    const id = await ask(home, pre);
    const dialog = startDialogHook(home, dialogEvent(pre));
    await expect.poll(() => connected(dialog.child), { timeout: 10_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await runHook(['claude-code', '--after', '--timeout', '60'], afterEvent(pre), home.env);
    expect(after.code).toBe(0);
    expect(after.stderr).toBe('');
    await expect.poll(() => linesOf(home, id).map((line) => [line['outcome'], line['channel']])).toEqual([
      ['started', 'agent'],
      ['ok', 'agent'],
    ]);
    expect(JSON.parse((await dialog.done).stdout)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'allow' } } });
    const audit = JSON.stringify(auditLines(home));
    expect(audit).not.toContain('yes-in-dialog');
  });

  it('R-HOOK-9 a dialog for a call assent filed nothing for is refused in the dialog\'s form (exit 0, deny), and without claudeNativePrompt a prompt waits in assent as before', async () => {
    const home = await setup({ claudeNativePrompt: false, timeoutSeconds: 5 });
    const pre = shellEvent('claude-code', 'echo nothing-filed');
    const dialog = await runHook(['claude-code', '--timeout', '60'], dialogEvent(pre), home.env);
    expect(dialog.code).toBe(0);
    expect(JSON.parse(dialog.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: expect.stringContaining('no approval filed by assent') } } });
    const waiting = runHook(['claude-code', '--timeout', '60'], pre, home.env);
    await expect.poll(() => pendingIds(home)).toHaveLength(1);
    const [id] = await pendingIds(home);
    expect((await home.runCli(['deny', id as string])).code).toBe(0);
    expect(answerOf((await waiting).stdout).decision).toBe('deny');
  });

  it('R-HOOK-9 an action that needs four eyes is never shown in the dialog: it waits in assent', async () => {
    const home = await setup({ ...NATIVE, timeoutSeconds: 5 }, { approvals: { fourEyes: true } });
    const waiting = runHook(['claude-code', '--timeout', '60'], shellEvent('claude-code', 'echo four-eyes'), home.env);
    await expect.poll(() => pendingIds(home)).toHaveLength(1);
    const [id] = await pendingIds(home);
    expect((await home.runCli(['deny', id as string])).code).toBe(0);
    expect(answerOf((await waiting).stdout).decision).toBe('deny');
  });
});
