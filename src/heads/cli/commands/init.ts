// `assent init`: config.json with the default policy for agent actions written
// out (R-POL-8), so an operator can read and edit what decides. `--merge` adds
// the default sections a config.json lacks and keeps everything it has;
// `--force` replaces the file, and when that discards anything the operator
// wrote, it says what and asks for a typed code first.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { defaultAgentPolicyDocument } from '../../../core/policy/agentPolicyConfig.js';
import { DEFAULT_CONFIG } from '../../../core/config/config.js';
import { CONFIG_SCHEMA_PATH } from '../../../core/config/configJsonSchema.js';
import { discardedByDefaults, mergeConfigDefaults } from '../../../core/config/configMerge.js';
import { AssentError } from '../../../core/base/errors.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import { locateJsonError } from '../../../journal/configFile.js';
import { writeInitialConfig } from '../../../journal/initConfig.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { requireInteractiveTerminal, requireTypedCode } from '../terminal.js';

interface InitOptions {
  force?: boolean;
  merge?: boolean;
  json?: boolean;
}

const CONFIRM_DEADLINE_MS = 60_000;

/**
 * The JSON Schema this installation ships (schema/config.schema.json at the
 * package's root, four folders above this file in dist/ and in src/), as the
 * file: URL an editor follows from `"$schema"`.
 */
export function installedConfigSchemaUrl(): string {
  return new URL(`../../../../${CONFIG_SCHEMA_PATH}`, import.meta.url).href;
}

/** The document init writes: its JSON Schema for editors, the tool policy defaults and the agent policy, nothing else. */
export function defaultConfigDocument(): Record<string, unknown> {
  const { default: fallback, destructive, tools, consentTimeoutSeconds } = DEFAULT_CONFIG.policy;
  return { $schema: installedConfigSchemaUrl(), servers: {}, policy: { default: fallback, destructive, tools, consentTimeoutSeconds, ...defaultAgentPolicyDocument() } };
}

/** The config.json there is, parsed; undefined when there is none. Bad JSON is an error naming line and column. */
function readExisting(path: string): Record<string, unknown> | undefined {
  if (!fs.existsSync(path)) return undefined;
  const text = fs.readFileSync(path, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AssentError('config_invalid', `${path} is not valid JSON (${locateJsonError(text, error)}); fix it first, then run this again. Nothing was changed`, { details: { path } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AssentError('config_invalid', `${path} holds JSON that is not an object; fix it first, then run this again. Nothing was changed`, { details: { path } });
  }
  return value as Record<string, unknown>;
}

const say = (text: string): void => void process.stdout.write(`${text}\n`);

function runMerge(options: InitOptions): void {
  const paths = resolveStatePaths();
  const existing = readExisting(paths.config);
  const defaults = defaultConfigDocument();
  if (existing === undefined) return runPlain(options);
  const { merged, added } = mergeConfigDefaults(existing, defaults);
  if (added.length === 0) {
    if (options.json) printJsonOk({ path: paths.config, added });
    else say(`${paths.config} already has every default section; nothing was changed`);
    return;
  }
  const result = writeInitialConfig(paths, `${JSON.stringify(merged, null, 2)}\n`, { force: true });
  if (options.json) printJsonOk({ ...result, added });
  else {
    say(`added ${added.join(', ')} to ${result.path}; everything it had is kept (the previous file is ${result.backup ?? 'gone'})`);
    say('a running daemon applies it only after "assent config reload"');
  }
}

async function runForce(options: InitOptions): Promise<void> {
  const paths = resolveStatePaths();
  const existing = readExisting(paths.config);
  const defaults = defaultConfigDocument();
  const discarded = existing === undefined ? [] : discardedByDefaults(existing, defaults);
  if (discarded.length > 0) {
    requireInteractiveTerminal('`assent init --force` (it would discard settings of yours; `assent init --merge` keeps them)');
    process.stderr.write(`Replacing ${paths.config} with the defaults discards:\n${discarded.map((key) => `  - ${key}`).join('\n')}\n`);
    const code = newApprovalCode((n) => randomBytes(n));
    await requireTypedCode(code, {
      deadlineMs: CONFIRM_DEADLINE_MS,
      consequence: `${paths.config} was not changed`,
      prompt: `Type ${code} to replace it (a backup is kept), anything else cancels; \`assent init --merge\` adds the defaults and keeps these: `,
    });
  }
  runPlain({ ...options, force: true });
}

function runPlain(options: InitOptions): void {
  const result = writeInitialConfig(resolveStatePaths(), `${JSON.stringify(defaultConfigDocument(), null, 2)}\n`, { force: options.force === true });
  if (options.json) printJsonOk(result);
  else {
    if (result.backup !== undefined) say(`kept the previous file as ${result.backup}`);
    say(`wrote ${result.path}; a running daemon applies it only after "assent config reload"`);
  }
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      'Write config.json with the default policy spelled out. An existing file is left alone unless --merge (adds the default sections it lacks, keeps the rest) or --force (replaces it; a typed code first when that discards settings of yours; a backup is kept).',
    )
    .option('--merge', 'add the default sections an existing config.json lacks and keep everything it has (a backup is kept)')
    .option('--force', 'replace an existing config.json, keeping it as config.json.assent-backup-<UTC time>; asks for a typed code when that discards settings')
    .option('--json', 'print one JSON document')
    .action(async (options: InitOptions) => {
      try {
        if (options.merge === true && options.force === true) {
          throw new AssentError('usage', '--merge and --force exclude each other: --merge keeps what config.json has, --force replaces it; choose one');
        }
        if (options.merge === true) runMerge(options);
        else if (options.force === true) await runForce(options);
        else runPlain(options);
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
