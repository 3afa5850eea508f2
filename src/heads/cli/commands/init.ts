// `assent init`: config.json with the default policy for agent actions written
// out (R-POL-8), so an operator can read and edit what decides.
import type { Command } from 'commander';
import { defaultAgentPolicyDocument } from '../../../core/agentPolicyConfig.js';
import { DEFAULT_CONFIG } from '../../../core/config.js';
import { writeInitialConfig } from '../../../journal/initConfig.js';
import { resolveStatePaths } from '../../../journal/statePaths.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';

interface InitOptions {
  force?: boolean;
  json?: boolean;
}

/** The document init writes: the tool policy defaults and the agent policy, nothing else. */
export function defaultConfigDocument(): Record<string, unknown> {
  const { default: fallback, destructive, tools, consentTimeoutSeconds } = DEFAULT_CONFIG.policy;
  return { servers: {}, policy: { default: fallback, destructive, tools, consentTimeoutSeconds, ...defaultAgentPolicyDocument() } };
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('Write config.json with the default policy spelled out; refuses to replace an existing file unless --force (then a backup is kept).')
    .option('--force', 'replace an existing config.json, keeping it as config.json.assent-backup-<UTC time>')
    .option('--json', 'print one JSON document')
    .action((options: InitOptions) => {
      try {
        const result = writeInitialConfig(resolveStatePaths(), `${JSON.stringify(defaultConfigDocument(), null, 2)}\n`, { force: options.force === true });
        if (options.json) printJsonOk(result);
        else {
          if (result.backup !== undefined) process.stdout.write(`kept the previous file as ${result.backup}\n`);
          process.stdout.write(`wrote ${result.path}; a running daemon applies it only after "assent config reload"\n`);
        }
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
