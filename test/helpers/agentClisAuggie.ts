// How the harness launches Auggie (`auggie -p`) offline: the npm bundle run by
// this Node, a session in AUGMENT_SESSION_AUTH whose tenantURL is the fake
// Augment tenant (fakeAugment.ts), hooks and MCP servers in
// ~/.augment/settings.json, and the ripgrep it would otherwise download from
// github.com at every start already in place (docs/agents-testing.md). runAgent
// in agentClis.ts does the rest (process group, trap, strace).
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunOptions, CliInstall, Launch } from './agentClis.js';

/** Where Auggie 0.36.0 looks for its ripgrep before it downloads one (`~/.augment/binaries/ripgrep/v<version>-<target>/rg`). */
const RIPGREP_DIR = join('.augment', 'binaries', 'ripgrep', 'v14.1.1-linux-x64');

export function auggieInstall(modules: string): CliInstall {
  const entry = join(modules, '@augmentcode', 'auggie', 'augment.mjs');
  return { packageName: '@augmentcode/auggie', lockedPackages: ['@augmentcode/auggie'], entry, argv: [process.execPath, entry] };
}

/** The session Auggie reads from AUGMENT_SESSION_AUTH (the shape of ~/.augment/session.json), pointing at `tenantUrl`. */
export function auggieSession(tenantUrl: string): string {
  return JSON.stringify({ accessToken: 'fake-token', tenantURL: `${tenantUrl}/`, scopes: ['email'] });
}

/** Puts the machine's rg where Auggie looks first, or a stub that finds nothing when there is none. */
function placeRipgrep(home: string): void {
  const dir = join(home, RIPGREP_DIR);
  mkdirSync(dir, { recursive: true });
  const found = spawnSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).stdout.trim();
  if (found !== '') symlinkSync(found, join(dir, 'rg'));
  else writeFileSync(join(dir, 'rg'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
}

/**
 * Writes ~/.augment/settings.json (hooks, their `timeout` in milliseconds,
 * and MCP servers) and returns the `auggie -p` launch. Auggie's hooks only run
 * while the tenant's `/get-models` answer sets `feature_flags.enable_hooks`.
 */
export function prepareAuggie(install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  const dir = join(home, '.augment');
  mkdirSync(dir, { recursive: true });
  placeRipgrep(home);
  const settings: Record<string, unknown> = {};
  if (options.hooks !== undefined) {
    const timeout = options.hookTimeoutSeconds === undefined ? {} : { timeout: options.hookTimeoutSeconds * 1000 };
    settings['hooks'] = Object.fromEntries(Object.entries(options.hooks).map(([event, command]) => [event, [{ matcher: '.*', hooks: [{ type: 'command', command, ...timeout }] }]]));
  }
  if (options.mcpServers !== undefined) {
    settings['mcpServers'] = Object.fromEntries(
      Object.entries(options.mcpServers).map(([name, spec]) => [name, { command: spec.command, args: spec.args ?? [], ...(spec.env === undefined ? {} : { env: spec.env }) }]),
    );
  }
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    argv: [...install.argv, '-p', prompt, '--output-format', 'json'],
    env: { AUGMENT_SESSION_AUTH: auggieSession(options.model.baseUrl), AUGMENT_DISABLE_AUTO_UPDATE: '1' },
  };
}
