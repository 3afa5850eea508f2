// Planning and applying install/uninstall on real files in a temp HOME (R-HOOK-7):
// backups before changes, new files and dirs private, byte-for-byte restore from
// installs.json, a structural removal when the file changed since.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync, symlinkSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentTarget, type AgentId, type InstallScope } from '../../../../src/heads/agents/agentTargets.js';
import { findAssentHooks } from '../../../../src/heads/agents/assentEntries.js';
import { hookTimeoutSecondsOf } from '../../../../src/heads/agents/hookTimeout.js';
import { agentTimeoutSuffices, HOOK_SPAWN_ALLOWANCE_SECONDS, hookDeadlineMs, requiredAgentTimeoutSeconds } from '../../../../src/core/agent/hookDeadline.js';
import { readInstallRecords, recordsPath } from '../../../../src/heads/agents/installRecords.js';
import { applyInstall, applyUninstall, planInstall, planUninstall } from '../../../../src/heads/agents/installPlan.js';
import { parseSettings } from '../../../../src/heads/agents/settingsFiles.js';
import { DEFAULT_CONFIG, type Config } from '../../../../src/core/config/config.js';
import { resolveStatePaths, type StatePaths } from '../../../../src/state/statePaths.js';

let root: string;
let home: string;
let project: string;
let paths: StatePaths;
const installation = { node: '/usr/bin/node', hookEntry: '/srv/assent/dist/bin/assent-hook.js', cliEntry: '/srv/assent/dist/bin/assent.js' };
let clock = Date.parse('2026-12-01T10:00:00Z');
const now = (): Date => new Date((clock += 1000));

beforeEach(() => {
  clock = Date.parse('2026-12-01T10:00:00Z');
  root = mkdtempSync(join(tmpdir(), 'assent-plan-'));
  home = join(root, 'home');
  project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  paths = resolveStatePaths({ ASSENT_HOME: join(root, 'state') }, home);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const where = (env: NodeJS.ProcessEnv = {}) => ({ env, homedir: home, cwd: project });

function install(agent: AgentId, options: { scope?: InstallScope; mcp?: boolean; env?: NodeJS.ProcessEnv; timeout?: number; native?: boolean } = {}) {
  const plan = planInstall({
    agent,
    scope: options.scope ?? 'user',
    where: where(options.env),
    installation,
    hookTimeoutSeconds: options.timeout ?? 110,
    claudeNativePrompt: options.native === true,
    mcp: options.mcp === true,
  });
  return { plan, backups: applyInstall(plan, { paths, now: now() }) };
}

function uninstall(agent: AgentId, options: { scope?: InstallScope; mcp?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const plan = planUninstall({ agent, scope: options.scope ?? 'user', where: where(options.env), mcp: options.mcp === true, records: readInstallRecords(paths) });
  return { plan, backups: applyUninstall(plan, { paths, now: now() }) };
}

const mode = (file: string): number => statSync(file).mode & 0o777;
const HAND_FORMATTED = '{\n     "model" : "opus",\n  "hooks": {\n      "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "echo mine" } ] } ]\n  },\n     "statusLine": {"type": "command", "command": "date"}\n}';

describe('R-HOOK-7 install and uninstall on disk', () => {
  it('creates a missing settings file 0600 in a new 0700 directory; uninstall removes both again', () => {
    const { plan, backups } = install('claude-code');
    const file = join(home, '.claude', 'settings.json');
    expect(plan.files.map((f) => [f.file, f.changed])).toEqual([[file, true]]);
    expect(backups).toEqual({});
    expect(mode(join(home, '.claude'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(mode(recordsPath(paths))).toBe(0o600);
    expect(findAssentHooks(parseSettings(file, readFileSync(file, 'utf8')))).toHaveLength(2);
    const removed = uninstall('claude-code');
    expect(removed.plan.files[0]?.afterText).toBeUndefined();
    expect(existsSync(join(home, '.claude'))).toBe(false);
    expect(readInstallRecords(paths)).toEqual({});
  });

  it('backs up an existing file (0600, UTC-stamped) before changing it, keeps its mode, and a second install writes nothing', () => {
    const file = join(home, '.gemini', 'settings.json');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(file, '{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n', { mode: 0o644 });
    const { backups } = install('gemini', { mcp: true });
    const backup = backups[file] as string;
    expect(backup).toBe(`${file}.assent-backup-20261201T100001Z`);
    expect(readFileSync(backup, 'utf8')).toBe('{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n');
    expect(mode(backup)).toBe(0o600);
    expect(mode(file)).toBe(0o644);
    const written = readFileSync(file, 'utf8');
    const again = install('gemini', { mcp: true });
    expect(again.plan.files.every((f) => !f.changed)).toBe(true);
    expect(again.backups).toEqual({});
    expect(readFileSync(file, 'utf8')).toBe(written);
    expect(readdirSync(join(home, '.gemini')).filter((n) => n.includes('assent-backup'))).toHaveLength(1);
  });

  it('uninstall puts back the exact bytes from before install when the file is as install left it, even where a structural removal could not', () => {
    const file = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    const original = '{ "hooks": { "PostToolUse": [ ] } }';
    writeFileSync(file, original);
    install('claude-code');
    install('claude-code', { timeout: 300 }); // a second, changing install still restores the first "before"
    const { plan } = uninstall('claude-code');
    expect(plan.files[0]?.restoredExactly).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('R-HOOK-9 with hooks.claudeNativePrompt Claude Code also gets the PermissionRequest hook (the before-tool command, same timeout), kept in a hand-formatted file; again is a no-op, off removes it, uninstall restores the bytes', () => {
    const file = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    writeFileSync(file, HAND_FORMATTED);
    install('claude-code', { native: true });
    const written = readFileSync(file, 'utf8');
    expect(written.startsWith('{\n     "model" : "opus",')).toBe(true);
    const found = findAssentHooks(parseSettings(file, written));
    expect(found.map((hook) => hook.event)).toEqual(['PreToolUse', 'PostToolUse', 'PermissionRequest']);
    const [before, , dialog] = found;
    expect(dialog).toMatchObject({ matcher: '*', command: before?.command, timeout: before?.timeout });
    expect(install('claude-code', { native: true }).plan.files.every((f) => !f.changed)).toBe(true);
    // Off again: the next install takes the dialog hook out.
    install('claude-code');
    expect(findAssentHooks(parseSettings(file, readFileSync(file, 'utf8'))).map((hook) => hook.event)).toEqual(['PreToolUse', 'PostToolUse']);
    // Only Claude Code has a dialog assent answers.
    install('codex', { native: true });
    expect(findAssentHooks(parseSettings(join(home, '.codex', 'hooks.json'), readFileSync(join(home, '.codex', 'hooks.json'), 'utf8'))).map((hook) => hook.event)).toEqual(['PreToolUse', 'PostToolUse']);
    uninstall('claude-code');
    expect(readFileSync(file, 'utf8')).toBe(HAND_FORMATTED);
  });

  it('uninstall after the user changed the file removes only assent\'s entries and keeps the user\'s change and layout', () => {
    const file = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    writeFileSync(file, HAND_FORMATTED);
    install('claude-code');
    const edited = readFileSync(file, 'utf8').replace('"opus"', '"sonnet"');
    writeFileSync(file, edited);
    const { plan, backups } = uninstall('claude-code');
    expect(plan.files[0]?.restoredExactly).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(HAND_FORMATTED.replace('"opus"', '"sonnet"'));
    expect(readFileSync(backups[file] as string, 'utf8')).toBe(edited);
    expect(uninstall('claude-code').plan.files).toEqual([]);
  });

  it('a file that is not valid JSON is refused by name and left alone, with no backup', () => {
    const file = join(home, '.codex', 'hooks.json');
    mkdirSync(join(home, '.codex'));
    writeFileSync(file, '{"hooks": {');
    expect(() => install('codex')).toThrow(`${file} is not valid JSON`);
    expect(readdirSync(join(home, '.codex'))).toEqual(['hooks.json']);
    expect(existsSync(recordsPath(paths))).toBe(false);
  });

  it('a symlinked settings file is edited where it points, and the link stays a link', () => {
    const real = join(root, 'dotfiles-settings.json');
    writeFileSync(real, '{"model": "opus"}\n');
    mkdirSync(join(home, '.claude'));
    symlinkSync(real, join(home, '.claude', 'settings.json'));
    install('claude-code');
    expect(lstatSync(join(home, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    expect(findAssentHooks(parseSettings(real, readFileSync(real, 'utf8')))).toHaveLength(2);
  });

  it('Claude Code --mcp: user scope writes mcpServers.assent into ~/.claude.json (CLAUDE_CONFIG_DIR honoured), project scope into .mcp.json', () => {
    writeFileSync(join(home, '.claude.json'), '{"numStartups": 3}\n');
    install('claude-code', { mcp: true });
    expect(parseSettings('f', readFileSync(join(home, '.claude.json'), 'utf8'))).toEqual({
      numStartups: 3,
      mcpServers: { assent: { command: installation.node, args: [installation.cliEntry, 'mcp'] } },
    });
    install('claude-code', { mcp: true, scope: 'project' });
    expect(parseSettings('f', readFileSync(join(project, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: { assent: { command: installation.node, args: [installation.cliEntry, 'mcp'] } } });
    expect(existsSync(join(project, '.claude', 'settings.json'))).toBe(true);
    const configDir = join(root, 'claude-config');
    const target = agentTarget('claude-code', 'user', where({ CLAUDE_CONFIG_DIR: configDir }));
    expect([target.hooksFile, target.mcp.file]).toEqual([join(configDir, 'settings.json'), join(configDir, '.claude.json')]);
    uninstall('claude-code', { mcp: true });
    expect(readFileSync(join(home, '.claude.json'), 'utf8')).toBe('{"numStartups": 3}\n');
  });

  it('Codex: hooks in $CODEX_HOME/hooks.json, --mcp a marked table in config.toml; uninstall --mcp restores both', () => {
    const codexHome = join(root, 'codex-home');
    mkdirSync(codexHome);
    const toml = 'model = "gpt-5"\n# a comment\n';
    writeFileSync(join(codexHome, 'config.toml'), toml);
    install('codex', { mcp: true, env: { CODEX_HOME: codexHome } });
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toContain('[mcp_servers.assent]');
    // Codex itself appends to config.toml later; the uninstall still takes out only assent's table.
    writeFileSync(join(codexHome, 'config.toml'), `${readFileSync(join(codexHome, 'config.toml'), 'utf8')}\n[projects."/w"]\ntrust_level = "trusted"\n`);
    uninstall('codex', { mcp: true, env: { CODEX_HOME: codexHome } });
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toBe(`${toml}\n\n[projects."/w"]\ntrust_level = "trusted"\n`);
    expect(existsSync(join(codexHome, 'hooks.json'))).toBe(false);
  });

  it('uninstall without --mcp leaves the MCP server (and a later uninstall --mcp restores the original bytes)', () => {
    const file = join(home, '.gemini', 'settings.json');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(file, '{\n  "theme": "x"\n}\n');
    install('gemini', { mcp: true });
    uninstall('gemini');
    const settings = parseSettings(file, readFileSync(file, 'utf8'));
    expect(findAssentHooks(settings)).toEqual([]);
    expect(settings['mcpServers']).toBeDefined();
    uninstall('gemini', { mcp: true });
    expect(readFileSync(file, 'utf8')).toBe('{\n  "theme": "x"\n}\n');
  });

  it('R-HOOK-11 the hook timeout leaves the margin over hooks.timeoutSeconds plus a spawn (136 s for the default 110, 347 s for 300), on the entry and on the command line', () => {
    expect(hookTimeoutSecondsOf(DEFAULT_CONFIG)).toBe(110);
    expect(hookTimeoutSecondsOf({ ...DEFAULT_CONFIG, hooks: { timeoutSeconds: 300 } } as unknown as Config)).toBe(300);
    const { plan } = install('codex', { timeout: 300 });
    const hooks = findAssentHooks(parseSettings('f', plan.files[0]?.afterText ?? ''));
    expect(hooks.map((h) => h.timeout)).toEqual([347, 347]);
    expect(hooks.map((h) => h.command.endsWith(' --timeout 347'))).toEqual([true, true]);
    expect(requiredAgentTimeoutSeconds(110)).toBe(136);
    for (const seconds of [1, 2, 4, 30, 110, 300, 1500]) {
      const written = requiredAgentTimeoutSeconds(seconds);
      // The hook's deadline (the timeout less max(3 s, 10 %)) covers a spawn and the whole approval window; one second less would not.
      expect(hookDeadlineMs(written)).toBeGreaterThanOrEqual((seconds + HOOK_SPAWN_ALLOWANCE_SECONDS) * 1000);
      expect(agentTimeoutSuffices(written - 1, seconds)).toBe(false);
    }
  });
});
