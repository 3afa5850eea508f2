// The sandbox a confined command runs in (R-SH-14): the bubblewrap arguments,
// the filtered environment and the digest a decision names, built from the
// project's layout on disk. Running it is sandboxRun.ts's job.
//
// Gate files that do not exist yet. bwrap can only hold a path read-only by
// mounting something on it, and a mount needs a mount point: for a path inside
// the writable root that does not exist, bwrap creates it (an empty file or
// directory) in the person's repository, through the writable bind. No mount
// trick avoids that — a name in a writable directory can only be held by a
// mount on that very name — and the alternatives are worse: a tmpfs over the
// root with its existing entries bound back loses every new top-level file the
// command writes (cargo's target/, make's build/); Landlock grants by
// hierarchy and cannot refuse one name in a writable directory. So the profile
// lists these mount points (`placeholders`): the first missing component of
// each gate path at the root, at the cwd and for core.hooksPath, held by an
// empty tmpfs of mode 0555 (directories) or an empty read-only file (files). They
// exist on the host only while the sandbox runs: the runner's guardian, a
// process of its own session, removes them when the sandbox ends, also when
// the runner itself is killed with SIGKILL (sandboxRun.ts).
//
// The root's own entries are mount points, so the command cannot rename them
// away and put a gate file in their place; nested gate items are protected the
// same way by binding each directory between the root and them onto itself.
// What no mount can stop is a gate file created in a directory that has none
// (`newdir/.vscode/tasks.json`, `*.code-workspace`): {@link createdGateFiles}
// finds those after the run so the caller can say so.
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import picomatch from 'picomatch/posix.js';
import { AssentError } from '../../core/base/errors.js';
import { CREDENTIALS, GATE_FILE_GLOBS } from '../../core/policy/agentPolicyConfig.js';

/** The first file descriptor of the empty inputs `--ro-bind-data` reads; the runner opens one per blank file, upwards from here. */
export const DATA_FD_BASE = 10;
/** Entries the walk of the root looks at (node_modules aside) before it refuses to guess. */
export const MAX_WALK_ENTRIES = 100_000;
/** Blank files (each an open descriptor while bwrap starts) before the profile refuses. */
const MAX_BLANK_FILES = 512;

/** The part of node:fs the profile reads; tests may pass another. Missing paths are undefined, never a throw. */
export interface SandboxFs {
  lstat(path: string): Stats | undefined;
  stat(path: string): Stats | undefined;
  realpath(path: string): string | undefined;
  /** Entry names of a directory; throws when it cannot be read. */
  readdir(path: string): nodeFs.Dirent[];
  readText(path: string): string | undefined;
}

function quietly<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

export const NODE_SANDBOX_FS: SandboxFs = {
  lstat: (path) => quietly(() => nodeFs.lstatSync(path, { throwIfNoEntry: false })),
  stat: (path) => quietly(() => nodeFs.statSync(path, { throwIfNoEntry: false })),
  realpath: (path) => quietly(() => nodeFs.realpathSync.native(path)),
  readdir: (path) => nodeFs.readdirSync(path, { withFileTypes: true }),
  readText: (path) => quietly(() => nodeFs.readFileSync(path, 'utf8')),
};

/** Where git puts the repository that holds the cwd (physical paths); all undefined outside any. */
export interface RepositoryLocation {
  /** The top of the work tree. */
  workTree?: string;
  gitDir?: string;
  commonDir?: string;
  /** The hooks directory git would use (core.hooksPath resolved, else the common dir's hooks). */
  hooksDir?: string;
  /** The config files git reads there and every file an include names, existing or not (R-SH-12): gate files too. */
  configFiles?: readonly string[];
}

export interface SandboxProfileOptions {
  cwd: string;
  home: string;
  /** assent's state directory (ASSENT_HOME, default ~/.assent): hidden. */
  assentHome: string;
  /** The daemon's socket when ASSENT_SOCKET puts it outside the state directory. */
  assentSocket?: string;
  /** The caller's environment; the sandbox gets it filtered. */
  env: Readonly<Record<string, string | undefined>>;
  /** git's discovery from the cwd (src/shell/gitRepository.ts, handed in by the head: exec does not import shell). */
  locateRepository: (cwd: string, home: string) => RepositoryLocation;
  fs?: SandboxFs;
  maxEntries?: number;
}

export interface SandboxProfile {
  /** The writable root: the top of the work tree holding the cwd, else the cwd. */
  root: string;
  cwd: string;
  /** bwrap's options, without the command. */
  args: readonly string[];
  /** The command's whole environment. */
  env: Readonly<Record<string, string>>;
  /** The caller's variables left out of `env`. */
  removedEnv: readonly string[];
  /** Existing gate files and directories inside the root, bound read-only. */
  readOnly: readonly string[];
  /** Gate paths that did not exist, held by an empty read-only placeholder. */
  blocked: readonly string[];
  /** The host paths bwrap creates as mount points for `blocked`; the runner removes them afterwards. */
  placeholders: readonly string[];
  /** Directories replaced by an empty tmpfs and files replaced by an empty one: credentials, sockets, state. */
  hidden: readonly string[];
  /** How many `--ro-bind-data` descriptors the runner provides, from {@link DATA_FD_BASE} up. */
  dataFds: number;
  /** sha256 hex of the canonical JSON of `args` and the names of `env`. */
  digest: string;
  /**
   * The digest of this layout's profile built without the caller's
   * environment (`env: {}`): what a decision names, since the daemon that
   * decides does not see the agent's environment.
   */
  layoutDigest: string;
}

/** The name rules of a glob list's entries that start with `**`: what a directory entry must be called to count. */
interface NameRules {
  dirs: ReadonlySet<string>;
  files: ReadonlySet<string>;
  patterns: readonly RegExp[];
}

/** `lefthook.{yml,yaml}` → both names. */
function expandBraces(text: string): string[] {
  const group = /\{([^{}]*)\}/.exec(text);
  if (group === null) return [text];
  const before = text.slice(0, group.index);
  const after = text.slice(group.index + group[0].length);
  return (group[1] as string).split(',').flatMap((alternative) => expandBraces(`${before}${alternative}${after}`));
}

const GLOB_CHARS = /[*?[\]!(){}]/;

/**
 * The entry names a glob list protects, from its entries that start with `**`. A glob with more segments
 * (`.vscode/tasks.json`, `.git/hooks/**`) protects its first segment as a
 * whole: a file inside a writable directory could be moved aside with its
 * directory, a mount on the directory itself cannot. `~/…` and `/proc/…`
 * entries are handled apart.
 */
function nameRules(globs: readonly string[]): NameRules {
  const dirs = new Set<string>();
  const files = new Set<string>();
  const patterns: RegExp[] = [];
  for (const glob of globs) {
    if (!glob.startsWith('**/')) continue;
    const [first = '', ...rest] = glob.slice(3).split('/');
    for (const name of expandBraces(first)) {
      if (GLOB_CHARS.test(name)) patterns.push(picomatch.makeRe(name, { dot: true }));
      else if (rest.length > 0) dirs.add(name);
      else files.add(name);
    }
  }
  return { dirs, files, patterns };
}

const GATE_NAMES = nameRules(GATE_FILE_GLOBS);
const SECRET_NAMES = nameRules(CREDENTIALS);
/** `~/.ssh/**` → a directory, `~/.netrc` → a file; the `/proc` entries are covered by the new PID namespace and its own /proc. */
const HOME_CREDENTIALS = CREDENTIALS.filter((glob) => glob.startsWith('~/')).map((glob) => glob.slice(2).replace(/\/\*\*$/, ''));

function matches(rules: NameRules, name: string): boolean {
  return rules.dirs.has(name) || rules.files.has(name) || rules.patterns.some((pattern) => pattern.test(name));
}

/** `path` is `dir` or beneath it. */
function isWithin(path: string, dir: string): boolean {
  return path === dir || dir === '/' || path.startsWith(`${dir}${sep}`);
}

function refuse(reason: string, message: string, details: Record<string, unknown> = {}): AssentError {
  return new AssentError('forbidden', message, { details: { reason, ...details } });
}

// ---------------------------------------------------------------- environment

/** Variables that change what a program runs or loads (R-SH-3, R-SH-7), and the caller's assent and socket addresses. */
const RUNS_WHAT = new Set([
  'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'IFS', 'CDPATH', 'GLOBIGNORE', 'SHELLOPTS', 'BASHOPTS', 'BASH_XTRACEFD',
  'NODE_OPTIONS', 'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PERL5LIB', 'PERL5OPT', 'PERLLIB', 'RUBYOPT', 'RUBYLIB',
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'LESSOPEN', 'LESSCLOSE',
  'SSH_AUTH_SOCK', 'SSH_AGENT_PID', 'GPG_AGENT_INFO', 'DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'DOCKER_HOST', 'DATABASE_URL',
]);
const RUNS_WHAT_PREFIXES = /^(LD_|DYLD_|BASH_FUNC_|GIT_|ASSENT_|NPM_CONFIG_)/i;
/** A name that says it holds a secret. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|_KEY$|^KEY$|_PAT$|_AUTH$|_DSN$|COOKIE/i;
const SECRET_PREFIXES = /^(AWS|AZURE|ANTHROPIC|OPENAI|GEMINI)_/i;
/** A URL with a password in it (`postgres://u:pw@host`), whatever its variable is called. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i;

function removedFromSandbox(name: string, value: string): boolean {
  if (RUNS_WHAT.has(name) || RUNS_WHAT_PREFIXES.test(name)) return true;
  return SECRET_NAME.test(name) || SECRET_PREFIXES.test(name) || URL_WITH_PASSWORD.test(value);
}

// ---------------------------------------------------------------- mounts

interface Mount {
  dest: string;
  /** bwrap's words; `blank` files get their descriptor number once the order is known. */
  words: string[] | 'blank';
}

/**
 * An empty directory the command cannot write: a tmpfs of mode 0555. Not
 * remounted read-only — that costs a mount operation each (about 0.2 ms; a
 * profile has dozens) — because it need not be: the tmpfs is the sandbox's
 * own memory, so even after a chmod whatever is written there never reaches
 * the host and is gone when the sandbox ends.
 */
function emptyDir(dir: string): string[] {
  return ['--perms', '0555', '--tmpfs', dir];
}

/** The number of components: ancestors sort before what is mounted beneath them. */
function depthOf(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

class MountPlan {
  private readonly mounts: Mount[] = [];
  private readonly dests = new Set<string>();
  readonly hidden: string[] = [];
  /** Directories whose contents the sandbox does not see: nothing beneath them needs a mount. */
  readonly covered: string[] = [];
  /** The writable root, bound again on top of whatever covers it (a project under /tmp). */
  exposed: string | undefined;

  add(dest: string, words: string[] | 'blank'): void {
    if (this.dests.has(dest)) return;
    this.dests.add(dest);
    this.mounts.push({ dest, words });
  }

  isCovered(path: string): boolean {
    if (this.exposed !== undefined && isWithin(path, this.exposed)) return false;
    return this.covered.some((dir) => isWithin(path, dir));
  }

  /** An empty tmpfs over a directory: writable for caches, {@link emptyDir} for what it hides. */
  hideDir(dir: string, writable: boolean): void {
    if (this.isCovered(dir)) return;
    this.add(dir, writable ? ['--tmpfs', dir] : emptyDir(dir));
    this.hidden.push(dir);
    this.covered.push(dir);
  }

  /** An empty read-only file over a file (or a socket). */
  blankFile(path: string): void {
    if (this.isCovered(path)) return;
    this.add(path, 'blank');
    this.hidden.push(path);
  }

  /** Stable by depth, so every mount lands after (on top of) the ones of its ancestors. */
  words(): { args: string[]; dataFds: number } {
    const ordered = [...this.mounts].sort((a, b) => depthOf(a.dest) - depthOf(b.dest));
    const args: string[] = [];
    let fd = DATA_FD_BASE;
    for (const mount of ordered) {
      if (mount.words === 'blank') args.push('--ro-bind-data', String(fd++), mount.dest);
      else args.push(...mount.words);
    }
    return { args, dataFds: fd - DATA_FD_BASE };
  }
}

// ---------------------------------------------------------------- the walk

export interface GateWalk {
  /** Gate files and directories (and bare-repository lookalikes), physical paths, sorted. */
  gates: string[];
  /** `.env` and `.env.*` files (their targets when symlinks). */
  secrets: string[];
}

/**
 * Every gate item and secret file beneath the root, node_modules aside (unless
 * the cwd is in one). A directory holding `HEAD` beside `config` or
 * `commondir` is a repository git may take (R-SH-9): held whole. Past
 * `maxEntries` it refuses rather than guess; a symlinked gate item refuses
 * too — a mount follows the link, so the link itself could be replaced.
 */
export function walkGateFiles(root: string, cwd: string, fs: SandboxFs = NODE_SANDBOX_FS, maxEntries = MAX_WALK_ENTRIES): GateWalk {
  const gates: string[] = [];
  const secrets: string[] = [];
  // A gate directory is held whole, but an .env inside one (.devcontainer/.env) must still be blanked: it is walked for secrets only.
  const stack: { dir: string; secretsOnly: boolean }[] = [{ dir: root, secretsOnly: false }];
  let seen = 0;
  while (stack.length > 0) {
    const { dir, secretsOnly } = stack.pop() as { dir: string; secretsOnly: boolean };
    let entries: nodeFs.Dirent[];
    try {
      entries = fs.readdir(dir);
    } catch (error) {
      throw refuse('unreadable', `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}), so the sandbox cannot know which gate files it holds; make it readable or run the command unconfined`, { path: dir });
    }
    seen += entries.length;
    if (seen > maxEntries) {
      throw new AssentError('limit_reached', `${root} holds more than ${maxEntries} files outside node_modules; the sandbox lists every gate file before it runs and does not guess past that; run the command unconfined (it is then asked)`, {
        details: { reason: 'too_many_files', root, limit: maxEntries },
      });
    }
    const names = new Set(entries.map((entry) => entry.name));
    if (!secretsOnly && dir !== root && names.has('HEAD') && (names.has('config') || names.has('commondir'))) {
      gates.push(dir);
      continue;
    }
    const below: { dir: string; secretsOnly: boolean }[] = [];
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (!secretsOnly && matches(GATE_NAMES, entry.name)) {
        if (entry.isSymbolicLink()) throw refuse('symlinked_gate', `${path} is a symbolic link; the sandbox cannot hold a link read-only (the command could replace it); replace it with what it points to, or run the command unconfined`, { path });
        gates.push(path);
        if (entry.isDirectory() && entry.name !== '.git') below.push({ dir: path, secretsOnly: true });
      } else if (matches(SECRET_NAMES, entry.name) && !entry.isDirectory()) {
        const target = entry.isSymbolicLink() ? fs.realpath(path) : path;
        if (target !== undefined && fs.stat(target)?.isFile() === true) secrets.push(target);
      } else if (entry.isDirectory() && !entry.isSymbolicLink() && (entry.name !== 'node_modules' || isWithin(cwd, path))) {
        below.push({ dir: path, secretsOnly });
      }
    }
    // Depth first in name order: the same layout always gives the same lists.
    stack.push(...below.sort((a, b) => (a.dir < b.dir ? 1 : a.dir > b.dir ? -1 : 0)));
  }
  return { gates: gates.sort(), secrets: secrets.sort() };
}

/** Gate items present now that the profile did not see: created by the command in a place no mount could hold. */
export function createdGateFiles(profile: SandboxProfile, fs: SandboxFs = NODE_SANDBOX_FS): string[] {
  const known = new Set([...profile.readOnly, ...profile.blocked]);
  let now: GateWalk;
  try {
    now = walkGateFiles(profile.root, profile.cwd, fs);
  } catch {
    return [];
  }
  return now.gates.filter((path) => !known.has(path));
}

// ---------------------------------------------------------------- the profile

/** Absolute, physical where it exists. */
function physical(fs: SandboxFs, path: string): string {
  const absolute = resolve(path);
  return fs.realpath(absolute) ?? absolute;
}

/** Unix sockets bound in this network namespace, from /proc/net/unix (path-bound ones only). */
function boundSockets(fs: SandboxFs): string[] {
  const text = fs.readText('/proc/net/unix') ?? '';
  const paths: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    const path = /^(?:\S+\s+){7}(\/.*)$/.exec(line)?.[1];
    if (path !== undefined) paths.push(path);
  }
  return [...new Set(paths)].sort();
}

/** Set in every sandbox. Read-only .git: git status must not try the index lock it takes to refresh stat data. */
const SANDBOX_VARIABLES = { ASSENT_CONFINED: '1', GIT_OPTIONAL_LOCKS: '0', TMPDIR: '/tmp' } as const;

/**
 * sha256 hex of the canonical JSON (RFC 8785) of `{ args, env }`. For this
 * shape — two keys, already in sorted order, each an array of strings —
 * `JSON.stringify` writes exactly those bytes (RFC 8785 serializes strings as
 * ECMAScript does), without the general canonicalizer, which costs a
 * confined run's start-up about 1 ms cold. Paths and variable names read from
 * the system hold no lone surrogates, the one input the two would differ on.
 */
function profileDigest(args: readonly string[], envNames: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify({ args, env: envNames })).digest('hex');
}

/**
 * The sandbox for a command run from `options.cwd` (R-SH-14). Pure of side
 * effects: it reads the layout and returns what to mount; nothing is created.
 * Throws `forbidden` when the writable root would be `/`, the home directory
 * or a directory holding it, lies in a credential location or assent's state,
 * or the cwd is in a bare repository; `limit_reached` past the walk's bound.
 */
export function buildSandboxProfile(options: SandboxProfileOptions): SandboxProfile {
  const fs = options.fs ?? NODE_SANDBOX_FS;
  const cwd = physical(fs, options.cwd);
  const home = physical(fs, options.home);
  const assentHome = physical(fs, options.assentHome);
  const repository = options.locateRepository(cwd, options.home);
  if (repository.gitDir !== undefined && repository.workTree === undefined) {
    throw refuse('bare_repository', `${cwd} is inside the bare repository ${repository.gitDir}; its config and hooks would be writable in the sandbox; run the command unconfined`, { cwd });
  }
  const root = repository.workTree === undefined ? cwd : physical(fs, repository.workTree);
  if (root === '/' || isWithin(home, root)) {
    throw refuse('root_too_wide', `the sandbox would make ${root} writable, which ${root === home ? 'is' : 'holds'} the home directory ${home}; run the command from a project directory (a git work tree or a folder below the home)`, { root, home });
  }
  const homeCredentials = HOME_CREDENTIALS.map((rest) => join(home, rest));
  const secretHome = [...homeCredentials, assentHome].find((dir) => isWithin(root, dir));
  if (secretHome !== undefined) {
    throw refuse('root_in_secret', `the sandbox would make ${root} writable, which is inside ${secretHome} (a credential location or assent's state); run the command from a project directory`, { root });
  }

  const plan = new MountPlan();
  // System: the whole file system read-only, fresh /dev and /proc, private /tmp.
  plan.add('/', ['--ro-bind', '/', '/']);
  plan.add('/dev', ['--dev', '/dev']);
  plan.add('/proc', ['--proc', '/proc']);
  plan.hideDir('/tmp', true);
  if (fs.lstat('/var/tmp')?.isDirectory() === true) plan.hideDir('/var/tmp', true);
  plan.covered.push('/dev', '/proc');
  // Where sockets live: a read-only bind does not stop connect() (the test shows it), so each is hidden.
  const runtimeDir = options.env['XDG_RUNTIME_DIR'];
  /** Whether the caller's environment added a mount (a runtime directory not under /run): the layout's own profile then differs in more than the variables. */
  let envMounted = false;
  for (const dir of ['/run', '/var/run', runtimeDir]) {
    if (dir === undefined || !isAbsolute(dir) || fs.lstat(dir)?.isDirectory() !== true) continue;
    const hiddenBefore = plan.hidden.length;
    plan.hideDir(physical(fs, dir), false);
    if (dir === runtimeDir && plan.hidden.length !== hiddenBefore) envMounted = true;
  }
  if (fs.stat(assentHome)?.isDirectory() === true) plan.hideDir(assentHome, false);
  // Credential locations of the home (R-POL-8): an empty directory or file in their place.
  for (const path of homeCredentials) {
    if (fs.lstat(path) === undefined) continue;
    const target = physical(fs, path);
    const stats = fs.stat(target);
    if (stats?.isDirectory() === true) plan.hideDir(target, false);
    else if (stats !== undefined) plan.blankFile(target);
  }
  // npm and the caches of other tools write beneath the home: an empty private one each.
  const env: Record<string, string> = {};
  for (const [dir, variable, fallback] of [['.npm', 'npm_config_cache', '/tmp/.npm'], ['.cache', 'XDG_CACHE_HOME', '/tmp/.cache']] as const) {
    const path = join(home, dir);
    if (fs.stat(path)?.isDirectory() === true) plan.hideDir(physical(fs, path), true);
    else env[variable] = fallback;
  }

  // The writable root, then what inside it stays read-only.
  plan.add(root, ['--bind', root, root]);
  plan.exposed = root;
  const walk = walkGateFiles(root, cwd, fs, options.maxEntries);
  const readOnly = new Set<string>();
  const pins = new Set<string>();
  const hold = (path: string): void => {
    readOnly.add(path);
    plan.add(path, ['--ro-bind', path, path]);
    // Each directory between the root and a held item is a mount point too, so none can be renamed away.
    for (let dir = dirname(path); dir !== root && isWithin(dir, root); dir = dirname(dir)) pins.add(dir);
  };
  for (const path of walk.gates) hold(path);
  for (const dir of [repository.gitDir, repository.commonDir]) {
    if (dir !== undefined && isWithin(dir, root) && dir !== root && ![...readOnly].some((held) => isWithin(dir, held))) hold(dir);
  }

  const blocked: string[] = [];
  const placeholders: string[] = [];
  /** Holds a path that does not exist: the first missing component gets an empty read-only mount. */
  const block = (path: string, isDir: boolean): void => {
    if ([...readOnly].some((held) => isWithin(path, held))) return;
    let first = path;
    while (dirname(first) !== first && fs.lstat(dirname(first)) === undefined) first = dirname(first);
    if (!isWithin(first, root) || first === root || placeholders.includes(first)) return;
    blocked.push(path);
    placeholders.push(first);
    if (first === path && !isDir) plan.blankFile(first);
    else plan.add(first, emptyDir(first));
    for (let dir = dirname(first); dir !== root && isWithin(dir, root); dir = dirname(dir)) pins.add(dir);
  };
  const hooksDir = repository.hooksDir === undefined ? undefined : resolve(repository.hooksDir);
  if (hooksDir !== undefined && isWithin(hooksDir, root) && hooksDir !== root) {
    const target = fs.lstat(hooksDir) === undefined ? undefined : physical(fs, hooksDir);
    if (target === undefined) block(hooksDir, true);
    else if (isWithin(target, root) && target !== root && ![...readOnly].some((held) => isWithin(target, held))) hold(target);
  }
  // The files git's configuration comes from, and those an include names, inside the root (R-SH-12).
  for (const file of repository.configFiles ?? []) {
    const path = resolve(file);
    if (!isWithin(path, root) || path === root || [...readOnly].some((held) => isWithin(path, held))) continue;
    const stats = fs.lstat(path);
    if (stats === undefined) block(path, false);
    else if (stats.isSymbolicLink()) throw refuse('symlinked_gate', `${path} (a file git's configuration includes) is a symbolic link; the sandbox cannot hold a link read-only; replace it with what it points to, or run the command unconfined`, { path });
    else hold(path);
  }
  for (const base of cwd === root || !isWithin(cwd, root) ? [root] : [root, cwd]) {
    for (const name of [...GATE_NAMES.dirs].sort()) if (fs.lstat(join(base, name)) === undefined) block(join(base, name), true);
    for (const name of [...GATE_NAMES.files].sort()) if (fs.lstat(join(base, name)) === undefined) block(join(base, name), false);
  }
  if (cwd !== root && isWithin(cwd, root)) pins.add(cwd);
  for (const dir of [...pins].sort()) plan.add(dir, ['--bind', dir, dir]);
  for (const path of walk.secrets) plan.blankFile(path);

  // Sockets outside the tree that are not under a hidden directory: an empty file in their place.
  for (const path of [...boundSockets(fs), ...(options.assentSocket === undefined ? [] : [resolve(options.assentSocket)])]) {
    if (fs.lstat(path)?.isSocket() !== true) continue;
    const target = join(physical(fs, dirname(path)), basename(path));
    if (!isWithin(target, root)) plan.blankFile(target);
  }
  if (plan.hidden.length > MAX_BLANK_FILES) {
    throw new AssentError('limit_reached', `the sandbox would hide ${plan.hidden.length} paths (more than ${MAX_BLANK_FILES}); run the command unconfined`, { details: { reason: 'too_many_hidden' } });
  }

  // The variables the profile sets itself, whatever the caller's environment holds.
  const ownNames = [...new Set([...Object.keys(env), ...Object.keys(SANDBOX_VARIABLES)])].sort();
  const removedEnv: string[] = [];
  for (const [name, value] of Object.entries(options.env)) {
    if (value === undefined) continue;
    if (removedFromSandbox(name, value)) removedEnv.push(name);
    else if (!(name in env)) env[name] = value;
  }
  Object.assign(env, SANDBOX_VARIABLES);

  const mounts = plan.words();
  const args = [
    '--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--new-session', '--die-with-parent',
    ...mounts.args,
    '--chdir', cwd,
  ];
  const envNames = Object.keys(env).sort();
  const digest = profileDigest(args, envNames);
  // Without the caller's environment only the variables differ, unless it added a mount: then the layout's profile is built as the daemon builds it.
  const layoutDigest = envMounted ? buildSandboxProfile({ ...options, env: {} }).digest : profileDigest(args, ownNames);
  return {
    root,
    cwd,
    args,
    env: Object.fromEntries(envNames.map((name) => [name, env[name] as string])),
    removedEnv: removedEnv.sort(),
    readOnly: [...readOnly].sort(),
    blocked: blocked.sort(),
    placeholders: placeholders.sort(),
    hidden: [...plan.hidden].sort(),
    dataFds: mounts.dataFds,
    digest,
    layoutDigest,
  };
}
