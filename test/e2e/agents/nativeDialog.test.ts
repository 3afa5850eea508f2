// R-HOOK-9 with the real Claude Code TUI in a PTY, offline against a fake model:
// with hooks.claudeNativePrompt on, `assent install claude-code` writes the
// PermissionRequest hook too, a prompt shows Claude Code's own dialog while the
// approval is filed in assent, and the first answer decides. One run carries three
// calls: "yes" in the dialog, `assent approve` (which closes the dialog), and "no"
// in the dialog. Each call appends its word to a file, so a second run would show.
// Observed first (Claude Code 2.1.328): the dialog's "no" sends SIGTERM to the
// PermissionRequest hook; its "yes" leaves the hook running and runs the call.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, CLAUDE_BINARY, claudeOfflineEnv } from '../../helpers/agentClis.js';
import { auditLines, cleanEnv, makeTempHome, processesWithEnv, runCli, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel } from '../../helpers/fakeModels.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { runInTerminal } from '../../helpers/pty.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping in-dialog approval tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const cleanups = cleanupsAfterEach();

async function pending(home: TempHome): Promise<{ id: string; argsSha256?: string }[]> {
  return (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data;
}

async function nextPending(home: TempHome, seen: Set<string>, why: () => string): Promise<string> {
  for (let i = 0; i < 600; i += 1) {
    const fresh = (await pending(home)).find((approval) => !seen.has(approval.id));
    if (fresh !== undefined) {
      seen.add(fresh.id);
      return fresh.id;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no approval was filed: ${why()}`);
}

const readingPause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1000));

describe.skipIf(!available)('R-HOOK-9 approving in Claude Code\'s own dialog (hooks.claudeNativePrompt)', () => {
  it(
    'R-HOOK-9 a prompt shows the dialog and is pending in assent; "yes" there runs it once (channel agent), `assent approve` closes the dialog and runs it once, "no" there runs nothing (denied, channel agent)',
    async () => {
      const home = makeTempHome();
      cleanups.push(() => home.cleanup());
      mkdirSync(home.home, { mode: 0o700 });
      writeFileSync(
        home.paths.config,
        JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, hooks: { claudeNativePrompt: true }, policy: { commands: { default: 'prompt', rules: [] } } }),
        { mode: 0o600 },
      );
      await home.startDaemon();
      const agentHome = mkdtempSync(join(tmpdir(), 'assent-dialog-'));
      cleanups.push(() => {
        for (const pid of processesWithEnv(`HOME=${agentHome}`)) process.kill(pid, 'SIGKILL');
        rmSync(agentHome, { recursive: true, force: true });
      });
      const work = join(agentHome, 'work');
      mkdirSync(work);
      mkdirSync(join(agentHome, 'tmp'));
      const ran = join(work, 'ran.log');
      const words = ['one', 'two', 'three'] as const;
      const model = await startFakeModel('anthropic', [
        ...words.map((word) => ({ tool: 'Bash', input: { command: `echo ${word} >> ${ran}`, description: `dialog ${word}` } })),
        { text: 'done' },
      ]);
      cleanups.push(() => model.close());

      // The real install, from the daemon's pinned configuration: it writes PermissionRequest beside PreToolUse and PostToolUse.
      const installEnv = cleanEnv({ HOME: agentHome, ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' });
      const installed = await runCli(['install', 'claude-code'], { env: installEnv });
      expect(installed.code, installed.stderr).toBe(0);
      const settings = JSON.parse(readFileSync(join(agentHome, '.claude', 'settings.json'), 'utf8')) as { hooks: Record<string, unknown[]> };
      expect(Object.keys(settings.hooks).sort()).toEqual(['PermissionRequest', 'PostToolUse', 'PreToolUse']);
      const doctor = await runCli(['doctor', '--json'], { env: installEnv });
      const report = (JSON.parse(doctor.stdout) as { data: { agents: { agent: string; problems: string[] }[] } }).data.agents.find((a) => a.agent === 'claude-code');
      expect(report?.problems, doctor.stdout).toEqual([]);

      // No first-run screens: onboarding done, the key and the folder trusted.
      writeFileSync(
        join(agentHome, '.claude.json'),
        JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', customApiKeyResponses: { approved: ['fake-key'], rejected: [] }, projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
      );
      let screen = '';
      const pty: IPty = spawnPty(CLAUDE_BINARY, ['Run the commands.'], {
        name: 'xterm-256color',
        cols: 160,
        rows: 40,
        cwd: work,
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          HOME: agentHome,
          TERM: 'xterm-256color',
          LANG: 'C.UTF-8',
          ASSENT_HOME: home.home,
          ASSENT_NO_AUTOSPAWN: '1',
          HTTPS_PROXY: 'http://127.0.0.1:9',
          NO_PROXY: '127.0.0.1,localhost',
          ...claudeOfflineEnv(agentHome, model),
        },
      });
      cleanups.push(() => {
        try {
          pty.kill('SIGKILL');
        } catch {
          // Gone already.
        }
      });
      pty.onData((data) => (screen += data));
      // The screen as text without escapes or spacing (the TUI positions words with cursor moves).
      // eslint-disable-next-line no-control-regex -- removing the terminal's escape sequences is the point
      const flat = (): string => screen.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '').replace(/\s+/g, '');
      const tail = (): string => flat().slice(-1500);
      const ranLines = (): string[] => (existsSync(ran) ? readFileSync(ran, 'utf8').split('\n').filter(Boolean) : []);
      // The dialog of one approval: its reason names the approval id, and the question follows it.
      const dialogOpen = (id: string): boolean => {
        const text = flat();
        const at = text.lastIndexOf(`approval${id}`);
        return at >= 0 && /Doyouwanttoproceed\?/.test(text.slice(at));
      };
      const linesOf = (id: string): Record<string, unknown>[] => auditLines(home).filter((line) => line['approvalId'] === id);
      const seen = new Set<string>();

      // 1. The dialog opens and the approval is pending in assent at the same time; "yes" in the dialog runs it once.
      const first = await nextPending(home, seen, tail);
      await expect.poll(() => dialogOpen(first), { timeout: 15_000 }).toBe(true);
      // A person reads the dialog first; by then its PermissionRequest hook is waiting on the daemon.
      await readingPause();
      pty.write('1');
      await expect.poll(() => linesOf(first).map((line) => line['outcome']), { timeout: 15_000 }).toEqual(['started', 'ok']);
      expect(linesOf(first).map((line) => line['channel'])).toEqual(['agent', 'agent']);
      expect(ranLines()).toEqual(['one']);

      // 2. `assent approve` answers the open dialog through the PermissionRequest hook: it closes and the call runs once.
      const second = await nextPending(home, seen, tail);
      await expect.poll(() => dialogOpen(second), { timeout: 15_000 }).toBe(true);
      const approved = await runInTerminal(['approve', second], { env: { ASSENT_HOME: home.home }, typeCode: true });
      expect(approved.exitCode, approved.screen).toBe(0);
      await expect.poll(() => linesOf(second).map((line) => line['outcome']), { timeout: 15_000 }).toEqual(['started', 'ok']);
      expect(linesOf(second).map((line) => line['channel'])).toEqual(['cli', 'cli']);
      expect(ranLines()).toEqual(['one', 'two']);

      // 3. The next call's dialog is a new one (the approved one did not stay open); "no" there runs nothing.
      const third = await nextPending(home, seen, tail);
      await expect.poll(() => dialogOpen(third), { timeout: 15_000 }).toBe(true);
      await readingPause();
      pty.write('2');
      await expect.poll(() => linesOf(third).map((line) => line['outcome']), { timeout: 15_000 }).toEqual(['consent_denied']);
      expect(linesOf(third)[0]).toMatchObject({ channel: 'agent', deniedReason: 'consent_denied' });
      await expect.poll(() => /Interrupted/.test(tail()), { timeout: 10_000 }).toBe(true);
      expect(await pending(home)).toEqual([]);
      expect((await home.runCli(['deny', third])).stderr).toContain(`approval ${third} was already denied`);

      // Nothing ran twice, even with the first dialog's hook answered late; the audit names the agent and digest, never the command.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(ranLines()).toEqual(['one', 'two']);
      const lines = auditLines(home).filter((line) => line['agent'] === 'claude-code');
      expect(lines.length).toBeGreaterThanOrEqual(5);
      for (const line of lines) {
        expect(line).toMatchObject({ agent: 'claude-code', tool: 'Bash', argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/) });
        expect(typeof line['outcome']).toBe('string');
      }
      const audit = JSON.stringify(auditLines(home));
      for (const word of words) expect(audit).not.toContain(`echo ${word}`);
      expect(audit).not.toContain(ran);
    },
    120_000,
  );
});
