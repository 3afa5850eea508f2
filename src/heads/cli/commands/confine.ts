// `assent confine --command TEXT [--profile DIGEST]`: a command run in the
// sandbox of a confined decision (R-SH-14). The agent's rewritten command runs
// the same thing through its own small entry (src/bin/assent-confine.ts), which
// starts without the CLI; both call {@link runConfine}.
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { CANNOT_RUN, runConfinedCommand } from '../../../exec/confine/confinedCommand.js';
import { resolveStatePaths, type StatePaths } from '../../../state/statePaths.js';
import { repositoryLocation } from '../../../shell/gitRepository.js';
import { ExitWith } from '../output.js';

export interface ConfineOptions {
  command: string;
  profile?: string;
}

function say(text: string): void {
  process.stderr.write(`assent confine: ${text}\n`);
}

/** Runs the command confined from this process's cwd and environment; resolves to the exit code to leave with. */
export async function runConfine(options: ConfineOptions): Promise<number> {
  let paths: StatePaths;
  try {
    paths = resolveStatePaths();
  } catch (error) {
    if (!(error instanceof AssentError)) throw error;
    say(`${error.message}; nothing was run`);
    return CANNOT_RUN;
  }
  return runConfinedCommand({
    command: options.command,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    cwd: process.cwd(),
    home: homedir(),
    assentHome: paths.home,
    assentSocket: paths.socket,
    env: process.env,
    locateRepository: repositoryLocation,
    say,
  });
}

/**
 * The entry's form, `assent-confine.js --profile DIGEST --command TEXT`
 * (what the daemon rewrites a confined command into), parsed without the
 * CLI. Arguments it does not know refuse, as commander's would.
 */
export function runConfineArgv(argv: readonly string[]): Promise<number> {
  let values: { command?: string | undefined; profile?: string | undefined };
  try {
    ({ values } = parseArgs({ args: [...argv], options: { command: { type: 'string' }, profile: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    say(`${(error as Error).message}; usage: assent-confine.js [--profile DIGEST] --command TEXT; nothing was run`);
    return Promise.resolve(CANNOT_RUN);
  }
  if (values.command === undefined) {
    say('--command TEXT is missing; usage: assent-confine.js [--profile DIGEST] --command TEXT; nothing was run');
    return Promise.resolve(CANNOT_RUN);
  }
  return runConfine({ command: values.command, ...(values.profile === undefined ? {} : { profile: values.profile }) });
}

export function registerConfineCommand(program: Command): void {
  program
    .command('confine')
    .description('Run a command in the sandbox of a confined decision (R-SH-14): the project writable, its gate files, credentials, network and sockets out of reach')
    .requiredOption('--command <text>', 'the command line, run with bash -c inside the sandbox')
    .option('--profile <digest>', 'the sandbox profile digest the decision was made for; a different one refuses with exit 126')
    .action(async (options: ConfineOptions) => {
      throw new ExitWith(await runConfine(options));
    });
}
