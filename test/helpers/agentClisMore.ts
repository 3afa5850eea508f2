// How the harness launches the four agent CLIs that talk Chat Completions
// (OpenCode, Kilo Code, Copilot CLI, Qwen Code) offline: what each needs in its
// temp HOME and environment to use only the fake model (AGENT-CLIS.md, "More
// agents"). runAgent in agentClis.ts does the rest (process group, trap, strace).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunOptions, CliInstall, Launch } from './agentClis.js';

export type MoreAgentName = 'opencode' | 'kilo' | 'copilot' | 'qwen';

export const MORE_AGENT_NAMES: readonly MoreAgentName[] = ['opencode', 'kilo', 'copilot', 'qwen'];

/** The model name every one of these CLIs is pointed at. */
export const FAKE_MODEL_NAME = 'fake-model';

export function moreInstalls(modules: string): Record<MoreAgentName, CliInstall> {
  const opencode = join(modules, 'opencode-linux-x64', 'bin', 'opencode');
  const kilo = join(modules, '@kilocode', 'cli-linux-x64', 'bin', 'kilo');
  const copilot = join(modules, '@github', 'copilot-linux-x64', 'copilot');
  const qwen = join(modules, '@qwen-code', 'qwen-code', 'cli.js');
  return {
    opencode: { packageName: 'opencode-ai', lockedPackages: ['opencode-ai', 'opencode-linux-x64'], entry: opencode, argv: [opencode] },
    kilo: { packageName: '@kilocode/cli', lockedPackages: ['@kilocode/cli', '@kilocode/cli-linux-x64'], entry: kilo, argv: [kilo] },
    copilot: { packageName: '@github/copilot', lockedPackages: ['@github/copilot', '@github/copilot-linux-x64'], entry: copilot, argv: [copilot] },
    qwen: { packageName: '@qwen-code/qwen-code', lockedPackages: ['@qwen-code/qwen-code'], entry: qwen, argv: [process.execPath, qwen] },
  };
}

/**
 * OpenCode and Kilo npm-install their plugin package into each config dir at
 * every start unless the dir already holds node_modules/ and a lockfile that
 * lists it: this stub stands in for it, so no registry is asked.
 */
function pluginPackageStub(dir: string, pkg: string): void {
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { [pkg]: '*' } }));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: 'config', lockfileVersion: 3, requires: true, packages: { '': { dependencies: { [pkg]: '*' } } } }));
}

/** OpenCode and Kilo share one engine under two names: `opencode`/`kilo`, `OPENCODE_*`/`KILO_*`. */
function prepareOpencodeLike(name: 'opencode' | 'kilo', install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  const configDir = join(home, '.config', name);
  mkdirSync(configDir, { recursive: true });
  pluginPackageStub(configDir, name === 'opencode' ? '@opencode-ai/plugin' : '@kilocode/plugin');
  const config: Record<string, unknown> = {
    $schema: undefined,
    provider: {
      fake: { npm: '@ai-sdk/openai-compatible', name: 'fake', options: { baseURL: `${options.model.baseUrl}/v1`, apiKey: 'dummy' }, models: { [FAKE_MODEL_NAME]: { name: FAKE_MODEL_NAME, tool_call: true } } },
    },
    model: `fake/${FAKE_MODEL_NAME}`,
    small_model: `fake/${FAKE_MODEL_NAME}`,
    autoupdate: false,
    share: 'disabled',
    ...(name === 'kilo' ? { enabled_providers: ['fake'] } : {}),
  };
  if (options.mcpServers !== undefined) {
    config['mcp'] = Object.fromEntries(
      Object.entries(options.mcpServers).map(([server, spec]) => [server, { type: 'local', command: [spec.command, ...(spec.args ?? [])], ...(spec.env === undefined ? {} : { environment: spec.env }) }]),
    );
  }
  writeFileSync(join(configDir, `${name}.json`), JSON.stringify(config, null, 2));
  const prefix = name === 'opencode' ? 'OPENCODE' : 'KILO';
  return {
    argv: [...install.argv, 'run', '--format', 'json', prompt],
    env: {
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      [`${prefix}_DISABLE_AUTOUPDATE`]: '1',
      [`${prefix}_DISABLE_MODELS_FETCH`]: '1',
      [`${prefix}_DISABLE_LSP_DOWNLOAD`]: '1',
      [`${prefix}_DISABLE_SHARE`]: '1',
      [`${prefix}_DISABLE_DEFAULT_PLUGINS`]: '1',
      ...(name === 'kilo' ? { KILO_TELEMETRY_LEVEL: 'off' } : {}),
    },
  };
}

function prepareCopilot(install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  mkdirSync(join(home, '.copilot'), { recursive: true });
  if (options.mcpServers !== undefined) {
    const servers = Object.fromEntries(Object.entries(options.mcpServers).map(([server, spec]) => [server, { type: 'local', command: spec.command, args: spec.args ?? [], env: spec.env ?? {}, tools: ['*'] }]));
    writeFileSync(join(home, '.copilot', 'mcp-config.json'), JSON.stringify({ mcpServers: servers }, null, 2));
  }
  return {
    argv: [...install.argv, '-p', prompt, '--allow-all-tools', '--no-auto-update', '--disable-client-telemetry', '--output-format', 'json'],
    env: {
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${options.model.baseUrl}/v1`,
      COPILOT_PROVIDER_API_KEY: 'dummy',
      COPILOT_MODEL: FAKE_MODEL_NAME,
      COPILOT_AUTO_UPDATE: 'false',
    },
  };
}

function prepareQwen(install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  mkdirSync(join(home, '.qwen'), { recursive: true });
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: 'openai' } },
    model: { name: FAKE_MODEL_NAME },
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false },
  };
  if (options.mcpServers !== undefined) {
    settings['mcpServers'] = Object.fromEntries(Object.entries(options.mcpServers).map(([server, spec]) => [server, { command: spec.command, args: spec.args ?? [], ...(spec.env === undefined ? {} : { env: spec.env }), trust: true }]));
  }
  writeFileSync(join(home, '.qwen', 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    argv: [...install.argv, '-p', prompt, '--approval-mode', 'yolo', '--output-format', 'json'],
    env: { OPENAI_BASE_URL: `${options.model.baseUrl}/v1`, OPENAI_API_KEY: 'dummy', OPENAI_MODEL: FAKE_MODEL_NAME },
  };
}

export function prepareMore(agent: MoreAgentName, install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  switch (agent) {
    case 'opencode':
    case 'kilo':
      return prepareOpencodeLike(agent, install, home, options, prompt);
    case 'copilot':
      return prepareCopilot(install, home, options, prompt);
    case 'qwen':
      return prepareQwen(install, home, options, prompt);
  }
}
