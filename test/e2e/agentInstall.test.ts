// `assent install`, `assent uninstall` and `assent doctor` with the built binary in a
// temp HOME (R-HOOK-7). The installation under test is a copy of dist/ whose hook
// entry is a stand-in that denies every event the way the daemon denies the canary.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentEnv, makeAssentCopy, type AssentCopy } from '../helpers/assentCopy.js';
import { runInTerminal } from '../helpers/pty.js';
import { processesForHome } from '../helpers/daemon.js';

let copy: AssentCopy;
let root: string;
let home: string;
let assentHome: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  copy = makeAssentCopy();
});
afterAll(() => copy.remove());
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'assent-install-'));
  home = join(root, 'home');
  mkdirSync(join(home, 'work'), { recursive: true });
  assentHome = join(root, 'state');
  env = agentEnv(home, assentHome);
});
afterEach(() => {
  for (const pid of processesForHome(assentHome)) process.kill(pid, 'SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const assent = (args: string[], options: { cwd?: string } = {}) => copy.run(args, env, { cwd: options.cwd ?? join(home, 'work') });
const backupsIn = (dir: string): string[] => readdirSync(dir).filter((name) => name.includes('.assent-backup-'));
const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const c of long) if (c === short[i]) i += 1;
  return i === short.length;
}

/** Hand-formatted, odd indentation, an unrelated hook, no final newline. */
const CLAUDE_SETTINGS = '{\n   "model" :  "opus",\n     "hooks": {\n        "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "echo mine" } ] } ]\n     },\n   "env": { "A": "1" }\n}';
const CODEX_HOOKS = '{\n  "hooks": {\n    "SessionStart": [\n      { "hooks": [ { "type": "command", "command": "echo start" } ] }\n    ]\n  }\n}\n';
const GEMINI_SETTINGS = '{\n    "security": { "auth": { "selectedType": "gemini-api-key" } },\n    "hooks": { "BeforeTool": [ { "matcher": "write_file", "hooks": [ { "type": "command", "command": "echo w" } ] } ] }\n}\n';

function writeSettings(): { claude: string; codex: string; gemini: string } {
  const files = { claude: join(home, '.claude', 'settings.json'), codex: join(home, '.codex', 'hooks.json'), gemini: join(home, '.gemini', 'settings.json') };
  mkdirSync(join(home, '.claude'));
  mkdirSync(join(home, '.codex'));
  mkdirSync(join(home, '.gemini'));
  writeFileSync(files.claude, CLAUDE_SETTINGS);
  writeFileSync(files.codex, CODEX_HOOKS);
  writeFileSync(files.gemini, GEMINI_SETTINGS);
  return files;
}

describe('R-HOOK-7 assent install', () => {
  it('R-HOOK-7 a second install changes nothing and says so; the first kept every unrelated hook and setting and wrote one backup', async () => {
    const files = writeSettings();
    for (const [agent, file, original] of [
      ['claude-code', files.claude, CLAUDE_SETTINGS],
      ['codex', files.codex, CODEX_HOOKS],
      ['gemini', files.gemini, GEMINI_SETTINGS],
    ] as const) {
      const first = await assent(['install', agent]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`+++ ${file}`);
      expect(first.stdout).toContain('assent-hook.js');
      expect(first.stdout).toMatch(/Backup: .*\.assent-backup-\d{8}T\d{6}Z/);
      const written = readFileSync(file, 'utf8');
      const second = await assent(['install', agent]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/^Nothing to change: assent's hooks are already in /);
      expect(readFileSync(file, 'utf8')).toBe(written);
      const dir = join(file, '..');
      expect(backupsIn(dir)).toHaveLength(1);
      const backup = join(dir, backupsIn(dir)[0] as string);
      expect(readFileSync(backup, 'utf8')).toBe(original);
      expect(statSync(backup).mode & 0o777).toBe(0o600);
      // Only insertions: the original is a subsequence of what was written, character by character.
      expect(isSubsequence(original, written), written).toBe(true);
    }
    const claude = json(readFileSync(files.claude, 'utf8'));
    expect(claude['model']).toBe('opus');
    expect(claude['env']).toEqual({ A: '1' });
    expect(JSON.stringify(claude['hooks'])).toContain('"command":"echo mine"');
    const claudeHooks = claude['hooks'] as Record<string, { matcher: string; hooks: { command: string; timeout: number }[] }[]>;
    // The status message is what Claude Code's spinner shows while the hook runs (issue 20).
    expect(claudeHooks['PreToolUse']?.[1]).toEqual({
      matcher: '*',
      hooks: [{ type: 'command', command: `"${process.execPath}" "${copy.hookEntry}" claude-code --timeout 136`, timeout: 136, statusMessage: 'assent: checking this call; if it waits for approval, decide with `assent watch` or the web page' }],
    });
    expect(claudeHooks['PostToolUse']?.[0]?.hooks[0]?.command).toBe(`"${process.execPath}" "${copy.hookEntry}" claude-code --after --timeout 136`);
    expect(JSON.stringify(json(readFileSync(files.codex, 'utf8')))).toContain('"SessionStart":[{"hooks":[{"type":"command","command":"echo start"}]}]');
    const gemini = json(readFileSync(files.gemini, 'utf8'));
    expect(gemini['security']).toEqual({ auth: { selectedType: 'gemini-api-key' } });
    const geminiHooks = gemini['hooks'] as Record<string, { matcher: string; hooks: { timeout: number }[] }[]>;
    expect(geminiHooks['BeforeTool']?.map((g) => g.matcher)).toEqual(['write_file', '.*']);
    expect(geminiHooks['BeforeTool']?.[1]?.hooks[0]?.timeout).toBe(136_000);
  });

  it('R-HOOK-7 --dry-run writes nothing (no file, no backup, no state) and prints the diff', async () => {
    const result = await assent(['install', 'codex', '--dry-run', '--mcp']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`--- /dev/null\n+++ ${join(home, '.codex', 'hooks.json')}`);
    expect(result.stdout).toContain('+[mcp_servers.assent]');
    expect(result.stdout).toContain('Dry run: nothing was written.');
    expect(existsSync(join(home, '.codex'))).toBe(false);
    expect(existsSync(assentHome)).toBe(false);
    const files = writeSettings();
    const dry = await assent(['install', 'claude-code', '--dry-run', '--json']);
    const data = json(dry.stdout)['data'] as { dryRun: boolean; changed: boolean; files: { diff: string[]; backup: null }[] };
    expect(data.dryRun).toBe(true);
    expect(data.changed).toBe(true);
    expect(data.files[0]?.diff.some((line) => line.startsWith('+') && line.includes('assent-hook.js'))).toBe(true);
    expect(data.files[0]?.backup).toBeNull();
    expect(readFileSync(files.claude, 'utf8')).toBe(CLAUDE_SETTINGS);
    expect(backupsIn(join(home, '.claude'))).toEqual([]);
  });

  it('R-HOOK-7 a settings file that is not valid JSON is refused by name (65) and left as it was', async () => {
    mkdirSync(join(home, '.gemini'));
    const file = join(home, '.gemini', 'settings.json');
    writeFileSync(file, '{ "theme": "dark", ');
    const result = await assent(['install', 'gemini']);
    expect(result.code).toBe(65);
    expect(result.stderr).toContain(`${file} is not valid JSON`);
    expect(result.stderr).toContain('Nothing was changed');
    expect(readFileSync(file, 'utf8')).toBe('{ "theme": "dark", ');
    expect(readdirSync(join(home, '.gemini'))).toEqual(['settings.json']);
  });

  it('R-HOOK-7 creates a missing file 0600 and its dir 0700; --json follows R-CLI-4; --scope project writes the project file; unknown agents are usage errors', async () => {
    const result = await assent(['install', 'claude', '--json', '--mcp']);
    expect(result.code, result.stderr).toBe(0);
    const doc = json(result.stdout);
    expect(doc['ok']).toBe(true);
    const data = doc['data'] as Record<string, unknown>;
    expect(data).toMatchObject({ agent: 'claude-code', scope: 'user', changed: true, hookTimeoutSeconds: 110, timeout: 136, timeoutUnit: 'seconds', settingsPath: join(home, '.claude', 'settings.json') });
    expect((data['files'] as { path: string; created: boolean }[]).map((f) => [f.path, f.created])).toEqual([
      [join(home, '.claude', 'settings.json'), true],
      [join(home, '.claude.json'), true],
    ]);
    expect(statSync(join(home, '.claude')).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, '.claude', 'settings.json')).mode & 0o777).toBe(0o600);
    expect(json(readFileSync(join(home, '.claude.json'), 'utf8'))).toEqual({ mcpServers: { assent: { command: process.execPath, args: [copy.cliEntry, 'mcp'] } } });

    const project = await assent(['install', 'codex', '--scope', 'project']);
    expect(project.code, project.stderr).toBe(0);
    expect(existsSync(join(home, 'work', '.codex', 'hooks.json'))).toBe(true);
    expect(project.stdout).toContain('only in a project it trusts');
    expect(project.stdout).toContain('/hooks');

    const unknown = await assent(['install', 'cursor', '--json']);
    expect(unknown.code).toBe(64);
    expect(json(unknown.stdout)).toMatchObject({ ok: false, error: { type: 'usage' } });
    expect((await assent(['install', 'codex', '--scope', 'global'])).code).toBe(64);
  });

  it('R-HOOK-7 an assent without its hook entry refuses to install a command that could not run', async () => {
    const bare = makeAssentCopy(null);
    try {
      const result = await bare.run(['install', 'codex'], env, { cwd: join(home, 'work') });
      expect(result.code).toBe(65);
      expect(result.stderr).toContain(`no hook entry at ${bare.hookEntry}`);
      expect(existsSync(join(home, '.codex'))).toBe(false);
    } finally {
      bare.remove();
    }
  });

  it('R-HOOK-11 the hook timeout leaves the margin over hooks.timeoutSeconds from config.json plus a spawn (Gemini in ms), also on the command line; doctor fails when the config later asks for more', async () => {
    mkdirSync(assentHome, { mode: 0o700 });
    writeFileSync(join(assentHome, 'config.json'), JSON.stringify({ hooks: { timeoutSeconds: 300 } }));
    const result = await assent(['install', 'gemini', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)['data']).toMatchObject({ hookTimeoutSeconds: 300, timeout: 347_000, timeoutUnit: 'milliseconds' });
    const settings = readFileSync(join(home, '.gemini', 'settings.json'), 'utf8');
    expect(settings.match(/"timeout": 347000/g)).toHaveLength(2);
    expect(settings.match(/--timeout 347"/g)).toHaveLength(2);
    expect((await assent(['doctor'])).code).toBe(0);
    writeFileSync(join(assentHome, 'config.json'), JSON.stringify({ hooks: { timeoutSeconds: 400 } }));
    const doctor = await assent(['doctor', '--json']);
    expect(doctor.code).toBe(65);
    const gemini = (json(doctor.stdout)['data'] as { agents: { agent: string; timeoutOk: boolean; problems: string[] }[] }).agents.find((a) => a.agent === 'gemini');
    expect(gemini?.timeoutOk).toBe(false);
    expect(gemini?.problems.join('\n')).toContain("the BeforeTool hook timeout (347 s) leaves less than the hook's margin (34.7 s) over hooks.timeoutSeconds (400 s) plus 12 s for starting the daemon");
  });

  it('R-HOOK-11 install and doctor use the pinned configuration, not an unconfirmed edit of config.json; doctor flags an installed timeout without the margin or a command without --timeout', async () => {
    mkdirSync(assentHome, { mode: 0o700 });
    writeFileSync(join(assentHome, 'config.json'), JSON.stringify({ hooks: { timeoutSeconds: 110 }, notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
    // A daemon's first start pins config.json as it is then (R-CFG-4); the pin outlives the daemon.
    const daemon = spawn(process.execPath, [copy.cliEntry, 'daemon', 'run'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    daemon.stderr.setEncoding('utf8').on('data', (text: string) => (said += text));
    await expect.poll(() => said, { timeout: 15_000 }).toContain('listening on');
    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon.once('exit', resolve));
    // The edit nobody confirmed: 20 s would have given Gemini a 35 s timeout.
    writeFileSync(join(assentHome, 'config.json'), JSON.stringify({ hooks: { timeoutSeconds: 20 }, notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
    const installed = await assent(['install', 'gemini', '--json']);
    expect(installed.code, installed.stderr).toBe(0);
    const data = json(installed.stdout)['data'] as { hookTimeoutSeconds: number; timeout: number; notes: string[] };
    expect(data).toMatchObject({ hookTimeoutSeconds: 110, timeout: 136_000 });
    expect(data.notes.join('\n')).toMatch(/says hooks\.timeoutSeconds 20, but the daemon runs 110 \(the confirmed configuration\).*run `assent install` again/);
    const file = join(home, '.gemini', 'settings.json');
    const doctor = await assent(['doctor', '--json']);
    const report = json(doctor.stdout) as { meta: Record<string, unknown>; data: { agents: { agent: string; timeoutOk: boolean; problems: string[] }[] } };
    expect(report.meta).toMatchObject({ hookTimeoutSeconds: 110, hookTimeoutSource: 'pinned' });
    expect(report.data.agents.find((a) => a.agent === 'gemini')).toMatchObject({ timeoutOk: true, problems: [] });
    expect(doctor.code, doctor.stdout).toBe(0);
    // Above hooks.timeoutSeconds but without the margin over it and a spawn (the old doctor took any value above 110 s).
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replaceAll('136000', '115000').replaceAll('--timeout 136', '--timeout 115'));
    const short = await assent(['doctor', '--json']);
    expect(short.code).toBe(65);
    const shortGemini = (json(short.stdout)['data'] as { agents: { agent: string; timeoutOk: boolean; problems: string[] }[] }).agents.find((a) => a.agent === 'gemini');
    expect(shortGemini?.timeoutOk).toBe(false);
    expect(shortGemini?.problems.join('\n')).toMatch(/hook timeout \(115 s\) leaves less than the hook's margin .* it needs at least 136 s/);
    // A command without --timeout (an older install), or one whose --timeout is not the entry's.
    writeFileSync(file, text.replaceAll(' --timeout 136', ''));
    expect((json((await assent(['doctor', '--json'])).stdout)['data'] as { agents: { agent: string; problems: string[] }[] }).agents.find((a) => a.agent === 'gemini')?.problems.join('\n')).toMatch(/command carries no --timeout/);
    writeFileSync(file, text.replaceAll('--timeout 136', '--timeout 200'));
    expect((json((await assent(['doctor', '--json'])).stdout)['data'] as { agents: { agent: string; problems: string[] }[] }).agents.find((a) => a.agent === 'gemini')?.problems.join('\n')).toMatch(/says --timeout 200 but the entry's timeout is 136 s: Gemini CLI would give up on the hook before it answers and run the call/);
  });

  it('R-HOOK-7 install reads config.json with the config loader: an invalid one is refused and nothing is written', async () => {
    mkdirSync(assentHome, { mode: 0o700 });
    writeFileSync(join(assentHome, 'config.json'), '{"policy": {"defualt": "allow"}}');
    const invalid = await assent(['install', 'gemini']);
    expect(invalid.code).toBe(65);
    expect(invalid.stderr).toContain('config');
    expect(existsSync(join(home, '.gemini'))).toBe(false);
  });
});

describe('R-HOOK-7 assent uninstall', () => {
  it('R-HOOK-7 restores the rest of a hand-formatted file byte for byte after a typed code at a real terminal; refuses headless with 77', async () => {
    const files = writeSettings();
    expect((await assent(['install', 'claude-code'])).code).toBe(0);
    const installed = readFileSync(files.claude, 'utf8');

    const headless = await assent(['uninstall', 'claude-code', '--json']);
    expect(headless.code).toBe(77);
    expect(json(headless.stdout)).toMatchObject({ ok: false, error: { type: 'terminal_required' } });
    expect(readFileSync(files.claude, 'utf8')).toBe(installed);

    const wrong = await runInTerminalAt(['uninstall', 'claude-code'], 'zzzz');
    expect(wrong.exitCode).toBe(77);
    expect(wrong.screen).toContain('the code did not match');
    expect(readFileSync(files.claude, 'utf8')).toBe(installed);

    const done = await runInTerminal(['uninstall', 'claude-code'], { env: ptyEnvFor(), typeCode: true });
    expect(done.exitCode, done.screen).toBe(0);
    expect(done.screen).toContain('-        "PreToolUse": [');
    expect(done.stdout).toContain('restored byte for byte');
    expect(readFileSync(files.claude, 'utf8')).toBe(CLAUDE_SETTINGS);
    expect(json(readFileSync(join(assentHome, 'installs.json'), 'utf8'))['files']).toEqual({});
  });

  it('R-HOOK-7 after the user edited the file, removes only assent\'s entries and keeps the edit and every other byte', async () => {
    const files = writeSettings();
    expect((await assent(['install', 'gemini', '--mcp'])).code).toBe(0);
    writeFileSync(files.gemini, readFileSync(files.gemini, 'utf8').replace('"gemini-api-key"', '"oauth-personal"'));
    const done = await runInTerminal(['uninstall', 'gemini', '--mcp'], { env: ptyEnvFor(), typeCode: true });
    expect(done.exitCode, done.screen).toBe(0);
    expect(done.stdout).toContain('the file changed since `assent install`, and every other byte of it is as it was');
    expect(readFileSync(files.gemini, 'utf8')).toBe(GEMINI_SETTINGS.replace('"gemini-api-key"', '"oauth-personal"'));
    const nothing = await assent(['uninstall', 'gemini']);
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toMatch(/^Nothing to remove/);
  });
});

function ptyEnvFor(): Record<string, string> {
  return { HOME: home, ASSENT_HOME: assentHome, CODEX_HOME: join(home, '.codex') };
}

/** The repo's CLI in a real terminal, answering its code prompt with `answer`. */
async function runInTerminalAt(args: string[], answer: string): Promise<{ exitCode: number; screen: string }> {
  const { PtySession } = await import('../helpers/pty.js');
  const outFile = join(root, 'pty-out');
  const session = new PtySession(args, { outFile, env: ptyEnvFor(), cwd: join(home, 'work') });
  try {
    await session.waitFor(/Type ([a-z]{4}) /);
    session.type(`${answer}\r`);
    const { exitCode } = await session.finish(outFile);
    return { exitCode, screen: session.screen };
  } finally {
    session.kill();
  }
}

/** The trust record Codex's /hooks review writes for the hook at `key` (config.toml, observed with Codex 0.169.0). */
function recordCodexTrust(key: string): void {
  writeFileSync(join(home, '.codex', 'config.toml'), `[hooks.state]\n\n[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "sha256:${'ab'.repeat(32)}"\n`, { flag: 'a' });
}

describe('R-HOOK-7 assent doctor', () => {
  it('issue 20: with Codex installed and no trust record doctor names the missing /hooks trust (exit 65) and never says every agent is gated; with a record it keeps the caveat', async () => {
    expect((await assent(['install', 'codex'])).code).toBe(0);
    const untrusted = await assent(['doctor']);
    expect(untrusted.code).toBe(65);
    expect(untrusted.stdout).toContain(`Codex has no trust record for assent's PreToolUse hook (no [hooks.state."${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0"]`);
    expect(untrusted.stdout).not.toContain('All installed agents are gated');
    recordCodexTrust(`${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0`);
    const trusted = await assent(['doctor']);
    expect(trusted.code, trusted.stdout).toBe(0);
    expect(trusted.stdout).toContain("All installed agents are gated by this assent, as far as doctor can see. Codex: hooks must be trusted in Codex's /hooks review; doctor cannot check this.");
    expect(trusted.stdout).toContain("note: Codex has a trust record for assent's hook");
    writeFileSync(join(home, '.codex', 'config.toml'), 'enabled = false\n', { flag: 'a' });
    const off = await assent(['doctor', '--json']);
    expect(off.code).toBe(65);
    expect(JSON.stringify(json(off.stdout))).toContain('switched off in Codex');
  });

  it('R-HOOK-7 reports each installed agent as fine (exit 0) and fails with 65 when a hook entry is removed by hand', async () => {
    writeSettings();
    for (const agent of ['claude-code', 'codex', 'gemini']) expect((await assent(['install', agent])).code).toBe(0);
    // CODEX_HOOKS holds one SessionStart group; assent's PreToolUse group is the first of its event.
    recordCodexTrust(`${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0`);
    const healthy = await assent(['doctor', '--json']);
    expect(healthy.code, healthy.stdout + healthy.stderr).toBe(0);
    const doc = json(healthy.stdout) as { ok: boolean; data: { agents: Record<string, unknown>[] } };
    expect(doc.ok).toBe(true);
    expect(doc.data.agents.map((a) => [a['agent'], a['scope'], a['installed'], a['timeoutOk'], a['blocksCanary'], a['problems']])).toEqual([
      ['claude-code', 'user', true, true, true, []],
      ['codex', 'user', true, true, true, []],
      ['gemini', 'user', true, true, true, []],
      ...['opencode', 'kilo', 'copilot', 'qwen', 'droid', 'auggie', 'cline'].map((agent) => [agent, 'user', false, false, false, []]),
    ]);
    expect(doc.data.agents[1]).toMatchObject({ settingsPath: join(home, '.codex', 'hooks.json'), command: `"${process.execPath}" "${copy.hookEntry}" codex --timeout 136` });

    const file = join(home, '.codex', 'hooks.json');
    const settings = json(readFileSync(file, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    settings.hooks['PreToolUse'] = (settings.hooks['PreToolUse'] ?? []).filter((group) => !group.hooks.some((h) => h.command.includes('assent-hook.js')));
    writeFileSync(file, JSON.stringify(settings, null, 2));
    const broken = await assent(['doctor', '--json']);
    expect(broken.code).toBe(65);
    const failed = json(broken.stdout) as { ok: boolean; data: { agents: { agent: string; problems: string[]; blocksCanary: boolean }[] }; error: { type: string } };
    expect(failed.ok).toBe(false);
    expect(failed.error.type).toBe('invalid_input');
    const codex = failed.data.agents.find((a) => a.agent === 'codex');
    expect(codex?.blocksCanary).toBe(false);
    expect(codex?.problems.join('\n')).toContain('no PreToolUse hook: Codex runs every tool call without asking assent');
    expect(failed.data.agents.filter((a) => a.problems.length > 0).map((a) => a.agent)).toEqual(['codex']);

    const human = await assent(['doctor']);
    expect(human.code).toBe(65);
    expect(human.stdout).toContain('Codex (user,');
    expect(human.stdout).toContain('  - no PreToolUse hook');
  });

  it('R-HOOK-7 with nothing installed every agent is listed as not installed and doctor exits 0', async () => {
    const result = await assent(['doctor', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const agents = (json(result.stdout)['data'] as { agents: { agent: string; installed: boolean }[] }).agents;
    expect(agents.map((a) => [a.agent, a.installed])).toEqual([
      ['claude-code', false],
      ['codex', false],
      ['gemini', false],
      ['opencode', false],
      ['kilo', false],
      ['copilot', false],
      ['qwen', false],
      ['droid', false],
      ['auggie', false],
      ['cline', false],
    ]);
  });

  it('R-CLI-6 install, uninstall and doctor have --help text', async () => {
    for (const command of ['install', 'uninstall', 'doctor']) {
      const help = await assent([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: assent ${command}`);
      expect(help.stdout).toContain('--json');
    }
  });
});
