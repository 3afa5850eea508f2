// R-SH-14 with the real agents: Claude Code and Codex (the hook's
// updatedInput), Gemini CLI (hookSpecificOutput.tool_input), Copilot CLI
// (modifiedArgs), OpenCode and Kilo Code (assent's plugin writing the
// rewritten input into output.args), Factory Droid (updatedInput without a
// permissionDecision, merged into the input) and Auggie (updatedInput beside an
// allow, replacing the input), each offline against a fake model, run `npm test` in a git project. The
// command runs confined with no approval filed, its output reaches the model,
// and the test script's write to .git/hooks/pre-commit fails while its project
// write lands. The daemon shares the agent's HOME: the sandbox profile is built
// for the person's home, and `assent confine` checks it against its own.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decidedHowOf } from '../../../src/core/audit/auditExportRecord.js';
import { sandboxStatus } from '../../../src/exec/confine/sandboxRun.js';
import { AGENT_CLIS_SKIP_REASON, AGENT_WIRE, agentClisAvailable, runAgent, type AgentRun } from '../../helpers/agentClis.js';
import { auditLines, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { startFakeAugment } from '../../helpers/fakeAugment.js';
import { startFakeModel, type FakeModel, type ModelStep } from '../../helpers/fakeModels.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const AGENTS = ['claude', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'droid', 'auggie'] as const;
type Agent = (typeof AGENTS)[number];
const available = agentClisAvailable(AGENTS);
const SANDBOX = sandboxStatus();
if (!available) process.stderr.write(`skipping the confined agent runs: ${AGENT_CLIS_SKIP_REASON}\n`);
if (!SANDBOX.available) process.stderr.write(`skipping the confined agent runs: ${SANDBOX.reason}\n`);

const cleanups = cleanupsAfterEach();

/** The hook name assent installs and the id its shell tool has in policy. */
const INSTALL: Record<Agent, { name: string; tool: string; step: (command: string) => ModelStep }> = {
  claude: { name: 'claude-code', tool: 'Bash', step: (command) => ({ tool: 'Bash', input: { command, description: 'run the tests' } }) },
  codex: { name: 'codex', tool: 'Bash', step: (command) => ({ tool: 'exec_command', input: { cmd: command } }) },
  gemini: { name: 'gemini', tool: 'run_shell_command', step: (command) => ({ tool: 'run_shell_command', input: { command } }) },
  copilot: { name: 'copilot', tool: 'bash', step: (command) => ({ tool: 'bash', input: { command, description: 'run the tests' } }) },
  opencode: { name: 'opencode', tool: 'bash', step: (command) => ({ tool: 'bash', input: { command, description: 'run the tests' } }) },
  kilo: { name: 'kilo', tool: 'bash', step: (command) => ({ tool: 'bash', input: { command, description: 'run the tests' } }) },
  droid: { name: 'droid', tool: 'Execute', step: (command) => ({ tool: 'Execute', input: { command, summary: 'run the tests', riskLevel: 'low', riskLevelReason: 'runs the project tests' } }) },
  // `cwd` is relative to Auggie's workspace root, the project's git root here.
  auggie: { name: 'auggie', tool: 'launch-process', step: (command) => ({ tool: 'launch-process', input: { command, wait: true, max_wait_seconds: 60, cwd: '.' } }) },
};

/** The fake model each agent talks to; Auggie's is a fake Augment tenant that switches its hooks on. */
function fakeModelFor(agent: Agent, script: ModelStep[]): Promise<FakeModel> {
  return agent === 'auggie' ? startFakeAugment(script, { enableHooks: true }) : startFakeModel(AGENT_WIRE[agent], script);
}

/** A git project whose test script writes a project file, tries a gate file, and reports both. */
function makeProject(work: string): void {
  mkdirSync(work, { recursive: true });
  const git = (...args: string[]): void => {
    const run = spawnSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args], { cwd: work, env: { PATH: process.env['PATH'], HOME: work, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(run.stderr);
  };
  git('init', '-q');
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'node t.js' } }));
  writeFileSync(
    join(work, 't.js'),
    [
      "const fs = require('node:fs');",
      "fs.writeFileSync('out.txt', 'written inside');",
      "try { fs.writeFileSync('.git/hooks/pre-commit', '#!/bin/sh\\ntouch pwned\\n', { mode: 0o755 }); console.log('HOOK WRITTEN'); } catch (e) { console.log('hook refused: ' + e.code); }",
      "console.log('confined tests passed');",
    ].join('\n'),
  );
  git('add', '.');
  git('commit', '-qm', 'one');
}

function describeRun(run: AgentRun): string {
  return `exit ${String(run.exitCode)}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2500)}\nstderr: ${run.stderr.slice(-1500)}`;
}

describe.skipIf(!available || !SANDBOX.available)('R-SH-14 npm test runs confined under the real agents', () => {
  for (const agent of AGENTS) {
    it(`R-SH-14 ${agent}: npm test runs confined with no approval filed, its output reaches the model, its .git/hooks write fails`, async () => {
      const home: TempHome = makeTempHome();
      cleanups.push(() => home.cleanup());
      mkdirSync(home.home, { recursive: true, mode: 0o700 });
      writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
      const dir = mkdtempSync(join(tmpdir(), `assent-confined-${agent}-`));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const work = join(dir, 'work');
      makeProject(work);
      const model = await fakeModelFor(agent, [INSTALL[agent].step('npm test'), { text: 'done' }]);
      cleanups.push(() => model.close());
      let pendingDuringRun: unknown[] | undefined;
      const run = await runAgent(agent, {
        model,
        cwd: work,
        prompt: 'Run the tests.',
        env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
        timeoutMs: 120_000,
        prepareHome: async (agentHome) => {
          const installed = await home.runCli(['install', INSTALL[agent].name, '--json'], { env: { HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config'), CODEX_HOME: join(agentHome, '.codex') } });
          expect(installed.code, installed.stderr).toBe(0);
          // The daemon runs as the person whose home the agent has.
          await home.startDaemon({ HOME: agentHome });
        },
        afterRun: async () => {
          pendingDuringRun = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data;
        },
      });
      expect(run.exitCode, describeRun(run)).toBe(0);
      const result = model.toolResults().at(-1)?.output ?? '';
      expect(result, describeRun(run)).toContain('confined tests passed');
      expect(result).toMatch(/hook refused: E(ROFS|ACCES|PERM|BUSY)/);
      expect(existsSync(join(work, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(readFileSync(join(work, 'out.txt'), 'utf8')).toBe('written inside');
      expect(pendingDuringRun).toEqual([]);
      // One decision, made by the policy: confined, with the profile's digest, and no approval behind it.
      const lines = auditLines(home).filter((line) => line['tool'] === INSTALL[agent].tool);
      const started = lines.find((line) => line['outcome'] === 'started');
      expect(started, JSON.stringify(lines)).toMatchObject({ agent: INSTALL[agent].name, risk: 'elevated', confined: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(decidedHowOf(started ?? {})).toBe('confined');
      expect(lines.every((line) => line['approvedBy'] === undefined)).toBe(true);
    }, 180_000);
  }
});
