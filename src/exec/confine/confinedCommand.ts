// One confined command from start to exit code (R-SH-14): what `assent
// confine` and the entry an agent's rewritten command runs (src/bin/assent-confine.ts) both do.
// It builds the sandbox for the cwd, refuses when the decided profile no
// longer holds, runs the command in it and names the gate files it created.
import { AssentError } from '../../core/base/errors.js';
import { buildSandboxProfile, createdGateFiles, type SandboxProfile, type SandboxProfileOptions } from './sandboxProfile.js';
import { locateSandbox, runConfined, sandboxStatus, type ConfinedStdio } from './sandboxRun.js';

/** The shell's convention for "found but cannot be executed": nothing of the command ran. */
export const CANNOT_RUN = 126;

export interface ConfinedCommandOptions extends Omit<SandboxProfileOptions, 'env'> {
  /** The command line, run with `bash -c` inside the sandbox. */
  command: string;
  /** Where bwrap and bash are trusted to be (default: the system's directories); for tests. */
  trustedDirs?: readonly string[];
  /** The sandbox profile digest the decision was made for; another layout refuses. */
  profile?: string;
  /** The caller's environment: the sandbox gets it filtered, and bwrap is looked for on its PATH. */
  env: Readonly<Record<string, string | undefined>>;
  /** The runner's own lines (the command's output is its own, through `stdio`). */
  say: (text: string) => void;
  stdio?: ConfinedStdio;
}

/**
 * Runs `options.command` confined and resolves to its exit code, or to 126
 * with a line through `say` when nothing of it ran. The decision's digest is
 * the layout's (`layoutDigest`, the profile without the caller's environment:
 * the daemon does not see the agent's), so a variable the agent has only adds
 * what the run hides, never what the decision named.
 *
 * The sandbox is not proven before the run: that costs a `bwrap --version`
 * and a trial sandbox on every command. It need not be, since bwrap builds
 * every namespace and mount before it starts the command and exits non-zero
 * when it cannot (too old for `--disable-userns`, user namespaces refused), so
 * a sandbox that does not work runs nothing. A non-zero exit is then checked
 * with {@link sandboxStatus}: when no sandbox works here, the run is 126 and
 * says why.
 */
export async function runConfinedCommand(options: ConfinedCommandOptions): Promise<number> {
  const { command, profile: decided, say, stdio = ['inherit', 'inherit', 'inherit'], trustedDirs, ...layout } = options;
  const located = locateSandbox(options.env, trustedDirs);
  if (!located.available) {
    say(`the sandbox is not available: ${located.reason}; nothing was run`);
    return CANNOT_RUN;
  }
  let profile: SandboxProfile;
  try {
    profile = buildSandboxProfile(layout);
  } catch (error) {
    if (!(error instanceof AssentError)) throw error;
    say(`${error.message}; nothing was run`);
    return CANNOT_RUN;
  }
  if (decided !== undefined && decided !== profile.layoutDigest) {
    say(
      `the sandbox profile was decided as ${decided}, but ${profile.root} now gives ${profile.layoutDigest}: the project's layout changed since the decision ` +
        '(a gate file, an .env file, a socket or the environment appeared or went away); nothing was run — run the command again so it is decided anew',
    );
    return CANNOT_RUN;
  }
  let code: number;
  try {
    code = await runConfined(profile, command, stdio, located);
  } catch (error) {
    if (!(error instanceof AssentError)) throw error;
    say(`${error.message}; nothing was run`);
    return CANNOT_RUN;
  }
  if (code !== 0) {
    const status = sandboxStatus({ env: options.env, ...(trustedDirs === undefined ? {} : { trustedDirs }) });
    if (!status.available) {
      say(`the sandbox did not start: ${status.reason}; nothing was run`);
      return CANNOT_RUN;
    }
  }
  const created = createdGateFiles(profile);
  if (created.length > 0) {
    say(`the command created files that make programs run, where no sandbox mount could hold them: ${created.join(', ')}; review them before opening the project in an editor or running git there`);
  }
  return code;
}
