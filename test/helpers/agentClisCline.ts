// How the harness launches the Cline CLI (`cline --json`) offline: its
// Bun-compiled binary from the platform package, all of its state under
// CLINE_DIR in the temp HOME, an openai-compatible provider in providers.json
// that points at the fake Chat Completions model, telemetry opted out and a
// fresh feature-flag cache, without which it looks up otel.cline.bot and
// data.cline.bot (docs/agents-testing.md). runAgent in agentClis.ts does the
// rest (process group, trap, strace).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunOptions, CliInstall, Launch } from './agentClis.js';

/** The model id the one provider below is given. */
export const CLINE_MODEL_ID = 'fake-model';

/**
 * The hook files Cline 3.0.65 runs, by the event its file is named after
 * (matched without case, any of .sh/.js/.py/… or no extension). PreCompact is
 * a name it knows but never runs from a file.
 */
export const CLINE_HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'TaskStart', 'TaskResume', 'TaskCancel', 'TaskComplete', 'TaskError', 'SessionShutdown'] as const;

export function clineInstall(modules: string): CliInstall {
  // The npm package's bin/cline is a resolver script that picks this binary; it is run directly.
  const binary = join(modules, '@cline', 'cli-linux-x64', 'bin', 'cline');
  return { packageName: 'cline', lockedPackages: ['cline', '@cline/cli-linux-x64'], entry: binary, argv: [binary] };
}

/** Where Cline keeps its settings, sessions, logs and databases for a run in `home` (CLINE_DIR). */
export function clineDir(home: string): string {
  return join(home, '.cline');
}

/**
 * Writes the providers.json that `cline auth -p openai-compatible -b URL -k
 * dummy -m fake-model` writes (a spawnSync of it would block the fake model,
 * which runs in the caller's process), the telemetry opt-out in
 * global-settings.json, a feature-flag cache fresh enough that no flags are
 * fetched, one `<Event>.sh` per hook (`exec COMMAND`, which Cline runs with
 * bash, the payload on stdin) and, when the run names MCP servers,
 * cline_mcp_settings.json in the shape `cline mcp add` writes; returns the
 * `cline --json` launch. Cline approves every tool without asking, so the
 * hook is the only gate.
 */
export function prepareCline(install: CliInstall, home: string, options: AgentRunOptions, prompt: string): Launch {
  if (options.hookTimeoutSeconds !== undefined) {
    throw new Error('cline: a hook file has no timeout setting (Cline 3.0.65 gives every hook 120 s, then runs the call); leave hookTimeoutSeconds out');
  }
  const dir = clineDir(home);
  const settings = join(dir, 'data', 'settings');
  mkdirSync(settings, { recursive: true });
  mkdirSync(join(dir, 'data', 'cache'), { recursive: true });
  const now = new Date();
  const provider = { provider: 'openai-compatible', apiKey: 'dummy', model: CLINE_MODEL_ID, baseUrl: `${options.model.baseUrl}/v1` };
  const providers = { version: 1, lastUsedProvider: 'openai-compatible', modes: {}, providers: { 'openai-compatible': { settings: provider, updatedAt: now.toISOString(), tokenSource: 'manual' } } };
  writeFileSync(join(settings, 'providers.json'), JSON.stringify(providers, null, 2));
  // Without it Cline exports OpenTelemetry to otel.cline.bot.
  writeFileSync(join(settings, 'global-settings.json'), JSON.stringify({ telemetryOptOut: true }, null, 2));
  // Without it (or with one older than an hour) Cline asks PostHog at data.cline.bot for its feature flags.
  const flags = { version: 2, updatedAt: now.getTime(), userId: null, flagsPayload: { featureFlags: {}, featureFlagPayloads: {} } };
  writeFileSync(join(dir, 'data', 'cache', 'feature-flags.json'), JSON.stringify(flags, null, 2));
  if (options.hooks !== undefined) {
    mkdirSync(join(dir, 'hooks'), { recursive: true });
    for (const [event, command] of Object.entries(options.hooks)) {
      if (!(CLINE_HOOK_EVENTS as readonly string[]).includes(event)) throw new Error(`cline: no hook event ${event} (Cline runs ${CLINE_HOOK_EVENTS.join(', ')})`);
      writeFileSync(join(dir, 'hooks', `${event}.sh`), `exec ${command}\n`);
    }
  }
  if (options.mcpServers !== undefined) {
    const servers = Object.fromEntries(
      Object.entries(options.mcpServers).map(([name, spec]) => [name, { transport: { type: 'stdio', command: spec.command, args: spec.args ?? [], ...(spec.env === undefined ? {} : { env: spec.env }) } }]),
    );
    writeFileSync(join(settings, 'cline_mcp_settings.json'), JSON.stringify({ mcpServers: servers }, null, 2));
  }
  return {
    argv: [...install.argv, '--json', '--auto-approve', 'true', '-c', options.cwd, prompt],
    env: {
      CLINE_DIR: dir,
      // No background hub daemon: the session runs in this process.
      CLINE_SESSION_BACKEND_MODE: 'local',
      CLINE_NO_AUTO_UPDATE: '1',
      DO_NOT_TRACK: '1',
    },
  };
}
