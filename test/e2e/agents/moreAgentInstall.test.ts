// R-HOOK-14 with R-HOOK-7's standard: `assent install`, `doctor` and
// `uninstall` for OpenCode, Kilo Code, Copilot CLI, Qwen Code, Factory Droid and Auggie with the built
// binary and a real daemon in a temp HOME (the agents' own CLIs are not needed:
// moreAgentHooks.test.ts, droidHooks.test.ts and auggieHooks.test.ts run them against what install writes).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { makeTempHome, type CliResult, type TempHome } from '../../helpers/daemon.js';
import { runInTerminal } from '../../helpers/pty.js';

const cleanups = cleanupsAfterEach();

type Agent = 'opencode' | 'kilo' | 'copilot' | 'qwen' | 'droid' | 'auggie';
const AGENTS: readonly Agent[] = ['opencode', 'kilo', 'copilot', 'qwen', 'droid', 'auggie'];

/** A settings file each agent already had, hand-formatted, with a hook of the user's own for Copilot, Qwen and Droid. */
const BEFORE: Record<Agent, { file: string; text: string }> = {
  opencode: { file: '.config/opencode/opencode.json', text: '{\n    "model": "anthropic/claude-x",\n    "autoupdate": false\n}\n' },
  kilo: { file: '.config/kilo/kilo.json', text: '{ "model": "kilo/x" }\n' },
  copilot: {
    file: '.copilot/settings.json',
    text: '{\n  "theme": "dark",\n  "hooks": {\n    "sessionStart": [ { "type": "command", "bash": "echo hi", "timeoutSec": 5 } ]\n  }\n}\n',
  },
  qwen: {
    file: '.qwen/settings.json',
    text: '{\r\n\t"model": { "name": "qwen3" },\r\n\t"hooks": {\r\n\t\t"PreToolUse": [ { "matcher": "run_shell_command", "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ]\r\n\t}\r\n}\r\n',
  },
  // Droid's hooks.json is the hooks object itself; Droid reads comments in it.
  droid: { file: '.factory/hooks.json', text: '// mine\n{\n  "PreToolUse": [ { "matcher": "Read", "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ]\n}\n' },
  auggie: { file: '.augment/settings.json', text: '{\n  "model": "m",\n  "hooks": { "PreToolUse": [ { "matcher": "view", "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ] }\n}\n' },
};

/** Where install puts the hooks: the plugin file, or the settings file itself. */
const HOOKS_FILE: Record<Agent, string> = {
  opencode: '.config/opencode/plugin/assent.js',
  kilo: '.config/kilo/plugin/assent.js',
  copilot: '.copilot/settings.json',
  qwen: '.qwen/settings.json',
  droid: '.factory/hooks.json',
  auggie: '.augment/settings.json',
};

interface Report {
  agent: string;
  installed: boolean;
  blocksCanary: boolean;
  timeoutOk: boolean;
  problems: string[];
  notes: string[];
}

async function setup(agent: Agent): Promise<{ state: TempHome; home: string; env: Record<string, string>; cli: (args: string[]) => Promise<CliResult> }> {
  const state = makeTempHome();
  cleanups.push(() => state.cleanup());
  await state.startDaemon();
  const home = mkdtempSync(join(tmpdir(), `assent-more-install-${agent}-`));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  // TMPDIR: doctor reads Auggie's log (augment-log.txt) there; none here, so it reports the server switch as unknown.
  mkdirSync(join(home, 'tmp'));
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ASSENT_HOME: state.home, TMPDIR: join(home, 'tmp') };
  const settings = join(home, BEFORE[agent].file);
  mkdirSync(dirname(settings), { recursive: true });
  writeFileSync(settings, BEFORE[agent].text);
  return { state, home, env, cli: (args) => state.runCli(args, { env }) };
}

function reportOf(result: CliResult, agent: Agent): Report {
  const report = (JSON.parse(result.stdout) as { data: { agents: Report[] } }).data.agents.find((a) => a.agent === agent);
  expect(report, result.stdout).toBeDefined();
  return report as Report;
}

describe('R-HOOK-14 R-HOOK-7 install, doctor and uninstall for OpenCode, Kilo Code, Copilot CLI, Qwen Code, Factory Droid and Auggie', () => {
  for (const agent of AGENTS) {
    it(
      `${agent}: doctor --json reports it ok after install and not ok after the hook is removed by hand; install is idempotent; uninstall behind a typed code restores the settings byte for byte`,
      async () => {
        const { home, env, cli } = await setup(agent);
        const hooksFile = join(home, HOOKS_FILE[agent]);
        const installed = await cli(['install', agent, '--json']);
        expect(installed.code, installed.stderr).toBe(0);
        expect(existsSync(hooksFile)).toBe(true);
        const written = readFileSync(hooksFile, 'utf8');
        const again = await cli(['install', agent, '--json']);
        expect((JSON.parse(again.stdout) as { data: { changed: boolean } }).data.changed).toBe(false);
        expect(readFileSync(hooksFile, 'utf8')).toBe(written);

        const healthy = await cli(['doctor', '--json']);
        expect(healthy.code, healthy.stdout).toBe(0);
        expect(reportOf(healthy, agent)).toMatchObject({ installed: true, blocksCanary: true, timeoutOk: true, problems: [] });

        // Removed by hand: the plugin file deleted, or the settings written back without assent's entries.
        if (agent === 'opencode' || agent === 'kilo') rmSync(hooksFile);
        else writeFileSync(hooksFile, BEFORE[agent].text);
        const broken = await cli(['doctor', '--json']);
        expect(broken.code).toBe(65);
        expect(reportOf(broken, agent).problems.join('\n')).toMatch(/removed .*by hand/);

        expect((await cli(['install', agent])).code).toBe(0);
        const headless = await cli(['uninstall', agent]);
        expect(headless.code).toBe(77);
        expect(existsSync(hooksFile)).toBe(true);
        const done = await runInTerminal(['uninstall', agent], { env, typeCode: true });
        expect(done.exitCode, done.screen).toBe(0);
        expect(readFileSync(join(home, BEFORE[agent].file), 'utf8')).toBe(BEFORE[agent].text);
        if (agent === 'opencode' || agent === 'kilo') expect(existsSync(dirname(hooksFile))).toBe(false);
        const after = await cli(['doctor', '--json']);
        expect(reportOf(after, agent)).toMatchObject({ installed: false, problems: [] });
      },
      60_000,
    );
  }

  it('opencode: a plugin file that throws at load is reported by doctor; install refuses to overwrite a plugin file that is not assent\'s and writes nothing', async () => {
    const { home, cli } = await setup('opencode');
    const plugin = join(home, HOOKS_FILE.opencode);
    expect((await cli(['install', 'opencode'])).code).toBe(0);
    const text = readFileSync(plugin, 'utf8');
    // Still assent's by its first line, but broken: OpenCode would skip it in silence.
    writeFileSync(plugin, `${text.split('\n')[0] ?? ''}\nthrow new Error('broken on purpose');\n`);
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(65);
    expect(reportOf(doctor, 'opencode').problems.join('\n')).toMatch(/the plugin file does not load \(broken on purpose\)/);

    writeFileSync(plugin, 'export const Mine = async () => ({});\n');
    const refused = await cli(['install', 'opencode', '--json']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('is not a plugin assent wrote');
    expect(readFileSync(plugin, 'utf8')).toBe('export const Mine = async () => ({});\n');
  }, 60_000);

  it('opencode: a plugin written by an assent from before confined runs is named by doctor as older, with the fix', async () => {
    const { state, home, cli } = await setup('opencode');
    const plugin = join(home, HOOKS_FILE.opencode);
    expect((await cli(['install', 'opencode'])).code).toBe(0);
    // The older plugin had no 'confine' branch; install recorded its text as written.
    const older = readFileSync(plugin, 'utf8').replace(/\n {6}\/\/ R-SH-14:[\s\S]*?\n {6}}\n/, '\n');
    expect(older).not.toContain("'confine'");
    writeFileSync(plugin, older);
    const recordsFile = join(state.home, 'installs.json');
    const records = JSON.parse(readFileSync(recordsFile, 'utf8')) as { files: Record<string, { afterDigest: string }> };
    const entry = Object.entries(records.files).find(([file]) => file.endsWith('assent.js'));
    expect(entry).toBeDefined();
    if (entry !== undefined) entry[1].afterDigest = createHash('sha256').update(older, 'utf8').digest('hex');
    writeFileSync(recordsFile, JSON.stringify(records), { mode: 0o600 });
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(65);
    const problems = reportOf(doctor, 'opencode').problems.join('\n');
    expect(problems).toMatch(/written by an older assent: it refuses the commands assent would run confined/);
    expect(problems).not.toMatch(/edited since/);
    expect((await cli(['install', 'opencode'])).code).toBe(0);
    expect(reportOf(await cli(['doctor', '--json']), 'opencode').problems).toEqual([]);
  }, 60_000);

  it('copilot: --scope project is refused with what to do instead, since repository hooks load only in a trusted folder; doctor says which hooks it checks', async () => {
    const { cli } = await setup('copilot');
    const project = await cli(['install', 'copilot', '--scope', 'project']);
    expect(project.code).not.toBe(0);
    expect(project.stderr + project.stdout).toMatch(/only in a folder it trusts/);
    expect((await cli(['install', 'copilot'])).code).toBe(0);
    expect(reportOf(await cli(['doctor', '--json']), 'copilot').notes.join('\n')).toMatch(/\.github\/hooks load only in a folder it trusts/);
  }, 60_000);
});
