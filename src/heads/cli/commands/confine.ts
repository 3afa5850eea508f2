// `assent confine --command TEXT [--profile DIGEST]`: what the agent's hook
// rewrites a confined command into (R-SH-14). It builds the sandbox for the
// cwd, refuses when the sandbox or the decided profile does not hold, and
// otherwise runs the command inside it and exits with the command's code.
import { homedir } from 'node:os';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { buildSandboxProfile, createdGateFiles, type SandboxProfile } from '../../../exec/confine/sandboxProfile.js';
import { runConfined, sandboxStatus } from '../../../exec/confine/sandboxRun.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { repositoryLocation } from '../../../shell/gitRepository.js';
import { ExitWith } from '../output.js';

interface ConfineOptions {
  command: string;
  profile?: string;
}

/** The shell's convention for "found but cannot be executed": nothing of the command ran. */
const CANNOT_RUN = 126;

function say(text: string): void {
  process.stderr.write(`assent confine: ${text}\n`);
}

/**
 * The sandbox for this cwd. `env` is the caller's environment, which the
 * sandbox gets filtered; the decision's digest is the one built without it
 * (the daemon does not see the agent's environment), so a variable the agent
 * has only adds what the run hides, never what the decision named.
 */
function buildProfile(env: NodeJS.ProcessEnv): SandboxProfile {
  const paths = resolveStatePaths();
  return buildSandboxProfile({ cwd: process.cwd(), home: homedir(), assentHome: paths.home, assentSocket: paths.socket, env, locateRepository: repositoryLocation });
}

async function runConfine(options: ConfineOptions): Promise<number> {
  const status = sandboxStatus();
  if (!status.available) {
    say(`the sandbox is not available: ${status.reason}; nothing was run`);
    return CANNOT_RUN;
  }
  let profile: SandboxProfile;
  let decided: string;
  try {
    profile = buildProfile(process.env);
    decided = buildProfile({}).digest;
  } catch (error) {
    if (!(error instanceof AssentError)) throw error;
    say(`${error.message}; nothing was run`);
    return CANNOT_RUN;
  }
  if (options.profile !== undefined && options.profile !== decided) {
    say(
      `the sandbox profile was decided as ${options.profile}, but ${profile.root} now gives ${decided}: the project's layout changed since the decision ` +
        '(a gate file, an .env file, a socket or the environment appeared or went away); nothing was run — run the command again so it is decided anew',
    );
    return CANNOT_RUN;
  }
  const code = await runConfined(profile, options.command, ['inherit', 'inherit', 'inherit'], status);
  const created = createdGateFiles(profile);
  if (created.length > 0) {
    say(`the command created files that make programs run, where no sandbox mount could hold them: ${created.join(', ')}; review them before opening the project in an editor or running git there`);
  }
  return code;
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
