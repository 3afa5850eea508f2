// R-HOOK-14 R-HOOK-7 for Auggie: install writes Claude-style groups with
// `metadata.includeMCPMetadata` and a timeout in milliseconds into
// ~/.augment/settings.json (the project scope: the git root's
// .augment/settings.json, Auggie's workspace root), keeping the person's keys;
// uninstall removes only assent's groups; doctor reads Augment's server-side
// switch from what Auggie's own log says of its last start.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentTarget, auggieWorkspaceRoot, installNotes, parseAgent, supportsMcpInstall } from '../../../../src/heads/agents/agentTargets.js';
import { auggieFindings, auggieLogFile, readAuggieSwitch } from '../../../../src/heads/agents/auggieSettings.js';
import type { AssentInstallation } from '../../../../src/heads/agents/hookCommand.js';
import { canaryEvent } from '../../../../src/heads/agents/hookDoctor.js';
import { planInstall, planUninstall } from '../../../../src/heads/agents/installPlan.js';
import { readJson } from '../../../../src/heads/agents/settingsFiles.js';
import { parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';

let root: string;
const installation: AssentInstallation = { node: '/usr/bin/node', hookEntry: '/opt/assent/dist/bin/assent-hook.js', cliEntry: '/opt/assent/dist/bin/assent.js' };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'assent-auggie-plan-'));
  mkdirSync(join(root, 'work'));
  mkdirSync(join(root, '.augment'));
  mkdirSync(join(root, 'tmp'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const where = (): { env: NodeJS.ProcessEnv; homedir: string; cwd: string } => ({ env: { TMPDIR: join(root, 'tmp') }, homedir: root, cwd: join(root, 'work') });
const install = (mcp = false): ReturnType<typeof planInstall> => planInstall({ agent: 'auggie', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp });
const settingsFile = (): string => join(root, '.augment', 'settings.json');
const command = (after: boolean): string => `"/usr/bin/node" "/opt/assent/dist/bin/assent-hook.js" auggie ${after ? '--after ' : ''}--timeout 136`;
const group = (after: boolean): Record<string, unknown> => ({ matcher: '.*', hooks: [{ type: 'command', command: command(after), timeout: 136_000 }], metadata: { includeMCPMetadata: true } });

describe('R-HOOK-14 Auggie install', () => {
  it('auggie is an agent install takes; --mcp is supported (its mcpServers sit in the same settings.json)', () => {
    expect(parseAgent('auggie')).toBe('auggie');
    expect(supportsMcpInstall('auggie')).toBe(true);
  });

  it('writes PreToolUse and PostToolUse groups into ~/.augment/settings.json: matcher ".*", timeout in ms, includeMCPMetadata', () => {
    const plan = install();
    expect(plan.files.map((file) => file.file)).toEqual([settingsFile()]);
    expect(JSON.parse(plan.files[0]?.afterText ?? '')).toEqual({ hooks: { PreToolUse: [group(false)], PostToolUse: [group(true)] } });
  });

  it('keeps the person\'s keys, comments and hooks and appends to their PreToolUse list; a second install changes nothing; uninstall gives the text back', () => {
    const before = '{\n  // mine\n  "indexingAllowDirs": ["/w"],\n  "hooks": { "PreToolUse": [ { "matcher": "view", "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ] }\n}\n';
    writeFileSync(settingsFile(), before);
    const after = install().files[0]?.afterText ?? '';
    expect(after).toContain('// mine');
    const parsed = readJson(after, 'comments') as { hooks: Record<string, { matcher: string }[]>; indexingAllowDirs: string[] };
    expect(parsed.hooks['PreToolUse']?.map((g) => g.matcher)).toEqual(['view', '.*']);
    expect(parsed.indexingAllowDirs).toEqual(['/w']);
    writeFileSync(settingsFile(), after);
    expect(install().files[0]?.changed).toBe(false);
    const removed = planUninstall({ agent: 'auggie', scope: 'user', where: where(), mcp: false, records: {} }).files[0];
    expect(removed?.afterText).toBe(before);
  });

  it('Auggie rewrites settings.json itself (pretty-printed, comments gone): uninstall then removes assent\'s groups and keeps what Auggie added', () => {
    writeFileSync(settingsFile(), '{}');
    const installed = JSON.parse(install().files[0]?.afterText ?? '') as Record<string, unknown>;
    writeFileSync(settingsFile(), `${JSON.stringify({ ...installed, indexingAllowDirs: ['/w'] }, null, 2)}\n`);
    const removed = planUninstall({ agent: 'auggie', scope: 'user', where: where(), mcp: false, records: {} }).files[0];
    expect(JSON.parse(removed?.afterText ?? '')).toEqual({ indexingAllowDirs: ['/w'] });
  });

  it('--scope project is the workspace root\'s .augment/settings.json: the git root above the folder, else the folder', () => {
    const project = (): string | undefined => planInstall({ agent: 'auggie', scope: 'project', where: where(), installation, hookTimeoutSeconds: 110, mcp: false }).files[0]?.file;
    expect(project()).toBe(join(root, 'work', '.augment', 'settings.json'));
    mkdirSync(join(root, 'repo', '.git'), { recursive: true });
    mkdirSync(join(root, 'repo', 'sub'));
    expect(auggieWorkspaceRoot(join(root, 'repo', 'sub'))).toBe(join(root, 'repo'));
    expect(agentTarget('auggie', 'project', { ...where(), cwd: join(root, 'repo', 'sub') }).hooksFile).toBe(join(root, 'repo', '.augment', 'settings.json'));
  });

  it('the install note says hooks depend on Augment\'s server and how to check', () => {
    expect(installNotes(agentTarget('auggie', 'user', where()), false).join('\n')).toMatch(/only while Augment's server switches them on.*type \/hooks/s);
    expect(installNotes(agentTarget('auggie', 'user', where()), false).join('\n')).not.toContain('ASSENT_HOME');
    expect(installNotes(agentTarget('auggie', 'user', where()), true).join('\n')).toMatch(/MCP servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER .*ASSENT_HOME/);
  });
});

describe('R-HOOK-7 doctor\'s Auggie checks', () => {
  const log = (): string => auggieLogFile(where());
  const flagsLine = (at: string, enableHooks: boolean, how = 'Successfully loaded'): string =>
    `${at} [info] 'Setup-featureFlags': ${how} feature flags: {"additionalChatModels":"","enableHooks":${String(enableHooks)},"cliEnableSentry":false}`;

  it('the log is augment-log.txt in TMPDIR (os.tmpdir()), /tmp without one', () => {
    expect(log()).toBe(join(root, 'tmp', 'augment-log.txt'));
    expect(auggieLogFile({ ...where(), env: {} })).toBe('/tmp/augment-log.txt');
    expect(auggieLogFile({ ...where(), env: { TMPDIR: '/x/' } })).toBe('/x/augment-log.txt');
  });

  it('no log: unknown, a note saying doctor cannot ask the server and how to check, no problem', () => {
    const found = auggieFindings(where());
    expect(found).toMatchObject({ state: 'unknown', problems: [] });
    expect(found.notes.join('\n')).toMatch(/only while Augment's server switches them on .*doctor cannot ask that server, and .*augment-log\.txt does not exist.*type \/hooks/);
  });

  it('the last start decides: off is a problem that says Auggie gates nothing; on is a note naming the files it read hooks from', () => {
    writeFileSync(log(), [flagsLine('2026-12-07 10:00:00.000', true), flagsLine('2026-12-07 11:00:00.000', false), "2026-12-07 11:00:01.000 [info] 'Setup': other"].join('\n'));
    const off = auggieFindings(where());
    expect(off.state).toBe('off');
    expect(off.problems.join('\n')).toMatch(/last start \(2026-12-07 11:00:00\.000, in .*augment-log\.txt\) loaded enableHooks false .*runs every tool call without asking assent/);
    writeFileSync(
      log(),
      [flagsLine('2026-12-07 11:00:00.000', false), flagsLine('2026-12-07 12:00:00.000', true, 'Using default'), `2026-12-07 12:00:00.100 [info] 'HookConfigLoader': Loaded hooks configuration from ${settingsFile()}`].join('\n'),
    );
    const on = auggieFindings(where());
    expect(on).toMatchObject({ state: 'on', problems: [] });
    expect(on.notes.join('\n')).toContain(`its last start (2026-12-07 12:00:00.000, in ${log()}) had them on, and read hooks from ${settingsFile()}`);
  });

  it('a log with no start in it, or not a regular file, is unknown', () => {
    writeFileSync(log(), 'nothing here\n');
    expect(readAuggieSwitch(where())).toMatchObject({ state: 'unknown', why: expect.stringContaining('records no start') });
    rmSync(log());
    mkdirSync(log());
    expect(readAuggieSwitch(where())).toMatchObject({ state: 'unknown', why: expect.stringContaining('not a regular file') });
    chmodSync(log(), 0o700);
  });

  it('the canary event is one the hook reads as an Auggie PreToolUse', () => {
    expect(parseHookEvent('auggie', 'before', JSON.stringify(canaryEvent('auggie', '/w', new Date())), '/x')).toMatchObject({ ok: true, action: { tool: 'AssentDoctorCanary', sessionId: 'assent-doctor', cwd: '/w' } });
  });
});
