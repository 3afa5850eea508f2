// R-HOOK-11 with the real Claude Code, Codex and Gemini CLI: an agent hook
// timeout only slightly above hooks.timeoutSeconds (6 s over 4 s, written as
// `install` writes the command, with --timeout), no daemon running, and a daemon
// that really takes 10 s to start. One run per CLI makes two calls that nobody
// answers: the first meets the slow spawn, the second (held by the fake model
// until the daemon answers) a filed approval. Both end as assent's deny, which
// the CLI honours before its own timeout: the commands never run, and Codex and
// Gemini CLI would have run them had the hook timed out.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, AGENT_EVENTS, AGENT_NAMES, AGENT_WIRE, agentClisAvailable, runAgent, type AgentName, type AgentRun } from '../../helpers/agentClis.js';
import { auditLines, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel, type ModelStep, type RecordedRequest } from '../../helpers/fakeModels.js';
import { HOOK_ENTRY } from '../../helpers/hook.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping agent hook deadline tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const HOOK_TIMEOUT_SECONDS = 4;
const AGENT_TIMEOUT_SECONDS = 6;
const SPAWN_DELAY_MS = 10_000;
const HOOK_NAME: Record<AgentName, 'claude-code' | 'codex' | 'gemini'> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini' };
const SHELL_STEP: Record<AgentName, (command: string) => ModelStep> = {
  claude: (command) => ({ tool: 'Bash', input: { command, description: 'deadline test' } }),
  codex: (command) => ({ tool: 'exec_command', input: { cmd: command } }),
  gemini: (command) => ({ tool: 'run_shell_command', input: { command } }),
};

const cleanups = cleanupsAfterEach();

/**
 * A preload that makes `assent daemon run` (and nothing else) block for 10 s
 * before its code runs: the real daemon, spawned by the real hook, is slow to
 * answer, the way a loaded machine or a cold disk makes it.
 */
function slowDaemonPreload(dir: string): string {
  const file = join(dir, 'slowDaemon.mjs');
  writeFileSync(
    file,
    `if (process.argv[1]?.endsWith('/dist/bin/assent.js') && process.argv[2] === 'daemon' && process.argv[3] === 'run') {\n` +
      `  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${SPAWN_DELAY_MS});\n}\n`,
  );
  return file;
}

async function daemonAnswers(home: TempHome): Promise<boolean> {
  if (!existsSync(home.paths.socket)) return false;
  return (await home.runCli(['daemon', 'status', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } })).code === 0;
}

function describeRun(run: AgentRun): string {
  return `exit ${String(run.exitCode)}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(0, 1500)}\nstderr: ${run.stderr.slice(0, 1500)}`;
}

describe.skipIf(!available)('R-HOOK-11 the hook answers before the agent gives up on it', () => {
  for (const agent of AGENT_NAMES) {
    it(
      `R-HOOK-11 R-HOOK-4 ${agent}: with a ${AGENT_TIMEOUT_SECONDS} s agent timeout over hooks.timeoutSeconds ${HOOK_TIMEOUT_SECONDS}, a call during a 10 s daemon spawn and an unanswered approval both end as a deny the CLI honours before its timeout`,
      async () => {
        const home = makeTempHome();
        cleanups.push(() => home.cleanup());
        mkdirSync(home.home, { mode: 0o700 });
        writeFileSync(
          home.paths.config,
          JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, hooks: { timeoutSeconds: HOOK_TIMEOUT_SECONDS }, policy: { commands: { default: 'prompt', rules: [] } } }),
          { mode: 0o600 },
        );
        const dir = mkdtempSync(join(tmpdir(), `assent-deadline-${agent}-`));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        const work = join(dir, 'work');
        mkdirSync(work);
        const preload = slowDaemonPreload(dir);
        const timing: { firstCallServed?: number; firstResultAt?: number; daemonUpAt?: number; secondCallServed?: number; secondResultAt?: number } = {};
        let pendingAfter: unknown[] | undefined;
        const carries = (request: RecordedRequest, text: string): boolean => JSON.stringify(request.body).includes(text);
        const model = await startFakeModel(AGENT_WIRE[agent], [SHELL_STEP[agent]('touch first.ran'), SHELL_STEP[agent]('touch second.ran'), { text: 'done' }], {
          beforeReply: async (request) => {
            if (carries(request, 'second.ran') && carries(request, 'consent_timeout') && timing.secondResultAt === undefined) {
              timing.secondResultAt = Date.now();
              // While the daemon still runs (the run's end stops whatever carries its HOME): nothing waits any more.
              pendingAfter = (JSON.parse((await home.runCli(['pending', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } })).stdout) as { data: unknown[] }).data;
            }
            // The model's next turn waits until the slow daemon answers, so the second call meets a running daemon.
            if (carries(request, 'first.ran') && carries(request, "hook's deadline")) {
              timing.firstResultAt ??= Date.now();
              for (let i = 0; i < 400 && !(await daemonAnswers(home)); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
              timing.daemonUpAt ??= Date.now();
            }
          },
        });
        cleanups.push(() => model.close());
        const served = (): void => {
          const turns = model.turns().length;
          if (turns === 1) timing.firstCallServed ??= Date.now();
        };
        const poll = setInterval(served, 20);
        cleanups.push(() => clearInterval(poll));
        const command = (after: boolean): string => `"${process.execPath}" "${HOOK_ENTRY}" ${HOOK_NAME[agent]}${after ? ' --after' : ''} --timeout ${AGENT_TIMEOUT_SECONDS}`;
        const run = await runAgent(agent, {
          model,
          cwd: work,
          prompt: 'Run the commands.',
          hooks: { [AGENT_EVENTS[agent].before]: command(false), [AGENT_EVENTS[agent].after]: command(true) },
          hookTimeoutSeconds: AGENT_TIMEOUT_SECONDS,
          env: { ASSENT_HOME: home.home, NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` },
          timeoutMs: 60_000,
        });
        const detail = `${describeRun(run)}\ntiming: ${JSON.stringify(timing)}`;
        // Neither command ran: Codex and Gemini CLI run a call whose hook timed out, so each deny came first.
        expect(existsSync(join(work, 'first.ran')), detail).toBe(false);
        expect(existsSync(join(work, 'second.ran')), detail).toBe(false);
        const results = model.toolResults();
        expect(results, detail).toHaveLength(2);
        expect(results[0]?.output, detail).toMatch(/assent blocked .*timeout \(no decision within the hook's deadline of 3 s/);
        expect(results[1]?.output, detail).toMatch(/assent refused .*consent_timeout \(approval [a-z]{5}\)\. Nobody approved the call within \d+(\.\d)? s, all the agent's own hook timeout leaves/);
        // The daemon really was slow: it answered only about 10 s after the first hook started it.
        expect((timing.daemonUpAt ?? 0) - (timing.firstCallServed ?? Infinity), detail).toBeGreaterThanOrEqual(SPAWN_DELAY_MS - 1000);
        // The first deny reached the CLI before its own timeout, counted from when the model asked for the call.
        expect((timing.firstResultAt ?? Infinity) - (timing.firstCallServed ?? 0), detail).toBeLessThan(AGENT_TIMEOUT_SECONDS * 1000);
        // The approval left the queue as consent_timeout, audited once; nothing waits.
        expect(pendingAfter, detail).toEqual([]);
        await expect.poll(() => auditLines(home).map((line) => line['outcome'])).toEqual(['consent_timeout']);
      },
      90_000,
    );
  }
});
