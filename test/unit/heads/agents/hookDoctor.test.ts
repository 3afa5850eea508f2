// `assent doctor`'s checks (R-HOOK-7), against stand-in hook commands: what
// counts as a block for each agent, and each way an installation can be broken.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_IDS, type AgentId } from '../../../../src/heads/agents/agentTargets.js';
import type { CommandRunner, DoctorDependencies, ShellRun } from '../../../../src/heads/agents/doctorCheck.js';
import { canaryEvent, checkAgent, judgeCanaryAnswer, runThroughShell, scopesToCheck } from '../../../../src/heads/agents/hookDoctor.js';
import type { AssentInstallation } from '../../../../src/heads/agents/hookCommand.js';
import { readInstallRecords } from '../../../../src/heads/agents/installRecords.js';
import { applyInstall, planInstall } from '../../../../src/heads/agents/installPlan.js';
import { resolveStatePaths, type StatePaths } from '../../../../src/state/statePaths.js';

const run = (over: Partial<ShellRun>): ShellRun => ({ exitCode: 0, signal: null, timedOut: false, stdout: '', stderr: '', ...over });
const claudeDeny = (reason: string): string => JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } });
const CANARY = 'assent doctor canary: always denied';

describe('R-HOOK-7 what blocks the canary, per agent', () => {
  it('exit 0 with the agent\'s own deny JSON, or exit 2, blocks; the daemon\'s canary reason is recognised', () => {
    expect(judgeCanaryAnswer('claude-code', run({ stdout: claudeDeny(CANARY) }))).toEqual({ blocks: true, reason: CANARY, fromDaemon: true });
    expect(judgeCanaryAnswer('codex', run({ stdout: claudeDeny(CANARY) })).blocks).toBe(true);
    expect(judgeCanaryAnswer('gemini', run({ stdout: JSON.stringify({ decision: 'deny', reason: CANARY }) })).fromDaemon).toBe(true);
    expect(judgeCanaryAnswer('codex', run({ exitCode: 2, stdout: claudeDeny('daemon unreachable'), stderr: 'daemon unreachable' }))).toEqual({ blocks: true, reason: 'daemon unreachable', fromDaemon: false });
    expect(judgeCanaryAnswer('claude-code', run({ stdout: JSON.stringify({ decision: 'block', reason: CANARY }) })).blocks).toBe(true);
  });

  it('exit 1, empty output, allow, a timeout, another agent\'s shape, or mixed shapes do not block (Codex and Gemini would run the call)', () => {
    expect(judgeCanaryAnswer('codex', run({ exitCode: 1, stdout: claudeDeny(CANARY) })).blocks).toBe(false);
    expect(judgeCanaryAnswer('codex', run({ stdout: '' })).blocks).toBe(false);
    expect(judgeCanaryAnswer('claude-code', run({ stdout: JSON.stringify({ hookSpecificOutput: { permissionDecision: 'allow' } }) })).blocks).toBe(false);
    expect(judgeCanaryAnswer('gemini', run({ stdout: claudeDeny(CANARY) })).blocks).toBe(false);
    expect(judgeCanaryAnswer('claude-code', run({ stdout: JSON.stringify({ decision: 'deny', reason: CANARY }) })).blocks).toBe(false);
    expect(judgeCanaryAnswer('codex', run({ stdout: JSON.stringify({ decision: 'block', hookSpecificOutput: { permissionDecision: 'deny' } }) })).blocks).toBe(false);
    expect(judgeCanaryAnswer('claude-code', run({ timedOut: true, exitCode: null, signal: 'SIGKILL', stdout: claudeDeny(CANARY) })).blocks).toBe(false);
  });

  it('the canary event has each agent\'s before-tool fields, the canary tool and an empty input', () => {
    const now = new Date('2026-12-01T10:00:00Z');
    expect(canaryEvent('claude-code', '/w', now)).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'AssentDoctorCanary', tool_input: {}, cwd: '/w', tool_use_id: 'assent-doctor-canary' });
    expect(canaryEvent('codex', '/w', now)).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'AssentDoctorCanary', turn_id: 'assent-doctor' });
    expect(canaryEvent('gemini', '/w', now)).toEqual({ session_id: 'assent-doctor', transcript_path: '', cwd: '/w', hook_event_name: 'BeforeTool', timestamp: now.toISOString(), tool_name: 'AssentDoctorCanary', tool_input: {} });
  });
});

// A stand-in for dist/bin/assent-hook.js: answers the canary as the daemon would, in the agent's format, or misbehaves as told.
const STAND_IN = `
let input = '';
process.stdin.on('data', (c) => (input += c)).on('end', () => {
  const mode = process.env.STAND_IN_MODE ?? 'deny';
  const event = JSON.parse(input);
  const agent = process.argv[2];
  require('node:fs').writeFileSync(process.env.STAND_IN_LOG, JSON.stringify({ argv: process.argv.slice(2), event }));
  if (mode === 'exit1') process.exit(1);
  const reason = mode === 'deny' ? 'assent doctor canary: ' + (event.tool_name ?? event.toolName ?? event.tool_call?.name) + ' is always denied' : 'no daemon';
  const decision = mode === 'allow' ? 'allow' : 'deny';
  const flat = ['gemini', 'opencode', 'kilo'].includes(agent);
  process.stdout.write(JSON.stringify(
    agent === 'cline' ? (decision === 'allow' ? {} : { cancel: true, errorMessage: reason })
      : agent === 'copilot' ? { permissionDecision: decision, permissionDecisionReason: reason }
      : flat ? { decision, reason } : { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } },
  ));
  if (mode === 'failclosed') { process.stderr.write(reason + '\\n'); process.exit(2); }
});
`;

let root: string;
let home: string;
let paths: StatePaths;
let installation: AssentInstallation;
let log: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'assent-doctor-'));
  home = join(root, 'home');
  mkdirSync(join(home, 'work'), { recursive: true });
  mkdirSync(join(root, 'dist', 'bin'), { recursive: true });
  writeFileSync(join(root, 'dist', 'bin', 'assent-hook.js'), STAND_IN);
  writeFileSync(join(root, 'package.json'), '{"type":"commonjs"}');
  installation = { node: process.execPath, hookEntry: join(root, 'dist', 'bin', 'assent-hook.js'), cliEntry: join(root, 'dist', 'bin', 'assent.js') };
  paths = resolveStatePaths({ ASSENT_HOME: join(root, 'state') }, home);
  log = join(root, 'stand-in.log');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function deps(mode = 'deny', runner: CommandRunner = runThroughShell): DoctorDependencies {
  return {
    where: { env: { ...process.env, STAND_IN_MODE: mode, STAND_IN_LOG: log }, homedir: home, cwd: join(home, 'work') },
    installation,
    hookTimeoutSeconds: 110,
    records: readInstallRecords(paths),
    run: runner,
    now: () => new Date('2026-12-01T10:00:00Z'),
  };
}

function install(agent: AgentId, hookTimeoutSeconds = 110): string {
  const plan = planInstall({ agent, scope: 'user', where: deps().where, installation, hookTimeoutSeconds, mcp: false });
  applyInstall(plan, { paths, now: new Date() });
  return plan.files[0]?.file as string;
}

describe('R-HOOK-7 doctor checks an installed agent', () => {
  it('R-HOOK-9 with hooks.claudeNativePrompt on, doctor wants Claude Code\'s PermissionRequest hook; with it off, such a hook is a problem too (it would refuse Claude Code\'s own dialogs)', async () => {
    install('claude-code');
    const on = { ...deps(), claudeNativePrompt: true };
    expect((await checkAgent('claude-code', 'user', on)).problems).toEqual([expect.stringContaining('hooks.claudeNativePrompt is on, but there is no PermissionRequest hook')]);
    applyInstall(planInstall({ agent: 'claude-code', scope: 'user', where: deps().where, installation, hookTimeoutSeconds: 110, claudeNativePrompt: true, mcp: false }), { paths, now: new Date() });
    expect(await checkAgent('claude-code', 'user', on)).toMatchObject({ installed: true, timeoutOk: true, blocksCanary: true, problems: [] });
    expect((await checkAgent('claude-code', 'user', deps())).problems).toEqual([expect.stringContaining('hooks.claudeNativePrompt is off')]);
  });

  for (const agent of AGENT_IDS) {
    it(`${agent}: installed hooks that block the canary through sh -c are fine; the stand-in got the canary event and the agent name`, async () => {
      const file = install(agent);
      // Codex runs a hook only once a person trusted it in /hooks; the record it then keeps is what doctor reads.
      if (agent === 'codex') appendFileSync(join(dirname(file), 'config.toml'), `[hooks.state.${JSON.stringify(`${file}:pre_tool_use:0:0`)}]\ntrusted_hash = "sha256:00"\n`);
      const report = await checkAgent(agent, 'user', deps());
      // Cline's hook timeout is fixed at 120 s: with hooks.timeoutSeconds 110 doctor says how long a person has, as a note.
      expect(report).toMatchObject({ agent, scope: 'user', installed: true, settingsPath: file, timeoutOk: agent !== 'cline', blocksCanary: true, problems: [] });
      if (agent === 'cline') expect(report.notes.join('\n')).toMatch(/a person has about 96 s to decide, not hooks.timeoutSeconds \(110 s\)/);
      expect(report.command).toContain(installation.hookEntry);
      const seen = JSON.parse(readFileSync(log, 'utf8')) as { argv: string[]; event: Record<string, unknown> };
      expect(seen.argv).toEqual([agent, '--timeout', agent === 'cline' ? '120' : '136']);
      const canary = agent === 'copilot' ? seen.event['toolName'] : agent === 'cline' ? (seen.event['tool_call'] as Record<string, unknown>)['name'] : seen.event['tool_name'];
      expect(canary).toBe('AssentDoctorCanary');
    });
  }

  it('a Gemini settings.json with comments is read as Gemini CLI reads it; the same comments in Claude Code\'s file are a problem', async () => {
    const gemini = join(home, '.gemini', 'settings.json');
    mkdirSync(dirname(gemini), { recursive: true });
    writeFileSync(gemini, '{\n  // my theme\n  "theme": "dark" /* for now */\n}\n');
    const file = install('gemini');
    expect(readFileSync(file, 'utf8')).toMatch(/^\{\n {2}\/\/ my theme\n {2}"theme": "dark", \/\* for now \*\/\n {2}"hooks": \{/);
    expect(await checkAgent('gemini', 'user', deps())).toMatchObject({ installed: true, blocksCanary: true, problems: [] });
    const claude = join(home, '.claude', 'settings.json');
    mkdirSync(dirname(claude), { recursive: true });
    writeFileSync(claude, `// mine\n${JSON.stringify({ hooks: {} })}`);
    const report = await checkAgent('claude-code', 'user', deps());
    expect(report.problems.join('\n')).toMatch(/settings\.json is not valid JSON \(.*it holds comments, and this agent reads its settings as plain JSON\).*Claude Code skips a settings file it cannot read/s);
  });

  it('not installed is not a problem; a hook that exits 1, allows, or fails closed is', async () => {
    expect(await checkAgent('codex', 'user', deps())).toMatchObject({ installed: false, problems: [] });
    install('codex');
    const exit1 = await checkAgent('codex', 'user', deps('exit1'));
    expect(exit1.blocksCanary).toBe(false);
    expect(exit1.problems.join('\n')).toMatch(/did not block the canary call \(it exited 1/);
    expect((await checkAgent('codex', 'user', deps('allow'))).blocksCanary).toBe(false);
    const failClosed = await checkAgent('codex', 'user', deps('failclosed'));
    expect(failClosed.blocksCanary).toBe(true);
    expect(failClosed.problems.join('\n')).toMatch(/not with the daemon's answer/);
    const hung = await checkAgent('codex', 'user', deps('deny', async () => run({ timedOut: true, exitCode: null, signal: 'SIGKILL' })));
    expect(hung.problems.join('\n')).toMatch(/did not answer in time/);
  });

  it('a hook entry removed by hand is a problem; both removed is a problem too, since install recorded them', async () => {
    const file = install('claude-code');
    const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, unknown> };
    delete settings.hooks['PreToolUse'];
    writeFileSync(file, JSON.stringify(settings));
    const report = await checkAgent('claude-code', 'user', deps());
    expect(report).toMatchObject({ installed: true, blocksCanary: false, command: null });
    expect(report.problems.join('\n')).toMatch(/no PreToolUse hook: Claude Code runs every tool call without asking assent/);
    writeFileSync(file, '{}');
    const gone = await checkAgent('claude-code', 'user', deps());
    expect(gone.installed).toBe(false);
    expect(gone.problems.join('\n')).toMatch(/removed from .* by hand/);
  });

  it('a short timeout, a narrowed matcher, another assent, a missing node, and disabled hooks are each reported', async () => {
    const file = install('gemini', 30); // written as 45 000 ms
    const text = readFileSync(file, 'utf8');
    const short = await checkAgent('gemini', 'user', deps());
    expect(short.timeoutOk).toBe(false);
    expect(short.problems.join('\n')).toMatch(/the BeforeTool hook timeout \(47 s\) leaves less than the hook's margin \(4\.7 s\) over hooks\.timeoutSeconds \(110 s\) plus 12 s for starting the daemon: .*it needs at least 136 s/);
    const other = join(root, 'other', 'assent-hook.js');
    mkdirSync(join(root, 'other'));
    writeFileSync(other, STAND_IN);
    writeFileSync(file, text.replaceAll('"matcher": ".*"', '"matcher": "run_shell_command"').replaceAll(installation.hookEntry, other));
    const broken = (await checkAgent('gemini', 'user', deps())).problems.join('\n');
    expect(broken).toMatch(/matches only "run_shell_command"/);
    expect(broken).toMatch(/runs another assent/);
    writeFileSync(file, text.replaceAll(process.execPath, '/nonexistent/node'));
    expect((await checkAgent('gemini', 'user', deps())).problems.join('\n')).toMatch(/node at \/nonexistent\/node, which is not an executable file/);
    writeFileSync(file, text.replace('{', '{"hooksConfig": {"enabled": false},'));
    expect((await checkAgent('gemini', 'user', deps())).problems.join('\n')).toMatch(/hooksConfig\.enabled/);
    const claudeFile = install('claude-code');
    writeFileSync(claudeFile, readFileSync(claudeFile, 'utf8').replace('{', '{"disableAllHooks": true,'));
    expect((await checkAgent('claude-code', 'user', deps())).problems.join('\n')).toMatch(/disableAllHooks/);
  });

  it('a settings file that is not valid JSON is reported (the agent would skip it) when assent had installed into it', async () => {
    const file = install('codex');
    writeFileSync(file, '{"hooks": ');
    const report = await checkAgent('codex', 'user', deps());
    expect(report.installed).toBe(true);
    expect(report.problems.join('\n')).toMatch(/is not valid JSON.*skips a settings file it cannot read/);
  });

  it('the project scope is checked when the cwd has its own settings file', () => {
    const where = deps().where;
    expect(scopesToCheck('claude-code', where)).toEqual(['user']);
    mkdirSync(join(where.cwd, '.claude'));
    writeFileSync(join(where.cwd, '.claude', 'settings.json'), '{}');
    expect(scopesToCheck('claude-code', where)).toEqual(['user', 'project']);
  });
});
