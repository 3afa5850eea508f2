// What a person at the agent's screen sees of assent (issue 20, items 1 and 2),
// with the real CLIs offline against fake models and assent installed by
// `assent install`: each CLI reports the hook of an allowed call as completed
// and of a denied call as blocked; Claude Code's settings carry the status
// message; a hook that waits for a person says the approval id on stderr.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, AGENT_WIRE, agentClisAvailable, runAgent, type AgentName, type AgentRun } from '../../helpers/agentClis.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { cleanEnv, CLI_ENTRY, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { runCodexTurn } from '../../helpers/codexAppServer.js';
import { HOOK_STATUS_MESSAGE } from '../../../src/heads/agents/installPlan.js';
import { startFakeModel, type ModelStep } from '../../helpers/fakeModels.js';
import { HOOK_ENTRY } from '../../helpers/hook.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping agent visibility tests: ${AGENT_CLIS_SKIP_REASON}\n`);

const cleanups = cleanupsAfterEach();
const HOOK_NAME: Record<AgentName, string> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini' };
const ALLOWED = 'echo allowed-call';
const DENIED = 'cat ~/.ssh/id_rsa';
const SHELL_STEP: Record<AgentName, (command: string) => ModelStep> = {
  claude: (command) => ({ tool: 'Bash', input: { command, description: 'visibility test' } }),
  codex: (command) => ({ tool: 'exec_command', input: { cmd: command } }),
  gemini: (command) => ({ tool: 'run_shell_command', input: { command } }),
};

async function daemon(): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

/** One headless run whose model calls an allowed command, then a denied one (the default policy: echo allows, ~/.ssh denies). */
async function allowThenDeny(agent: AgentName, home: TempHome, claudeOutputArgs?: string[]): Promise<{ run: AgentRun; settings: string }> {
  const work = mkdtempSync(join(tmpdir(), `assent-visible-${agent}-`));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const model = await startFakeModel(AGENT_WIRE[agent], [SHELL_STEP[agent](ALLOWED), SHELL_STEP[agent](DENIED), { text: 'done' }]);
  cleanups.push(() => model.close());
  let settings = '';
  const run = await runAgent(agent, {
    model,
    cwd: work,
    prompt: 'Run the commands.',
    env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
    timeoutMs: 45_000,
    ...(claudeOutputArgs === undefined ? {} : { claudeOutputArgs }),
    prepareHome: async (agentHome) => {
      const installed = await home.runCli(['install', HOOK_NAME[agent]], { env: { HOME: agentHome, CODEX_HOME: join(agentHome, '.codex') } });
      expect(installed.code, installed.stderr).toBe(0);
      const file = { claude: join(agentHome, '.claude', 'settings.json'), codex: join(agentHome, '.codex', 'hooks.json'), gemini: join(agentHome, '.gemini', 'settings.json') }[agent];
      settings = readFileSync(file, 'utf8');
      expect(settings).toContain(HOOK_ENTRY);
    },
  });
  return { run, settings };
}

const describeRun = (run: AgentRun): string => `exit ${String(run.exitCode)}\nstdout: ${run.stdout.slice(0, 3000)}\nstderr: ${run.stderr.slice(0, 1500)}`;

describe.skipIf(!available)('issue 20: answers each agent shows as intended', () => {
  it('Codex (its app-server event stream) reports the hook of an allowed call as completed and of a denied call as blocked, with assent\'s status message; doctor reads the trust Codex recorded', async () => {
    const home = await daemon();
    const work = mkdtempSync(join(tmpdir(), 'assent-visible-codex-'));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const model = await startFakeModel('openai', [SHELL_STEP.codex(ALLOWED), SHELL_STEP.codex(DENIED), { text: 'done' }]);
    cleanups.push(() => model.close());
    let doctor = { code: -1 as number | null, stdout: '' };
    const turn = await runCodexTurn({
      model,
      cwd: work,
      prompt: 'Run the commands.',
      env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      prepareHome: async (agentHome) => {
        const installed = await home.runCli(['install', 'codex'], { env: { HOME: agentHome, CODEX_HOME: join(agentHome, '.codex') } });
        expect(installed.code, installed.stderr).toBe(0);
      },
      inspectHome: (agentHome) => {
        const ran = spawnSync(process.execPath, [CLI_ENTRY, 'doctor'], { env: cleanEnv({ HOME: agentHome, CODEX_HOME: join(agentHome, '.codex'), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' }), encoding: 'utf8' });
        doctor = { code: ran.status, stdout: ran.stdout };
      },
    });
    const before = turn.hookRuns.filter((run) => run.eventName === 'preToolUse');
    expect(before.map((run) => run.status), JSON.stringify(turn.notifications).slice(0, 4000) + turn.stderr).toEqual(['completed', 'blocked']);
    expect(before[0]?.statusMessage).toBe(HOOK_STATUS_MESSAGE);
    expect(model.toolResults().at(-1)?.output).toContain('assent refused codex/Bash');
    // The trust Codex itself recorded is what doctor reads; the caveat stays, since doctor cannot check its hash.
    expect(doctor.stdout).not.toContain('no trust record');
    expect(doctor.stdout).toContain('Codex has a trust record for assent\'s hook');
    expect(doctor.stdout).toContain("Codex: hooks must be trusted in Codex's /hooks review; doctor cannot check this");
    expect(doctor.code, doctor.stdout).toBe(0);
  }, 90_000);

  it('Claude Code (stream-json with hook events) shows an allowed call\'s hook as a success and a denied call as blocked with assent\'s reason; its settings carry the status message', async () => {
    const home = await daemon();
    const { run, settings } = await allowThenDeny('claude', home, ['--output-format', 'stream-json', '--verbose', '--include-hook-events']);
    const events = run.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const responses = events.filter((event) => event['subtype'] === 'hook_response' && event['hook_event'] === 'PreToolUse');
    expect(responses.map((event) => [event['exit_code'], event['outcome']]), describeRun(run)).toEqual([
      [0, 'success'],
      [0, 'success'],
    ]);
    const decisions = events.flatMap((event) => (event['tool_result_meta'] as { permission_decision?: { decision: string; source: string } }[] | undefined) ?? []).map((meta) => meta.permission_decision);
    expect(decisions).toEqual([
      { decision: 'accept', source: 'hook', reason_type: 'hook' },
      { decision: 'reject', source: 'hook', reason_type: 'hook' },
    ]);
    const entry = (JSON.parse(settings) as { hooks: { PreToolUse: { hooks: { command: string; statusMessage?: string }[] }[] } }).hooks.PreToolUse.flatMap((group) => group.hooks).find((hook) => hook.command.includes(HOOK_ENTRY));
    expect(entry?.statusMessage).toBe(HOOK_STATUS_MESSAGE);
  }, 90_000);
});
