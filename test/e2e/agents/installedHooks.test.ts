// `assent install <agent>` into a real agent CLI's temp HOME, then that CLI run
// headless against a fake model (R-HOOK-7, R-HOOK-1): the settings install wrote
// are the ones the CLI reads, and its real hook blocks a shell command the policy
// denies. `assent doctor` in the same HOME proves the installed hook blocks the canary.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, AGENT_NAMES, AGENT_WIRE, agentClisAvailable, runAgent, type AgentName } from '../../helpers/agentClis.js';
import { cleanEnv, makeTempHome, runCli, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel, type ModelStep } from '../../helpers/fakeModels.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping agent install tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const MARKER = 'denied.marker';
const HOOK_AGENT: Record<AgentName, string> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini' };
const SHELL: Record<AgentName, { step: ModelStep; toolId: string }> = {
  claude: { step: { tool: 'Bash', input: { command: `touch ${MARKER}`, description: 'install test' } }, toolId: 'claude/Bash' },
  codex: { step: { tool: 'exec_command', input: { cmd: `touch ${MARKER}` } }, toolId: 'codex/Bash' },
  gemini: { step: { tool: 'run_shell_command', input: { command: `touch ${MARKER}` } }, toolId: 'gemini/run_shell_command' },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!available)('R-HOOK-7 assent install into the real agent CLIs', () => {
  for (const agent of AGENT_NAMES) {
    it(
      `${agent}: after \`assent install ${HOOK_AGENT[agent]}\` the real CLI runs assent's hook, which blocks a shell command the policy denies; doctor sees the canary blocked`,
      async () => {
        const state: TempHome = makeTempHome();
        cleanups.push(() => state.cleanup());
        mkdirSync(state.home, { mode: 0o700 });
        writeFileSync(join(state.home, 'config.json'), JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { tools: { [SHELL[agent].toolId]: 'deny' } } }), { mode: 0o600 });
        await state.startDaemon();
        const work = mkdtempSync(join(tmpdir(), `assent-install-${agent}-`));
        cleanups.push(() => rmSync(work, { recursive: true, force: true }));
        const model = await startFakeModel(AGENT_WIRE[agent], [SHELL[agent].step, { text: 'done' }]);
        cleanups.push(() => model.close());
        let installed = { code: -1 as number | null, stdout: '', stderr: '' };
        let doctor = { code: -1 as number | null, stdout: '', stderr: '' };
        const run = await runAgent(agent, {
          model,
          cwd: work,
          env: { ASSENT_HOME: state.home, ASSENT_NO_AUTOSPAWN: '1' },
          timeoutMs: 45_000,
          prepareHome: async (home) => {
            const env = cleanEnv({ HOME: home, ASSENT_HOME: state.home, CODEX_HOME: join(home, '.codex'), ASSENT_NO_AUTOSPAWN: '1' });
            // Gemini CLI reads comments in its settings.json: install keeps them, and the CLI still reads the hooks it wrote beside them.
            const geminiSettings = join(home, '.gemini', 'settings.json');
            if (agent === 'gemini') writeFileSync(geminiSettings, `// the fake model's settings\n${readFileSync(geminiSettings, 'utf8').replace(/\n}\s*$/, ' /* end */\n}\n')}`);
            installed = await runCli(['install', HOOK_AGENT[agent]], { env });
            if (agent === 'gemini') expect(readFileSync(geminiSettings, 'utf8')).toMatch(/^\/\/ the fake model's settings\n[^]*"BeforeTool"[^]* \/\* end \*\/\n\}\n$/);
            // What Codex's /hooks review records (`codex exec` here bypasses it); doctor only checks that it is there.
            if (agent === 'codex') appendFileSync(join(home, '.codex', 'config.toml'), `\n[hooks.state.${JSON.stringify(`${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0`)}]\ntrusted_hash = "sha256:${'0'.repeat(64)}"\n`);
            doctor = await runCli(['doctor', '--json'], { env });
          },
        });
        expect(installed.code, installed.stderr).toBe(0);
        const report = (JSON.parse(doctor.stdout) as { data: { agents: { agent: string; installed: boolean; blocksCanary: boolean; problems: string[] }[] } }).data.agents.find(
          (a) => a.agent === HOOK_AGENT[agent],
        );
        expect(report, doctor.stdout).toMatchObject({ installed: true, blocksCanary: true, problems: [] });
        expect(doctor.code, doctor.stdout).toBe(0);
        const detail = `exit ${String(run.exitCode)}\nstdout: ${run.stdout.slice(0, 1500)}\nstderr: ${run.stderr.slice(0, 1500)}`;
        expect(existsSync(join(work, MARKER)), detail).toBe(false);
        const results = model.toolResults();
        expect(results, detail).toHaveLength(1);
        expect(results[0]?.output, detail).toContain(SHELL[agent].toolId);
      },
      90_000,
    );
  }
});
