// The `config` command family: `assent config check` (R-CFG-5).
import type { Command } from 'commander';
import type { ConfigProblem } from '../../../core/config/config.js';
import { AssentError, exitCodeFor } from '../../../core/base/errors.js';
import { inspectConfigFile } from '../../../journal/configFile.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { ExitWith, printJsonError, printJsonOk, reportFailure } from '../output.js';
import { registerConfigReload } from './configReload.js';
import { escapeText } from '../../../core/base/escape.js';
import { fetchUnconfirmedChange, unconfirmedChangeNote } from '../pinnedConfig.js';
import * as path from 'node:path';

interface CheckOptions {
  json?: boolean;
  file?: string;
}

function problemLine(problem: ConfigProblem): string {
  return `${problem.severity} ${problem.path === '' ? '(document)' : problem.path}: ${problem.message}`;
}

/**
 * Validates a config file and prints every problem; exit 0 when valid, 65 when
 * not. Without --file a missing config.json means the defaults; a file named
 * with --file must exist, since checking a mistyped path would otherwise report
 * "valid" about a file nobody wrote.
 */
async function runCheck(options: CheckOptions): Promise<void> {
  const stateConfig = resolveStatePaths().config;
  const file = options.file ?? stateConfig;
  const { problems, exists } = inspectConfigFile(file);
  if (!exists && options.file !== undefined) {
    throw new AssentError('invalid_input', `no config file at ${file} (--file); check the path, or leave out --file to check $ASSENT_HOME/config.json`, {
      details: { path: file },
    });
  }
  const errors = problems.filter((p) => p.severity === 'error');
  const valid = errors.length === 0;
  if (options.json) {
    if (valid) printJsonOk({ valid, file, exists, problems });
    else {
      printJsonError(
        new AssentError('config_invalid', `config ${file} has ${errors.length} error${errors.length === 1 ? '' : 's'}; fix each listed key and run the check again`, {
          details: { file, problems },
        }),
      );
    }
  } else {
    for (const problem of problems) process.stdout.write(`${problemLine(problem)}\n`);
    if (!exists) process.stdout.write(`no config file at ${file}; the defaults apply\n`);
    else if (valid) {
      const warnings = problems.length;
      process.stdout.write(`${file} is valid${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}\n`);
      // Valid is not yet in force: a running daemon keeps its pinned revision until a reload (R-CFG-4).
      const unconfirmed = path.resolve(file) === stateConfig ? await fetchUnconfirmedChange() : undefined;
      if (unconfirmed !== undefined) process.stdout.write(`note: ${escapeText(unconfirmedChangeNote(unconfirmed))}\n`);
    } else {
      process.stdout.write(`${file} is invalid: ${errors.length} error${errors.length === 1 ? '' : 's'}; fix each listed key and run the check again\n`);
    }
  }
  if (!valid) throw new ExitWith(exitCodeFor('config_invalid'));
}

/** Registers the `config` commands on the program. */
export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('Inspect the configuration (config.json in the state directory).');
  config
    .command('check')
    .description('Validate config.json and print every problem; exit 0 when valid, 65 when not.')
    .option('--json', 'print one JSON document')
    .option('--file <path>', 'check this file instead of $ASSENT_HOME/config.json')
    .action(async (options: CheckOptions) => {
      try {
        await runCheck(options);
      } catch (error) {
        if (error instanceof ExitWith) throw error;
        throw new ExitWith(reportFailure(error, options));
      }
    });
  config
    .command('schema')
    .description('Print the JSON Schema of config.json (the file assent init names in "$schema"), for editors.')
    .action(async () => {
      const { configJsonSchemaText } = await import('../../../core/config/configJsonSchema.js');
      process.stdout.write(configJsonSchemaText());
    });
  registerConfigReload(config);
}
