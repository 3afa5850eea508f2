// SPEC §17 end to end: the real Claude Code, Codex and Gemini CLI, offline against
// scripted fake models, with `assent-hook.js` as their before- and after-tool
// hooks — installed into each run's temp HOME with `assent install <agent>` — and
// a real assent daemon. Each test is one acceptance line of the agent-hooks issue.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, AGENT_NAMES, AGENT_WIRE, agentClisAvailable, runAgent, type AgentName, type AgentRun } from '../../helpers/agentClis.js';
import { CLI_ENTRY, makeTempHome, REPO_ROOT, type TempHome, auditLines } from '../../helpers/daemon.js';
import { startFakeModel, type FakeModel, type ModelStep, type ToolResult } from '../../helpers/fakeModels.js';
import { HOOK_ENTRY } from '../../helpers/hook.js';
import { PtySession } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping agent hook tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const RUN_TIMEOUT_MS = 45_000;
const TEST_TIMEOUT_MS = 60_000;

/** The hook name of each harness agent, and the id its shell tool has in policy. */
const HOOK_NAME: Record<AgentName, 'claude-code' | 'codex' | 'gemini'> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini' };
const SHELL_ID: Record<AgentName, string> = { claude: 'claude/Bash', codex: 'codex/Bash', gemini: 'gemini/run_shell_command' };
const SHELL_TOOL: Record<AgentName, string> = { claude: 'Bash', codex: 'Bash', gemini: 'run_shell_command' };

/** How each CLI's model asks for its shell tool. */
const SHELL_STEP: Record<AgentName, (command: string) => ModelStep> = {
  claude: (command) => ({ tool: 'Bash', input: { command, description: 'hook test command' } }),
  codex: (command) => ({ tool: 'exec_command', input: { cmd: command } }),
  gemini: (command) => ({ tool: 'run_shell_command', input: { command } }),
};

const cleanups = cleanupsAfterEach();

/**
 * Installs assent's hooks into the run's temp HOME the way an operator would:
 * `assent install <agent>` with that HOME (and CODEX_HOME), reading
 * hooks.timeoutSeconds from the test's ASSENT_HOME for the hook timeout.
 */
async function installHooks(agent: AgentName, home: TempHome, agentHome: string): Promise<void> {
  const result = await home.runCli(['install', HOOK_NAME[agent], '--json'], { env: { HOME: agentHome, CODEX_HOME: join(agentHome, '.codex') } });
  expect(result.code, result.stderr).toBe(0);
  const installed = (JSON.parse(result.stdout) as { data: { command: string; changed: boolean } }).data;
  expect(installed.changed).toBe(true);
  expect(installed.command).toContain(HOOK_ENTRY);
}

async function daemonWith(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

interface Scene {
  work: string;
  model: FakeModel;
  run: Promise<AgentRun>;
}

/** Starts one headless run of `agent` whose hooks are assent's; the model plays `steps`, then "done". */
async function startScene(
  agent: AgentName,
  home: TempHome,
  steps: ModelStep[],
  options: { mcpServers?: Parameters<typeof runAgent>[1]['mcpServers']; afterInstall?: () => void } = {},
): Promise<Scene> {
  const dir = mkdtempSync(join(tmpdir(), `assent-hooks-${agent}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  mkdirSync(work);
  const model = await startFakeModel(AGENT_WIRE[agent], [...steps, { text: 'done' }]);
  cleanups.push(() => model.close());
  const run = runAgent(agent, {
    model,
    cwd: work,
    prompt: 'Run the command.',
    prepareHome: async (agentHome) => {
      await installHooks(agent, home, agentHome);
      options.afterInstall?.();
    },
    env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
    timeoutMs: RUN_TIMEOUT_MS,
    ...(options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers }),
  });
  return { work, model, run };
}

function describeRun(run: AgentRun): string {
  return `exit ${String(run.exitCode)}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(0, 1500)}\nstderr: ${run.stderr.slice(0, 1500)}`;
}

function lastResult(model: FakeModel, run: AgentRun): ToolResult {
  const result = model.toolResults().at(-1);
  expect(result, describeRun(run)).toBeDefined();
  return result as ToolResult;
}

interface Pending {
  id: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  caller: Record<string, unknown>;
}

/** The first pending approval; fails at once, with what the run did, when the run ends without filing one. */
async function waitForPending(home: TempHome, run?: Promise<AgentRun>): Promise<Pending> {
  let ended: AgentRun | undefined;
  void run?.then((finished) => (ended = finished));
  for (let i = 0; i < 600; i += 1) {
    if (ended !== undefined) throw new Error(`the agent run ended without filing an approval: ${describeRun(ended)}`);
    const list = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: Pending[] }).data;
    if (list[0] !== undefined) return list[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no approval was filed');
}

function auditText(home: TempHome): string {
  if (!existsSync(home.paths.auditDir)) return '';
  return readdirSync(home.paths.auditDir)
    .map((name) => readFileSync(join(home.paths.auditDir, name), 'utf8'))
    .join('');
}

/** Types `assent approve ID`'s code (or `n`) in a real terminal. */
async function decideInTerminal(home: TempHome, id: string, behavior: 'approve' | 'deny'): Promise<void> {
  const outFile = join(home.home, `${behavior}-${id}.out`);
  const pty = new PtySession(behavior === 'approve' ? ['approve', id] : ['deny', id], { outFile, env: { ASSENT_HOME: home.home } });
  cleanups.push(() => pty.kill());
  if (behavior === 'approve') {
    const code = await pty.waitFor(/Type ([a-z]{4}) to approve/);
    pty.type(`${code[1]}\r`);
  }
  expect((await pty.finish(outFile)).exitCode, pty.screen).toBe(0);
}

const COUNTER = 'ran.count';
/** A command whose every run appends one line: the count is how often it ran. */
const COUNT_COMMAND = `echo ran >> ${COUNTER}`;
/** The default policy allows COUNT_COMMAND (echo, a write under the cwd; R-POL-8): these tests make every command ask. */
const EVERY_COMMAND_ASKS = { commands: { default: 'prompt', rules: [] } };
const runsOf = (work: string): number => (existsSync(join(work, COUNTER)) ? readFileSync(join(work, COUNTER), 'utf8').split('\n').filter(Boolean).length : 0);

describe.skipIf(!available)('SPEC §17 agent hooks with the real CLIs', () => {
  for (const agent of AGENT_NAMES) {
    describe(agent, () => {
      it(
        `R-HOOK-3 R-HOOK-10 ${agent}: an allowed shell command runs with no approval filed; the audit has its started line and the after-hook's line with durationMs, and no raw command or path`,
        async () => {
          const home = await daemonWith({ policy: { tools: { [SHELL_ID[agent]]: 'allow' } } });
          const scene = await startScene(agent, home, [SHELL_STEP[agent](COUNT_COMMAND)]);
          const run = await scene.run;
          expect(run.exitCode, describeRun(run)).toBe(0);
          expect(runsOf(scene.work), describeRun(run)).toBe(1);
          expect((JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data).toEqual([]);
          await expect.poll(() => auditLines(home).length).toBe(2);
          const [started, ended] = auditLines(home) as [Record<string, unknown>, Record<string, unknown>];
          expect(started).toMatchObject({ agent: HOOK_NAME[agent], server: SHELL_ID[agent].split('/')[0], tool: SHELL_TOOL[agent], outcome: 'started', waitedForConsentMs: 0 });
          expect(ended).toMatchObject({ agent: HOOK_NAME[agent], tool: SHELL_TOOL[agent], outcome: 'ok', callId: started['callId'], argsSha256: started['argsSha256'] });
          expect(typeof ended['durationMs']).toBe('number');
          expect(auditText(home)).not.toContain(COUNTER);
          expect(auditText(home)).not.toContain(scene.work);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `R-HOOK-1 R-POL-6 ${agent}: a denied shell command is blocked and the model's next request carries a tool result with the reason`,
        async () => {
          const home = await daemonWith({ policy: { tools: { [SHELL_ID[agent]]: 'deny' } } });
          const scene = await startScene(agent, home, [SHELL_STEP[agent](COUNT_COMMAND)]);
          const run = await scene.run;
          expect(runsOf(scene.work), describeRun(run)).toBe(0);
          const result = lastResult(scene.model, run);
          expect(result.output).toContain(`assent refused ${SHELL_ID[agent]}: policy. The policy key policy.tools.${SHELL_ID[agent]}`);
          await expect.poll(() => auditLines(home)).toEqual([expect.objectContaining({ agent: HOOK_NAME[agent], outcome: 'denied', deniedReason: 'policy' })]);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `R-HOOK-3 R-CLI-1 R-CLI-2 ${agent}: a prompt command files an approval listed with agent, tool and the complete command; it runs exactly once after \`assent approve ID\` in a real terminal`,
        async () => {
          const home = await daemonWith({ policy: EVERY_COMMAND_ASKS });
          const command = `${COUNT_COMMAND} # \u202e tail`;
          const scene = await startScene(agent, home, [SHELL_STEP[agent](command)]);
          const listed = await waitForPending(home, scene.run);
          expect(listed).toMatchObject({ server: SHELL_ID[agent].split('/')[0], tool: SHELL_TOOL[agent], args: { command }, caller: { head: 'hook', agent: HOOK_NAME[agent], cwd: scene.work, kind: 'shell' } });
          expect(runsOf(scene.work)).toBe(0);
          await decideInTerminal(home, listed.id, 'approve');
          const run = await scene.run;
          expect(run.exitCode, describeRun(run)).toBe(0);
          expect(runsOf(scene.work), describeRun(run)).toBe(1);
          await expect.poll(() => auditLines(home).map((line) => line['outcome'])).toEqual(['started', 'ok']);
          expect(auditLines(home)[0]).toMatchObject({ channel: 'cli', approvalId: listed.id });
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `R-HOOK-3 ${agent}: a prompt command never runs after \`assent deny ID\`; the model is told consent_denied`,
        async () => {
          const home = await daemonWith({ policy: EVERY_COMMAND_ASKS });
          const scene = await startScene(agent, home, [SHELL_STEP[agent](COUNT_COMMAND)]);
          const listed = await waitForPending(home, scene.run);
          await decideInTerminal(home, listed.id, 'deny');
          const run = await scene.run;
          expect(runsOf(scene.work), describeRun(run)).toBe(0);
          expect(lastResult(scene.model, run).output).toContain('consent_denied');
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `R-HOOK-4 R-STATE-1 ${agent}: with the state directory writable by group and others the call is blocked`,
        async () => {
          const home = await daemonWith({ policy: { tools: { [SHELL_ID[agent]]: 'allow' } } });
          cleanups.push(() => chmodSync(home.home, 0o700));
          // `assent install` itself refuses such a state directory, so it is opened up after the install.
          const scene = await startScene(agent, home, [SHELL_STEP[agent](COUNT_COMMAND)], { afterInstall: () => chmodSync(home.home, 0o777) });
          const run = await scene.run;
          expect(runsOf(scene.work), describeRun(run)).toBe(0);
          expect(lastResult(scene.model, run).output).toContain('state_insecure');
        },
        TEST_TIMEOUT_MS,
      );
    });
  }

  it(
    'R-HOOK-4 gemini: a prompt left unanswered ends as consent_timeout after hooks.timeoutSeconds, before the agent\'s own hook timeout; the command never runs',
    async () => {
      const home = await daemonWith({ hooks: { timeoutSeconds: 2 }, policy: EVERY_COMMAND_ASKS });
      const started = performance.now();
      // `assent install` writes Gemini's hook timeout with the margin over hooks.timeoutSeconds and a spawn (17 s here, in ms).
      const scene = await startScene('gemini', home, [SHELL_STEP.gemini(COUNT_COMMAND)]);
      const run = await scene.run;
      expect(runsOf(scene.work), describeRun(run)).toBe(0);
      expect(lastResult(scene.model, run).output).toContain('consent_timeout');
      expect(performance.now() - started).toBeLessThan(17_000 + 10_000);
      await expect.poll(() => auditLines(home).map((line) => line['outcome'])).toEqual(['consent_timeout']);
    },
    TEST_TIMEOUT_MS,
  );

  /** How each CLI's model calls `echo` of the server entry `assent` (Claude Code loads a deferred MCP tool with ToolSearch first). */
  const GATEWAY_ECHO: Record<AgentName, ModelStep[]> = {
    claude: [
      { tool: 'ToolSearch', input: { query: 'select:mcp__assent__echo', max_results: 1 } },
      { tool: 'mcp__assent__echo', input: { message: 'through the gateway' } },
    ],
    // Codex builds each model request's tool router from the MCP servers started by then, and does not wait for them
    // before its first request: a server slower to start than that (`assent mcp` starts its upstream after the
    // daemon's pinned config) is missing from the first step. A shell step first gives the gateway that time.
    codex: [
      { tool: 'exec_command', input: { cmd: 'sleep 3' } },
      { tool: 'echo', namespace: 'mcp__assent', input: { message: 'through the gateway' } },
    ],
    gemini: [{ tool: 'mcp_assent_echo', input: { message: 'through the gateway' } }],
  };

  for (const agent of AGENT_NAMES) {
    it(
      `R-HOOK-5 ${agent}: an MCP tool reached through the \`assent mcp\` entry is approved once, at the gateway, not again by the hook`,
      async () => {
        const everything = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
        const home = await daemonWith({
          servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
          // ToolSearch only loads the tool's schema and Codex's shell step only waits; the prompt under test is the gateway's.
          policy: { default: 'allow', tools: { 'everything/echo': 'prompt', 'claude/ToolSearch': 'allow', 'codex/Bash': 'allow' } },
        });
        const scene = await startScene(agent, home, GATEWAY_ECHO[agent], {
          mcpServers: { assent: { command: process.execPath, args: [CLI_ENTRY, 'mcp'], env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' }, startupTimeoutSec: 30 } },
        });
        const listed = await waitForPending(home, scene.run);
        expect(listed).toMatchObject({ server: 'everything', tool: 'echo', args: { message: 'through the gateway' } });
        await decideInTerminal(home, listed.id, 'approve');
        const run = await scene.run;
        expect(lastResult(scene.model, run).output, describeRun(run)).toContain('Echo: through the gateway');
        // One approval, at the gateway; the hook's answer for the gateway's tool filed and audited nothing.
        await expect.poll(() => auditLines(home).filter((line) => line['approvalId'] !== undefined).map((line) => line['server'])).toEqual(['everything']);
        // ToolSearch (Claude Code) and the shell step that waits for the gateway (Codex) are the hook's own calls.
        expect(auditLines(home).filter((line) => line['agent'] !== undefined && line['tool'] !== 'ToolSearch' && line['tool'] !== 'Bash')).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );
  }
});
