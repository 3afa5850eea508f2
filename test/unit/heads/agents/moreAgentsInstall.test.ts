// R-HOOK-14: what install writes for the four newer agents — Copilot's own flat
// hook entries, Qwen's grouped ones, the OpenCode/Kilo plugin file — and that no
// plugin text that fails to load is ever written.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AssentInstallation } from '../../../../src/heads/agents/hookCommand.js';
import { parseAgent } from '../../../../src/heads/agents/agentTargets.js';
import { planInstall } from '../../../../src/heads/agents/installPlan.js';
import { isAssentPlugin, pluginText, readPluginSettings, verifyPluginText } from '../../../../src/heads/agents/pluginFile.js';

let root: string;
const installation: AssentInstallation = { node: '/usr/bin/node', hookEntry: '/opt/assent "x"/dist/bin/assent-hook.js', cliEntry: '/opt/assent/dist/bin/assent.js' };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'assent-more-plan-'));
  mkdirSync(join(root, 'work'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const where = (): { env: NodeJS.ProcessEnv; homedir: string; cwd: string } => ({ env: {}, homedir: root, cwd: join(root, 'work') });

describe('R-HOOK-14 install plans', () => {
  it('Copilot: flat {type, bash, timeoutSec} entries under preToolUse and postToolUse in ~/.copilot/settings.json, the command carrying --timeout', () => {
    const plan = planInstall({ agent: 'copilot', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
    const file = plan.files[0];
    expect(file?.file).toBe(join(root, '.copilot', 'settings.json'));
    const settings = JSON.parse(file?.afterText ?? '{}') as { hooks: Record<string, unknown[]> };
    expect(settings.hooks['preToolUse']).toEqual([{ type: 'command', bash: '"/usr/bin/node" "/opt/assent \\"x\\"/dist/bin/assent-hook.js" copilot --timeout 136', timeoutSec: 136 }]);
    expect(settings.hooks['postToolUse']).toEqual([{ type: 'command', bash: '"/usr/bin/node" "/opt/assent \\"x\\"/dist/bin/assent-hook.js" copilot --after --timeout 136', timeoutSec: 136 }]);
  });

  it('Qwen: grouped entries with matcher ".*" under hooks.PreToolUse and PostToolUse', () => {
    const plan = planInstall({ agent: 'qwen', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
    const settings = JSON.parse(plan.files[0]?.afterText ?? '{}') as { hooks: Record<string, { matcher: string; hooks: { timeout: number }[] }[]> };
    expect(settings.hooks['PreToolUse']?.[0]).toMatchObject({ matcher: '.*', hooks: [{ type: 'command', timeout: 136 }] });
    expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'PostToolUse']);
  });

  it('OpenCode/Kilo: the plugin file in the config dir\'s plugin/, honouring XDG_CONFIG_HOME; its settings read back; it loads and blocks on every failure', async () => {
    const plan = planInstall({ agent: 'kilo', scope: 'user', where: { ...where(), env: { XDG_CONFIG_HOME: join(root, 'xdg') } }, installation, hookTimeoutSeconds: 110, mcp: false });
    expect(plan.files[0]?.file).toBe(join(root, 'xdg', 'kilo', 'plugin', 'assent.js'));
    const text = plan.files[0]?.afterText ?? '';
    expect(isAssentPlugin(text)).toBe(true);
    expect(readPluginSettings(text)).toEqual({ node: '/usr/bin/node', hookEntry: installation.hookEntry, agent: 'kilo', timeoutSeconds: 136 });
    await verifyPluginText(text);
    const project = planInstall({ agent: 'opencode', scope: 'project', where: where(), installation, hookTimeoutSeconds: 110, mcp: false });
    expect(project.files[0]?.file).toBe(join(root, 'work', '.opencode', 'plugin', 'assent.js'));
  });

  it('a plugin text that throws at load, or exports no factory, is refused before anything is written', async () => {
    const good = pluginText({ agent: 'opencode', installation, timeoutSeconds: 128 });
    await expect(verifyPluginText(`${good}\nthrow new Error('at load');\n`)).rejects.toThrow(/does not load \(at load\)/);
    await expect(verifyPluginText(good.replace('export const AssentPlugin', 'const AssentPlugin'))).rejects.toThrow(/exports no AssentPlugin/);
  });

  it('--mcp is refused for the plugin agents rather than written in a shape they do not read', () => {
    expect(() => planInstall({ agent: 'opencode', scope: 'user', where: where(), installation, hookTimeoutSeconds: 110, mcp: true })).toThrow(/--mcp is not supported for OpenCode/);
  });
});

describe('agents assent does not gate yet (issue 36)', () => {
  it('install of Crush or Continue says it is not supported and why, never "unknown agent"; Auggie and Cline are agents now', () => {
    expect(parseAgent('auggie')).toBe('auggie');
    expect(parseAgent('cline')).toBe('cline');
    for (const [name, why] of [['crush', /outside the registry/], ['continue', /nothing calls/], ['cn', /nothing calls/]] as const) {
      expect(() => parseAgent(name)).toThrow(expect.objectContaining({ type: 'usage', message: expect.stringMatching(why) }));
      expect(() => parseAgent(name)).toThrow(/is not supported: .*docs\/agents\.md/);
    }
    expect(() => parseAgent('nope')).toThrow(/unknown agent "nope"/);
  });
});
