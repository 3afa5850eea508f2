// R-HOOK-14 R-HOOK-7 for Factory Droid: install writes ~/.factory/hooks.json,
// whose top level is the hooks object, keeping the person's comments and
// hooks; it refuses what would switch the person's own hooks off; uninstall
// removes only assent's groups; doctor's Droid checks find every
// "hooksDisabled" Droid reads, allowManagedHooksOnly and a commandRegex.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentTarget, parseAgent } from '../../../../src/heads/agents/agentTargets.js';
import { droidFindings } from '../../../../src/heads/agents/droidSettings.js';
import type { AssentInstallation } from '../../../../src/heads/agents/hookCommand.js';
import { planInstall, planUninstall } from '../../../../src/heads/agents/installPlan.js';
import { readJson } from '../../../../src/heads/agents/settingsFiles.js';

let root: string;
const installation: AssentInstallation = { node: '/usr/bin/node', hookEntry: '/opt/assent/dist/bin/assent-hook.js', cliEntry: '/opt/assent/dist/bin/assent.js' };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'assent-droid-plan-'));
  mkdirSync(join(root, 'work'));
  mkdirSync(join(root, '.factory'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const where = (): { env: NodeJS.ProcessEnv; homedir: string; cwd: string } => ({ env: {}, homedir: root, cwd: join(root, 'work') });
const install = (): ReturnType<typeof planInstall> => planInstall({ agent: 'droid', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
const hooksFile = (): string => join(root, '.factory', 'hooks.json');
const command = (after: boolean): string => `"/usr/bin/node" "/opt/assent/dist/bin/assent-hook.js" droid ${after ? '--after ' : ''}--timeout 136`;

describe('R-HOOK-14 Factory Droid install', () => {
  it('droid is an agent install takes (no longer "not supported")', () => {
    expect(parseAgent('droid')).toBe('droid');
  });

  it('writes PreToolUse and PostToolUse groups at the top level of ~/.factory/hooks.json, timeout in seconds; --scope project is the project\'s .factory/hooks.json', () => {
    const plan = install();
    expect(plan.files.map((file) => file.file)).toEqual([hooksFile()]);
    expect(JSON.parse(plan.files[0]?.afterText ?? '')).toEqual({
      PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: command(false), timeout: 136 }] }],
      PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: command(true), timeout: 136 }] }],
    });
    const project = planInstall({ agent: 'droid', scope: 'project', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
    expect(project.files[0]?.file).toBe(join(root, 'work', '.factory', 'hooks.json'));
  });

  it('keeps the person\'s comments and hooks in hooks.json and appends to their PreToolUse list; uninstall cuts out only assent\'s groups', () => {
    const before = '{\n  // mine\n  "PreToolUse": [ { "matcher": "Read", "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ],\n  "showHookOutput": true\n}\n';
    writeFileSync(hooksFile(), before);
    const after = install().files[0]?.afterText ?? '';
    expect(after).toContain('// mine');
    const parsed = readJson(after, 'comments') as Record<string, { matcher: string }[]>;
    expect(parsed['PreToolUse']?.map((group) => group.matcher)).toEqual(['Read', '*']);
    expect(parsed['showHookOutput']).toBe(true);
    writeFileSync(hooksFile(), after);
    const removed = planUninstall({ agent: 'droid', scope: 'user', where: where(), mcp: false, records: {} }).files[0];
    expect(removed?.afterText).toBe(before);
  });

  it('refuses, changing nothing, while Droid reads the older hooks/hooks.json (a new hooks.json would hide it)', () => {
    mkdirSync(join(root, '.factory', 'hooks'));
    writeFileSync(join(root, '.factory', 'hooks', 'hooks.json'), '{}');
    expect(() => install()).toThrow(/reads its hooks from .*hooks\/hooks\.json while .*hooks\.json does not exist/);
    writeFileSync(hooksFile(), '{}');
    expect(install().files[0]?.changed).toBe(true);
  });

  it('refuses while settings.json holds the person\'s own PreToolUse hooks that hooks.json does not list (assent\'s list there would hide them)', () => {
    writeFileSync(join(root, '.factory', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: '/usr/bin/true' }] }] } }));
    expect(() => install()).toThrow(/holds your own PreToolUse hooks under "hooks"; Factory Droid reads an event from .*hooks\.json whenever that file lists it/);
    // Once hooks.json lists PreToolUse, Droid reads that event from there already: adding assent's hides nothing more.
    writeFileSync(hooksFile(), JSON.stringify({ PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: '/usr/bin/true' }] }] }));
    expect(install().files[0]?.changed).toBe(true);
  });
});

describe('R-HOOK-7 doctor\'s Droid checks', () => {
  const findings = (hooksJson: Record<string, unknown>, managed = join(root, 'managed.json')): string => droidFindings(agentTarget('droid', 'user', where()), hooksFile(), hooksJson, join(root, 'work'), managed).problems.join('\n');

  it('nothing to report when no file switches hooks off', () => {
    expect(findings({})).toBe('');
  });

  it('"hooksDisabled" as Droid decides it: the first of the managed settings, the project\'s .factory/ of the cwd and the user\'s files that states it, hooks file before settings.json', () => {
    expect(findings({ hooksDisabled: true })).toMatch(/"hooksDisabled": true in .*\.factory\/hooks\.json: Droid gates nothing while hooksDisabled is true/);
    writeFileSync(join(root, '.factory', 'settings.json'), '{ "hooks": { "hooksDisabled": true } }');
    expect(findings({})).toMatch(/"hooks": \{"hooksDisabled": true\} in .*\/\.factory\/settings\.json: Droid gates nothing/);
    // Within a level hooks.json wins: its false leaves the hooks on.
    expect(findings({ hooksDisabled: false })).toBe('');
    // A top-level "hooksDisabled" in settings.json is not what Droid reads.
    writeFileSync(join(root, '.factory', 'settings.json'), '{ "hooksDisabled": true }');
    expect(findings({})).toBe('');
    rmSync(join(root, '.factory', 'settings.json'));
    mkdirSync(join(root, 'work', '.factory'));
    writeFileSync(join(root, 'work', '.factory', 'hooks.json'), '{ "hooksDisabled": true }');
    expect(findings({})).toMatch(/work\/\.factory\/hooks\.json: in this folder Droid gates nothing/);
    rmSync(join(root, 'work', '.factory', 'hooks.json'));
    writeFileSync(join(root, 'work', '.factory', 'settings.json'), '// project\n{ "hooks": { "hooksDisabled": true } }');
    expect(findings({})).toMatch(/work\/\.factory\/settings\.json: in this folder Droid gates nothing/);
    // The project's level comes before the user's: its false wins here, the user's true still holds elsewhere.
    writeFileSync(join(root, 'work', '.factory', 'settings.json'), '{ "hooks": { "hooksDisabled": false } }');
    expect(findings({ hooksDisabled: true })).toMatch(/in every folder whose own \.factory\/ does not say otherwise \(here .*work\/\.factory\/settings\.json says false/);
    writeFileSync(join(root, 'managed.json'), '{ "allowManagedHooksOnly": true, "hooks": { "hooksDisabled": true } }');
    const managed = findings({});
    expect(managed).toMatch(/managed\.json, the managed settings that decide it before any other file: Droid gates nothing/);
    expect(managed).toMatch(/"allowManagedHooksOnly": true in .*managed\.json: Droid runs only the hooks of the managed settings/);
    // A managed false decides for every level below it.
    writeFileSync(join(root, 'managed.json'), '{ "hooks": { "hooksDisabled": false } }');
    expect(findings({ hooksDisabled: true })).toBe('');
  });

  it('a commandRegex on assent\'s group limits it to some commands: reported', () => {
    const group = { matcher: '*', commandRegex: '^git', hooks: [{ type: 'command', command: command(false), timeout: 136 }] };
    expect(findings({ PreToolUse: [group] })).toMatch(/assent's PreToolUse group has "commandRegex" "\^git"/);
    expect(findings({ PreToolUse: [{ ...group, hooks: [{ type: 'command', command: '/usr/bin/true' }] }] })).toBe('');
  });
});
