// `NAME --version` (and `-V`, `-v` where that is the program's version flag) for
// the programs known to print their version before they read anything of the
// project or run anything (R-SH-11). A program outside the table is not judged
// by this model: `* --version` of any name once allowed a launcher that reads
// project files first — rustup's cargo proxy runs the toolchain a
// rust-toolchain.toml `path` names, Maven puts .mvn/jvm.config on java's
// command line, yarn runs the file .yarnrc.yml's yarnPath names. Launchers in
// the table (version-manager shims) are allow only where none of the files
// they read exists: the edge looks in the directory the command runs in and
// every directory above it up to the agent's cwd.
import type { ShellWord } from '../shellCommand.js';
import type { ProgramVerdict } from './programVerdict.js';

export interface VersionProgram {
  /** The command's base name, or a pattern of names (`python3.12`). */
  name: string | RegExp;
  /** The words that print the version, alone after the name. */
  flags: readonly string[];
  /** Why the form reads nothing of the project and runs nothing before it prints. */
  why: string;
  /**
   * Files a shim of this name reads before it picks the program it runs
   * (asdf, mise, pyenv, rbenv, nodenv, jenv, rustup): the form is allow only
   * where none of them exists. Relative to each directory looked in.
   */
  launcherFiles?: readonly string[];
}

/** The files every version-manager shim reads (asdf and mise: any tool; mise's can run a script as it loads). */
const SHIM_FILES = [
  '.tool-versions', '.mise.toml', 'mise.toml', '.mise.local.toml', 'mise.local.toml', '.mise', 'mise', '.config/mise.toml', '.config/mise', '.rtx.toml',
];

const shim = (...own: string[]): readonly string[] => [...SHIM_FILES, ...own];

/**
 * The programs whose version form is allowed, each with the reason it reads
 * nothing first. Checked on this machine with `strace -f -e trace=openat,execve`
 * in a repository whose config runs a program: none of them opened a project file.
 */
export const VERSION_PROGRAMS: readonly VersionProgram[] = [
  { name: 'git', flags: ['--version'], why: 'git answers --version before it looks for a repository: it reads only /etc/gitconfig and ~/.gitconfig, runs no alias, hook or fsmonitor' },
  { name: 'curl', flags: ['--version', '-V'], why: 'curl prints its version and features before it reads .curlrc or contacts anything' },
  { name: 'wget', flags: ['--version', '-V'], why: 'wget prints its version before it reads .wgetrc or contacts anything' },
  { name: 'ssh', flags: ['-V'], why: 'ssh -V prints the OpenSSH version before it reads ~/.ssh/config or a key' },
  { name: 'rsync', flags: ['--version', '-V'], why: 'rsync prints its version while it parses its options' },
  { name: 'tmux', flags: ['-V'], why: 'tmux -V prints its version without starting or reaching a server' },
  { name: 'sudo', flags: ['-V', '--version'], why: 'sudo -V prints versions and runs no command' },
  { name: 'make', flags: ['--version', '-v'], why: 'make prints its version before it reads a makefile' },
  { name: /^(gcc|g\+\+|cc|c\+\+|cpp)(-[0-9]+)?$/, flags: ['--version'], why: 'the compiler driver prints its version and compiles nothing' },
  { name: /^clang(\+\+)?(-[0-9]+)?$/, flags: ['--version'], why: 'the compiler driver prints its version and compiles nothing' },
  { name: 'jq', flags: ['--version'], why: 'jq prints its version before it reads a program, a module or ~/.jq' },
  { name: 'perl', flags: ['--version', '-v'], why: 'perl -v prints its version while it parses its switches, before any module loads (perl -V loads Config.pm from @INC and is not here)' },
  { name: 'docker', flags: ['--version', '-v'], why: 'the docker client prints its own version without reaching the daemon or a credential helper' },
  { name: 'sqlite3', flags: ['--version', '-version'], why: 'sqlite3 prints its version before it opens a database or reads ~/.sqliterc' },
  { name: 'psql', flags: ['--version', '-V'], why: 'psql prints its version before it reads ~/.psqlrc or connects' },
  { name: 'strace', flags: ['-V', '--version'], why: 'strace prints its version and traces nothing' },
  { name: 'bwrap', flags: ['--version'], why: 'bwrap prints its version and creates no sandbox' },
  { name: 'tar', flags: ['--version'], why: 'GNU tar prints its version before it reads an archive or TAR_OPTIONS files' },
  { name: /^(gzip|xz|zstd|bzip2)$/, flags: ['--version', '-V'], why: 'the compressor prints its version and reads no file' },
  { name: /^(gawk|awk)$/, flags: ['--version'], why: 'gawk prints its version before it reads a program' },
  { name: /^(less|nano)$/, flags: ['--version', '-V'], why: 'prints its version before it reads a file or its startup file' },
  // Version-manager shims read which version to run from the project: allowed only where no such file exists.
  { name: /^(node|nodejs)$/, flags: ['--version', '-v'], why: 'node prints its version before NODE_OPTIONS --require or any script loads', launcherFiles: shim('.node-version', '.nvmrc') },
  { name: /^(npm|npx)$/, flags: ['--version', '-v'], why: "npm prints its version before it runs a script; a project .npmrc sets no program for --version", launcherFiles: shim('.node-version', '.nvmrc') },
  { name: /^python[0-9.]*$/, flags: ['--version', '-V'], why: 'python prints its version while it parses its options, before site or PYTHONSTARTUP', launcherFiles: shim('.python-version') },
  { name: /^pip[0-9.]*$/, flags: ['--version', '-V'], why: 'the pip script imports pip from the interpreter, not the cwd, and prints its version', launcherFiles: shim('.python-version') },
  { name: /^(ruby|gem)$/, flags: ['--version', '-v'], why: 'ruby prints its version while it parses its options, before RUBYOPT libraries or a script', launcherFiles: shim('.ruby-version') },
  { name: 'java', flags: ['--version', '-version'], why: 'the java launcher prints the VM version and loads no class of the project', launcherFiles: shim('.java-version') },
  { name: /^(cargo|rustc|rustup)$/, flags: ['--version', '-V'], why: 'rustup\'s proxies pick the toolchain from rust-toolchain files, whose path may name a project folder', launcherFiles: shim('rust-toolchain', 'rust-toolchain.toml') },
];

/**
 * Programs that are not in the table because they read project files before
 * they print a version, for `policy explain` and the tests.
 */
export const VERSION_REFUSED: readonly { name: string; why: string }[] = [
  { name: 'mvn', why: 'Maven puts .mvn/jvm.config on the java command line (a -javaagent runs a project jar) and runs java from JAVA_HOME' },
  { name: 'gradle', why: 'gradle starts a JVM with org.gradle.jvmargs from the project\'s gradle.properties' },
  { name: 'yarn', why: 'yarn runs the JavaScript file that .yarnrc.yml\'s yarnPath (or .yarnrc\'s yarn-path) names' },
  { name: 'pnpm', why: 'pnpm may switch to the version that package.json\'s packageManager names before it prints one' },
  { name: 'go', why: 'go switches to the toolchain that go.mod names (GOTOOLCHAIN) before it prints a version' },
  { name: 'tsc', why: 'tsc is a project\'s own node_modules/.bin script wherever PATH leads there' },
];

/** The words that ask a program for its version. */
const VERSION_FLAGS: readonly string[] = ['--version', '-V', '-v', '-version'];

/** The table's entry for a command name. */
export function versionProgram(name: string): VersionProgram | undefined {
  return VERSION_PROGRAMS.find((p) => (typeof p.name === 'string' ? p.name === name : p.name.test(name)));
}

/** Kept for the other models: programs whose -V is their version flag. */
export const DASH_V_VERSION: readonly RegExp[] = VERSION_PROGRAMS.filter((p) => p.flags.includes('-V')).map((p) =>
  typeof p.name === 'string' ? new RegExp(`^${p.name.replace(/[+]/g, '\\+')}$`) : p.name,
);

/** The verdict for `NAME --version` (or the program's own version flag), or undefined when the words are not that form. */
export function judgeVersion(words: readonly ShellWord[]): ProgramVerdict | undefined {
  const [name, flag, ...more] = words;
  if (name === undefined || flag === undefined || more.length > 0) return undefined;
  if (!name.static || name.tilde === true || name.text.includes('/') || name.text === '' || !flag.static) return undefined;
  const program = versionProgram(name.text);
  if (program === undefined) {
    if (!VERSION_FLAGS.includes(flag.text)) return undefined;
    const known = VERSION_REFUSED.find((p) => p.name === name.text);
    const why = known?.why ?? `${name.text} is not a program whose ${flag.text} is known to read nothing of the project first (it may be a launcher or a project's own script)`;
    return { model: 'version', refused: why, reads: [], writes: [], trees: [] };
  }
  if (!program.flags.includes(flag.text)) return undefined;
  const verdict: ProgramVerdict = { model: 'version', reads: [], writes: [], trees: [] };
  if (program.launcherFiles !== undefined) verdict.launcher = { files: program.launcherFiles, why: `a version manager's shim of ${name.text} picks the program it runs from this file` };
  return verdict;
}
