// R-SH-14 end to end through the real daemon and the built hook: `npm test` in a
// project is allowed to run confined for Claude Code, with no approval filed —
// the hook answers with updatedInput, the command wrapped in `assent confine`
// naming the sandbox profile — and the rewritten command runs the project's
// test in the sandbox: its output arrives, its project write lands, its write to
// .git/hooks/pre-commit fails. The audit line says decidedHow confined with the
// profile digest. An agent whose hook cannot rewrite (Qwen Code) is asked instead,
// and a command outside the confine list still asks.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decidedHowOf } from '../../../src/core/audit/auditExportRecord.js';
import { sandboxStatus } from '../../../src/exec/confine/sandboxRun.js';
import { auditLines, makeTempHome, REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';

const SANDBOX = sandboxStatus();
let daemonHome: TempHome;
let base: string;
let project: string;
let home: string;

beforeAll(async () => {
  if (!SANDBOX.available) return;
  // Outside /tmp: the sandbox's /tmp is its own, so a project there would not be the one checked from outside.
  const parent = [join(REPO_ROOT, 'test-output'), join(homedir(), '.cache', 'assent-test')][0] as string;
  mkdirSync(parent, { recursive: true });
  base = mkdtempSync(join(parent, 'confined-hook-'));
  home = join(base, 'home');
  project = join(home, 'proj');
  mkdirSync(project, { recursive: true });
  const git = (...args: string[]): void => {
    const run = spawnSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args], { cwd: project, env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(run.stderr);
  };
  git('init', '-q');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'node t.js' } }));
  writeFileSync(
    join(project, 't.js'),
    [
      "const fs = require('node:fs');",
      "fs.writeFileSync('out.txt', 'written inside');",
      "try { fs.writeFileSync('.git/hooks/pre-commit', '#!/bin/sh\\ntouch pwned\\n', { mode: 0o755 }); console.log('HOOK WRITTEN'); } catch (e) { console.log('hook refused: ' + e.code); }",
      "console.log('tests passed');",
    ].join('\n'),
  );
  git('add', '.');
  git('commit', '-qm', 'one');
  daemonHome = makeTempHome();
  await daemonHome.startDaemon({ HOME: home });
}, 60_000);

afterAll(async () => {
  await daemonHome?.cleanup();
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!SANDBOX.available)('R-SH-14 a confined allow through the daemon and the hook', () => {
  it('npm test for Claude Code: allowed with updatedInput naming the sandbox, nothing filed; the rewritten command runs confined', async () => {
    const env = { ...daemonHome.env, HOME: home };
    const result = await runHook(['claude-code'], shellEvent('claude-code', 'npm test', { cwd: project }), env);
    expect(result.code, result.stderr).toBe(0);
    const answer = answerOf(result.stdout);
    expect(answer.decision).toBe('allow');
    const specific = answer.raw['hookSpecificOutput'] as { updatedInput?: { command?: string; description?: string } };
    const command = specific.updatedInput?.command ?? '';
    expect(command).toMatch(/\/dist\/bin\/assent-confine\.js' '--profile' '[0-9a-f]{64}' '--command' 'npm test'$/);
    expect(specific.updatedInput?.description).toBe('run it');
    const pending = await daemonHome.runCli(['pending', '--json']);
    expect((JSON.parse(pending.stdout) as { data: unknown[] }).data).toEqual([]);
    // The agent's shell runs the rewritten command in the project.
    const run = spawnSync('bash', ['-c', command], { cwd: project, env: { PATH: process.env.PATH, HOME: home, ASSENT_HOME: daemonHome.home }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('tests passed');
    expect(run.stdout).toMatch(/hook refused: E(ROFS|ACCES|PERM|BUSY)/);
    expect(existsSync(join(project, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(project, 'out.txt'), 'utf8')).toBe('written inside');
    const started = auditLines(daemonHome).find((line) => line['outcome'] === 'started' && line['agent'] === 'claude-code');
    expect(started?.['confined']).toMatch(/^[0-9a-f]{64}$/);
    expect(command).toContain(String(started?.['confined']));
    expect(decidedHowOf(started ?? {})).toBe('confined');
    expect(started?.['risk']).toBe('elevated');
    // The views say so: `assent audit` marks the line (confined), its JSON carries the digest.
    const audit = await daemonHome.runCli(['audit'], { env: { HOME: home } });
    expect(audit.stdout.split('\n').find((line) => line.includes('started') && line.includes('/Bash'))).toMatch(/ \(confined\) {2}v1:sha256:/);
    const listed = (JSON.parse((await daemonHome.runCli(['audit', '--json'], { env: { HOME: home } })).stdout) as { data: Record<string, unknown>[] }).data;
    expect(listed.find((line) => line['outcome'] === 'started' && line['tool'] === 'Bash')?.['confined']).toBe(started?.['confined']);
    // A changed layout (a new gate file) is a different profile: the decided command refuses to run.
    mkdirSync(join(project, '.vscode'));
    const stale = spawnSync('bash', ['-c', command], { cwd: project, env: { PATH: process.env.PATH, HOME: home, ASSENT_HOME: daemonHome.home }, encoding: 'utf8', timeout: 60_000 });
    expect(stale.status).toBe(126);
    expect(stale.stderr).toContain('the project\'s layout changed since the decision');
    rmSync(join(project, '.vscode'), { recursive: true });
  }, 90_000);

  it('Qwen Code cannot rewrite, and npm install is no project code to confine: both ask', async () => {
    const env = { ...daemonHome.env, HOME: home };
    for (const [agent, tool, command] of [['qwen', 'run_shell_command', 'npm test'], ['claude-code', 'Bash', 'npm install left-pad']] as const) {
      const explained = await daemonHome.runCli(['policy', 'explain', agent, tool, '--input', JSON.stringify({ command }), '--cwd', project, '--json'], { env });
      const data = (JSON.parse(explained.stdout) as { data: { decision: string; parts: { reason?: string }[] } }).data;
      expect(data.decision, explained.stdout).toBe('prompt');
      if (agent === 'qwen') expect(JSON.stringify(data.parts)).toContain('not confined here (the qwen hook cannot rewrite');
    }
  });
});
