// CLI entry: parses argv, runs one command, returns the exit code. Only this
// layer decides exit codes (STYLE.md). Commands are registered by one module
// per family under ./commands.
import { Command, CommanderError } from 'commander';
import { VERSION } from '../../version.js';
import { registerActionCommands } from './commands/action.js';
import { registerApprovalCommands } from './commands/approvals.js';
import { registerConfigCommands } from './commands/config.js';
import { registerDaemonCommands } from './commands/daemon.js';
import { registerMcpCommands } from './commands/mcp.js';
import { ExitWith, reportFailure } from './output.js';

export function buildProgram(): Command {
  const program = new Command('assent')
    .description('Put a person between an AI agent and the actions it wants to take.')
    .version(VERSION)
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerActionCommands(program);
  registerDaemonCommands(program);
  registerConfigCommands(program);
  registerApprovalCommands(program);
  registerMcpCommands(program);
  return program;
}

/** Rewrites the compatibility spelling `--action-exec-confirm P R` to `action confirm P R`. */
function rewriteAliases(argv: string[]): string[] {
  if (argv[0] === '--action-exec-confirm') return ['action', 'confirm', ...argv.slice(1)];
  return argv;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(rewriteAliases(argv), { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof ExitWith) return error.code;
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 64;
    return reportFailure(error, { json: argv.includes('--json') });
  }
}
