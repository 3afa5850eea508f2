// CLI entry: parses argv, runs one command, returns the exit code. Only this
// layer decides exit codes (STYLE.md).
import { Command, CommanderError } from 'commander';
import { VERSION } from '../../version.js';

export async function main(argv: string[]): Promise<number> {
  const program = new Command('assent')
    .description('Put a person between an AI agent and the actions it wants to take.')
    .version(VERSION)
    .exitOverride()
    .showSuggestionAfterError(true);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 64;
    }
    throw error;
  }
}
