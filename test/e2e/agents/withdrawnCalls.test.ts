// R-HOOK-12 with the real CLIs: Esc in Claude Code's interactive TUI (in a
// PTY, offline against a fake model) while assent's hook waits for a person,
// and SIGINT to a waiting Gemini CLI run. Each withdraws the approval: it
// leaves `assent pending`, the audit has exactly one `withdrawn` line, a late
// decision is told "withdrawn by the agent", and the command never ran.
// Observed first: on Esc Claude Code sends SIGTERM to the hook's process group;
// Gemini CLI on SIGINT exits without signalling its hook (the hook's parent is gone).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, CLAUDE_BINARY, claudeOfflineEnv, runAgent } from '../../helpers/agentClis.js';
import { auditLines, makeTempHome, processesWithEnv, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel } from '../../helpers/fakeModels.js';
import { HOOK_ENTRY } from '../../helpers/hook.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping withdrawn-call agent tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const cleanups = cleanupsAfterEach();

async function daemonHome(): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { commands: { default: 'prompt', rules: [] } } }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

async function pendingIds(home: TempHome): Promise<string[]> {
  return (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((a) => a.id);
}

async function waitForPending(home: TempHome, why: () => string): Promise<string> {
  for (let i = 0; i < 600; i += 1) {
    const [id] = await pendingIds(home);
    if (id !== undefined) return id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no approval was filed: ${why()}`);
}

async function expectWithdrawn(home: TempHome, id: string, marker: string): Promise<void> {
  await expect.poll(() => pendingIds(home), { timeout: 10_000 }).toEqual([]);
  await expect.poll(() => auditLines(home).filter((line) => line['approvalId'] === id).map((line) => line['outcome']), { timeout: 10_000 }).toEqual(['withdrawn']);
  expect(auditLines(home).filter((line) => line['outcome'] === 'withdrawn')).toHaveLength(1);
  expect((await home.runCli(['deny', id])).stderr).toContain(`approval ${id} was already withdrawn by the agent`);
  expect(existsSync(marker)).toBe(false);
}

const hookCommand = (agent: string, after = false): string => `"${process.execPath}" "${HOOK_ENTRY}" ${agent}${after ? ' --after' : ''} --timeout 60`;

describe.skipIf(!available)('R-HOOK-12 the real CLIs withdraw a waiting call', () => {
  it(
    'R-HOOK-12 claude: Esc in the interactive TUI while the hook waits withdraws the approval (one withdrawn line, gone from pending)',
    async () => {
      const home = await daemonHome();
      const agentHome = mkdtempSync(join(tmpdir(), 'assent-esc-'));
      cleanups.push(() => {
        for (const pid of processesWithEnv(`HOME=${agentHome}`)) process.kill(pid, 'SIGKILL');
        rmSync(agentHome, { recursive: true, force: true });
      });
      const work = join(agentHome, 'work');
      mkdirSync(work);
      mkdirSync(join(agentHome, 'tmp'));
      mkdirSync(join(agentHome, '.claude'));
      const marker = join(work, 'esc.ran');
      const model = await startFakeModel('anthropic', [{ tool: 'Bash', input: { command: `touch ${marker}`, description: 'esc test' } }, { text: 'done' }]);
      cleanups.push(() => model.close());
      writeFileSync(
        join(agentHome, '.claude', 'settings.json'),
        JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand('claude-code'), timeout: 60 }] }] } }),
      );
      // No first-run screens: onboarding done, the key and the folder trusted.
      writeFileSync(
        join(agentHome, '.claude.json'),
        JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', customApiKeyResponses: { approved: ['fake-key'], rejected: [] }, projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
      );
      let screen = '';
      const pty: IPty = spawnPty(CLAUDE_BINARY, ['Run the command.'], {
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
      // eslint-disable-next-line no-control-regex -- removing the terminal's escape sequences is the point
      const plain = (): string => screen.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '').slice(-2000);
      const id = await waitForPending(home, plain);
      // The TUI shows the hook running; Esc interrupts the turn.
      await expect.poll(() => /running PreToolUse hook/.test(plain()), { timeout: 10_000 }).toBe(true);
      pty.write('\x1b');
      await expectWithdrawn(home, id, marker);
      expect(plain()).toMatch(/Interrupted/);
    },
    90_000,
  );

  it(
    'R-HOOK-12 gemini: SIGINT to a run whose hook waits withdraws the approval (one withdrawn line, gone from pending), and nothing runs',
    async () => {
      const home = await daemonHome();
      const dir = mkdtempSync(join(tmpdir(), 'assent-sigint-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const marker = join(dir, 'sigint.ran');
      const model = await startFakeModel('gemini', [{ tool: 'run_shell_command', input: { command: `touch ${marker}` } }, { text: 'done' }]);
      cleanups.push(() => model.close());
      let agentHome = '';
      const run = runAgent('gemini', {
        model,
        cwd: dir,
        hooks: { BeforeTool: hookCommand('gemini'), AfterTool: hookCommand('gemini', true) },
        hookTimeoutSeconds: 60,
        env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
        timeoutMs: 45_000,
        prepareHome: (home_) => {
          agentHome = home_;
        },
      });
      let ended = false;
      void run.then(() => (ended = true));
      const id = await waitForPending(home, () => (ended ? 'the run ended' : 'still running'));
      // The CLI's own processes (its launcher and the relaunched child), not the hook: Ctrl+C as `kill -INT` would send it.
      const gemini = processesWithEnv(`HOME=${agentHome}`).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('gemini.js');
        } catch {
          return false;
        }
      });
      expect(gemini.length).toBeGreaterThan(0);
      for (const pid of gemini) process.kill(pid, 'SIGINT');
      const finished = await run;
      expect(finished.timedOut).toBe(false);
      await expectWithdrawn(home, id, marker);
    },
    90_000,
  );
});
