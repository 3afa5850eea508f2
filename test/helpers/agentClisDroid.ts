// How the harness launches Factory Droid (`droid exec`) offline: its native
// binary from the platform package, a custom model in ~/.factory/config.json
// that points at the fake Chat Completions model, and FACTORY_AIRGAP_ENABLED,
// without which it looks up Factory's hosts (docs/agents-testing.md). runAgent
// in agentClis.ts does the rest (process group, trap, strace).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunOptions, CliInstall, Launch } from './agentClis.js';

/** The id Droid gives the one custom model below: `custom:<display name>-<index>`. */
export const DROID_MODEL_ID = 'custom:Fake-0';

export function droidInstall(modules: string): CliInstall {
  // The npm shim (bin/droid) only picks this binary; it is run directly.
  const binary = join(modules, '@factory', 'cli-linux-x64', 'bin', 'droid');
  return { packageName: '@factory/cli', lockedPackages: ['@factory/cli', '@factory/cli-linux-x64'], entry: binary, argv: [binary] };
}

/**
 * Writes ~/.factory/config.json (the custom model) and, when the run names
 * hooks or MCP servers, ~/.factory/hooks.json (whose top level is the hooks
 * object) and ~/.factory/mcp.json; returns the `droid exec` launch. `--auto
 * high` lets it run commands without its own confirmation, so the hook is the
 * only gate.
 */
export function prepareDroid(install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  const dir = join(home, '.factory');
  mkdirSync(dir, { recursive: true });
  const model = { model: 'fake-model', model_display_name: 'Fake', base_url: `${options.model.baseUrl}/v1`, api_key: 'dummy', provider: 'generic-chat-completion-api' };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ custom_models: [model] }, null, 2));
  if (options.hooks !== undefined) {
    const hooks = Object.fromEntries(
      Object.entries(options.hooks).map(([event, command]) => [event, [{ matcher: '*', hooks: [{ type: 'command', command, ...(options.hookTimeoutSeconds === undefined ? {} : { timeout: options.hookTimeoutSeconds }) }] }]]),
    );
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(hooks, null, 2));
  }
  if (options.mcpServers !== undefined) {
    const servers = Object.fromEntries(Object.entries(options.mcpServers).map(([name, spec]) => [name, { type: 'stdio', command: spec.command, args: spec.args ?? [], ...(spec.env === undefined ? {} : { env: spec.env }) }]));
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: servers }, null, 2));
  }
  return {
    argv: [...install.argv, 'exec', '--auto', 'high', '-m', DROID_MODEL_ID, '-o', 'json', prompt],
    env: { FACTORY_AIRGAP_ENABLED: 'true' },
  };
}
