// Which repository git would use from a directory, and which keys of its
// configuration make git run a command (R-SH-9): found on disk at decision time
// the way git's setup.c finds it, so a cloned project's embedded bare repository counts.
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { decode, discoverRepository, readGitFile, repositoryAt, statOf, type Discovery, type GitDirs } from './gitDiscovery.js';
import { isExecutionKey, parseGitConfig, type GitConfigEntry } from './gitConfig.js';
import { physicalPath } from './resolvePaths.js';

/** Config files larger than this are not read: the part is then not known (prompt). */
export const GIT_CONFIG_MAX_BYTES = 256 * 1024;
/** git's MAX_INCLUDE_DEPTH. */
const INCLUDE_DEPTH = 10;
/** A decision reads a handful of files per repository (and each submodule's); a config that includes more is not judged. */
const CONFIG_FILES_MAX = 200;

export interface GitExecutionKeys {
  /** The git directory git would use from `startDir` (physical); undefined when it would find none. */
  repository?: string;
  /** Its common directory, whose `config` counts (differs from `repository` in a linked worktree). */
  commonDir?: string;
  /**
   * Every key that makes git run a command, as `section[.subsection].key`
   * (section and key lower-cased), each once, in the order found: from the
   * repository's config and config.worktree, what they include, and the
   * config of each directory on the way up that looks like a repository
   * git does not take yet (see {@link gitExecutionKeys}).
   */
  keys: string[];
  /** Where each of `keys` was set, in the same order: `FILE:LINE`, or the variable of GIT_CONFIG_COUNT. */
  keySources?: string[];
  /**
   * Executable files (not `*.sample`) in the hooks directory git would use —
   * `core.hooksPath` as git resolves it (system, global, then the repository's
   * config; relative to the top of the work tree), else `$GIT_COMMON_DIR/hooks`
   * — and, for a command that recurses, each submodule's (R-SH-13).
   */
  hooks: string[];
  /** The hooks directory git would use. */
  hooksDir?: string;
  /** The top of the work tree (undefined for a bare repository). */
  workTree?: string;
  /** `core.worktree` as the repository's config sets it (R-SH-12): git's work tree is then elsewhere. */
  coreWorktree?: string;
  /** The config files read whose keys count, in order, for the preview. */
  configs: string[];
  /** The person's own config files read (system, global and what they include): their programs are trusted. */
  personConfigs?: string[];
  /** Every file an include or includeIf names, whether it exists or not: writing one changes what git reads. */
  includes?: string[];
  /** Why the configuration cannot be judged (unparseable, too large, unreadable, an invalid gitfile): then at least prompt. */
  unreadable?: string;
}

/**
 * The environment a git command runs with, as far as it moves where git finds
 * its configuration (R-SH-12): a prefix of the command line (`HOME=. git
 * status`). Relative values are relative to the directory git runs in.
 */
export interface GitEnvironment {
  HOME?: string;
  XDG_CONFIG_HOME?: string;
  GIT_CONFIG_GLOBAL?: string;
  GIT_CONFIG_SYSTEM?: string;
  GIT_CONFIG_NOSYSTEM?: string;
  GIT_DIR?: string;
  GIT_CONFIG_COUNT?: string;
  /** `GIT_CONFIG_KEY_<n>` and `GIT_CONFIG_VALUE_<n>`. */
  [name: `GIT_CONFIG_KEY_${number}` | `GIT_CONFIG_VALUE_${number}`]: string | undefined;
}

export interface GitExecutionOptions {
  /** The command looks into each submodule (status, diff): their configs and hooks count. */
  recurses?: boolean;
  env?: GitEnvironment;
}

/**
 * The repository git would use from `startDir` and the keys of its
 * configuration that execute. `home` is the person's home: their own
 * `~/.gitconfig`, `~/.config/git/config` and `/etc/gitconfig` may name
 * programs (git-lfs filters); any other file git reads may not.
 *
 * The walk is git's (setup_git_directory_gently_1): from the physical
 * directory up to `/`, at each D: `D/.git` as a gitfile (`gitdir: X`, X
 * relative to D) or a directory that is a repository, else D itself as a bare
 * repository. A repository is what git's is_git_directory accepts: a valid
 * HEAD, and `objects` and `refs` in its common directory (`commondir`). The
 * first one found is the one git uses; the walk stops there. `GIT_DIR` in
 * `options.env` replaces the walk, and the directory git runs in is then the
 * top of the work tree.
 *
 * Conservatively, a directory holding `HEAD` and `config` (or `commondir`)
 * that git does not accept — `vendor/lib/{HEAD,config,info/attributes}`
 * without `objects` or `refs` — also counts: its keys are reported and the
 * walk goes on, since one `mkdir objects refs` makes git take it. Nothing is
 * cached: each call reads a few small files.
 */
export function gitExecutionKeys(startDir: string, home: string, options: GitExecutionOptions = {}): GitExecutionKeys {
  const result: GitExecutionKeys = { keys: [], hooks: [], configs: [], personConfigs: [] };
  const env = options.env ?? {};
  const setup = gitSetup(startDir, home, env);
  if ('unreadable' in setup) return { ...result, unreadable: setup.unreadable };
  const found = setup.gitDir === undefined ? discoverRepository(startDir) : repositoryFromEnvironment(setup.gitDir, startDir);
  if (found.unreadable !== undefined) result.unreadable = found.unreadable;
  // The person's own files may name programs (git-lfs filters, a pager): only where hooks live is read from them.
  const trusted: GitExecutionKeys = { keys: [], hooks: [], configs: [] };
  const hooksPath: { value?: string } = {};
  const person = new ConfigReader(setup.home, trusted, hooksPath);
  const reader = new ConfigReader(setup.home, result, hooksPath);
  for (const file of setup.personFiles) (file.trusted ? person : reader).readConfig(file.path);
  result.personConfigs = trusted.configs;
  if (trusted.includes !== undefined) result.includes = [...trusted.includes, ...(result.includes ?? [])];
  if (trusted.unreadable !== undefined) result.unreadable ??= trusted.unreadable;
  for (const candidate of found.candidates) {
    reader.readRepository(candidate);
    readHooks(join(candidate.commonDir, 'hooks'), result.hooks);
  }
  if (found.repository !== undefined) {
    const repo = found.repository;
    result.repository = repo.gitDir;
    result.commonDir = repo.commonDir;
    if (repo.workTree !== undefined) result.workTree = repo.workTree;
    reader.readRepository(repo);
    if (reader.worktree !== undefined) result.coreWorktree = reader.worktree;
  }
  // GIT_CONFIG_COUNT's pairs come last: the command's own configuration, which the agent wrote.
  if (setup.commandConfig.length > 0) reader.readEntries(setup.commandConfig, 'GIT_CONFIG_COUNT');
  if (found.repository !== undefined) {
    const repo = found.repository;
    result.hooksDir = hooksPath.value === undefined ? join(repo.commonDir, 'hooks') : resolveHooksPath(hooksPath.value, setup.home, repo.workTree ?? repo.gitDir);
    readHooks(result.hooksDir, result.hooks);
    if (options.recurses === true) readSubmodules(join(repo.commonDir, 'modules'), reader, result, 0);
  }
  return result;
}

interface GitSetup {
  /** System and global files in git's order; `trusted` when it is one of the person's own. */
  personFiles: { path: string; trusted: boolean }[];
  /** The HOME git expands `~/` with. */
  home: string;
  gitDir?: string;
  commandConfig: { key: string; value: string }[];
}

/** Whether `value` is one of git's booleans (git_parse_maybe_bool), or undefined when it is none (git dies). */
function gitBoolean(value: string): boolean | undefined {
  if (/^(true|yes|on)$/i.test(value)) return true;
  if (value === '' || /^(false|no|off)$/i.test(value)) return false;
  if (/^-?[0-9]+$/.test(value)) return Number(value) !== 0;
  return undefined;
}

/** Where git looks for its system, global and command configuration and its repository under `env` (config.c, environment.c). */
function gitSetup(startDir: string, personHome: string, env: GitEnvironment): GitSetup | { unreadable: string } {
  const cwd = physicalPath(startDir) ?? startDir;
  const from = (value: string): string => (isAbsolute(value) ? value : join(cwd, value));
  for (const name of ['HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_DIR'] as const) {
    if (env[name] === '') return { unreadable: `${name} is empty, which this model does not follow` };
  }
  const home = env.HOME === undefined ? personHome : from(env.HOME);
  const own = new Set(['/etc/gitconfig', join(personHome, '.config', 'git', 'config'), join(personHome, '.gitconfig')].map((path) => physicalPath(path) ?? path));
  const files: string[] = [];
  const nosystem = env.GIT_CONFIG_NOSYSTEM === undefined ? false : gitBoolean(env.GIT_CONFIG_NOSYSTEM);
  if (nosystem === undefined) return { unreadable: `GIT_CONFIG_NOSYSTEM=${env.GIT_CONFIG_NOSYSTEM ?? ''} is not a boolean (git refuses it)` };
  if (!nosystem) files.push(env.GIT_CONFIG_SYSTEM === undefined ? '/etc/gitconfig' : from(env.GIT_CONFIG_SYSTEM));
  if (env.GIT_CONFIG_GLOBAL !== undefined) files.push(from(env.GIT_CONFIG_GLOBAL));
  else {
    const xdg = env.XDG_CONFIG_HOME === undefined || env.XDG_CONFIG_HOME === '' ? join(home, '.config') : from(env.XDG_CONFIG_HOME);
    files.push(join(xdg, 'git', 'config'), join(home, '.gitconfig'));
  }
  const personFiles = files.map((path) => ({ path, trusted: own.has(physicalPath(path) ?? path) }));
  const commandConfig: { key: string; value: string }[] = [];
  if (env.GIT_CONFIG_COUNT !== undefined && env.GIT_CONFIG_COUNT !== '') {
    // git_config_from_parameters: a count that is no number, or a pair missing, is fatal.
    if (!/^[0-9]+$/.test(env.GIT_CONFIG_COUNT) || Number(env.GIT_CONFIG_COUNT) > 1000) return { unreadable: `GIT_CONFIG_COUNT=${env.GIT_CONFIG_COUNT} is not a count git accepts` };
    for (let i = 0; i < Number(env.GIT_CONFIG_COUNT); i += 1) {
      const key = env[`GIT_CONFIG_KEY_${i}`];
      const value = env[`GIT_CONFIG_VALUE_${i}`];
      if (key === undefined || key === '' || value === undefined) return { unreadable: `GIT_CONFIG_COUNT=${env.GIT_CONFIG_COUNT} but GIT_CONFIG_KEY_${i} or GIT_CONFIG_VALUE_${i} is missing (git refuses it)` };
      const canonical = canonicalConfigKey(key);
      if (canonical === undefined) return { unreadable: `GIT_CONFIG_KEY_${i}=${key} is not a valid config key (git refuses it)` };
      commandConfig.push({ key: canonical, value });
    }
  }
  return { personFiles, home, ...(env.GIT_DIR === undefined ? {} : { gitDir: from(env.GIT_DIR) }), commandConfig };
}

/** git_config_parse_key: `section[.subsection].name`, section and name lower-cased and checked, the subsection kept. */
function canonicalConfigKey(key: string): string | undefined {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first <= 0 || last === key.length - 1) return undefined;
  const section = key.slice(0, first);
  const name = key.slice(last + 1);
  if (!/^[A-Za-z0-9-]+$/.test(section) || !/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) return undefined;
  if (key.slice(first, last + 1).includes('\n')) return undefined;
  const subsection = first === last ? '' : key.slice(first, last);
  return `${section.toLowerCase()}${subsection}.${name.toLowerCase()}`;
}

/** The repository `GIT_DIR` names: git takes it as it is, with the directory it runs in as the work tree's top. */
function repositoryFromEnvironment(gitDir: string, startDir: string): Discovery {
  let target = gitDir;
  const stats = statOf(gitDir, true);
  if (stats === 'error') return { candidates: [], unreadable: `GIT_DIR=${gitDir} cannot be read` };
  if (stats?.isFile() === true) {
    const file = readGitFile(gitDir);
    if ('unreadable' in file) return { candidates: [], unreadable: file.unreadable };
    target = file.gitDir;
  }
  const dirs = repositoryAt(target);
  if (dirs === undefined) return { candidates: [], unreadable: `GIT_DIR=${gitDir} is not a git repository` };
  return { repository: { ...dirs, workTree: physicalPath(startDir) ?? startDir }, candidates: [] };
}

/** git expands `~/` in core.hooksPath and takes a relative one from where hooks run: the work tree's top, or the git dir of a bare repository. */
function resolveHooksPath(value: string, home: string, base: string): string {
  if (value === '~' || value.startsWith('~/')) return join(home, value.slice(1));
  return isAbsolute(value) ? value : join(base, value);
}

/** How deep submodules nest under `.git/modules` before a decision stops looking (then the configuration is not known). */
const SUBMODULE_DEPTH = 4;
/** How many submodule git dirs one decision reads. */
const SUBMODULES_MAX = 64;

/**
 * Every submodule's own git dir beneath `.git/modules` (nested ones under
 * `modules/NAME/modules/…`): `git status` and `git diff` run in each, obeying
 * its config (core.fsmonitor, diff drivers) and its hooks.
 */
function readSubmodules(dir: string, reader: ConfigReader, result: GitExecutionKeys, depth: number): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const gitDir = join(dir, name);
    if (statOf(join(gitDir, 'HEAD'), false) === undefined) {
      // A submodule name may hold slashes: `modules/a/b`.
      if (depth < SUBMODULE_DEPTH && statOf(gitDir, false) !== undefined) readSubmodules(gitDir, reader, result, depth + 1);
      continue;
    }
    if (reader.submodules >= SUBMODULES_MAX) {
      result.unreadable ??= `more than ${SUBMODULES_MAX} submodules`;
      return;
    }
    reader.submodules += 1;
    reader.readRepository({ gitDir, commonDir: gitDir });
    readHooks(join(gitDir, 'hooks'), result.hooks);
    if (depth < SUBMODULE_DEPTH) readSubmodules(join(gitDir, 'modules'), reader, result, depth + 1);
    else result.unreadable ??= `submodules nest deeper than ${SUBMODULE_DEPTH}`;
  }
}

/**
 * The person's global ignore files, which ripgrep (like git) honours:
 * `~/.config/git/ignore` and every `core.excludesFile` that `~/.gitconfig` or
 * `~/.config/git/config` names.
 */
export function globalExcludesFiles(home: string): string[] {
  const files = [join(home, '.config', 'git', 'ignore')];
  for (const config of [join(home, '.gitconfig'), join(home, '.config', 'git', 'config')]) {
    let text: string;
    try {
      text = readFileSync(config, 'latin1').slice(0, GIT_CONFIG_MAX_BYTES);
    } catch {
      continue;
    }
    for (const entry of parseGitConfig(text).entries ?? []) {
      if (entry.key !== 'core.excludesfile' || entry.value === undefined) continue;
      const value = decode(entry.value);
      files.push(value === '~' || value.startsWith('~/') ? join(home, value.slice(1)) : isAbsolute(value) ? value : join(dirname(config), value));
    }
  }
  return files;
}

/**
 * The files and folders git would run or read configuration from on its own
 * for the repository that holds `dir` (R-SH-12, R-SH-13), beyond the gate
 * files every project has by name: the `core.hooksPath` folder wherever it
 * points, and every config file git reads or an include names. A write there
 * is code git runs later, in the person's own git commands too.
 */
export function gitGateFiles(dir: string, home: string): { files: string[]; hooksDir?: string } {
  const found = gitExecutionKeys(dir, home);
  if (found.repository === undefined) return { files: [] };
  const files = [...new Set([...found.configs, ...(found.personConfigs ?? []), ...(found.includes ?? [])])];
  return found.hooksDir === undefined ? { files } : { files, hooksDir: found.hooksDir };
}

/**
 * Where the repository that holds `dir` lives and what of it a sandbox must
 * hold read-only (R-SH-14): the work tree's top, the git dirs, the hooks
 * folder, and every config file git reads or an include names.
 */
export function repositoryLocation(dir: string, home: string): { workTree?: string; gitDir?: string; commonDir?: string; hooksDir?: string; configFiles: string[] } {
  const found = gitExecutionKeys(dir, home);
  const location: { workTree?: string; gitDir?: string; commonDir?: string; hooksDir?: string; configFiles: string[] } = { configFiles: [...found.configs, ...(found.includes ?? [])] };
  if (found.workTree !== undefined) location.workTree = found.workTree;
  if (found.repository !== undefined) location.gitDir = found.repository;
  if (found.commonDir !== undefined) location.commonDir = found.commonDir;
  if (found.hooksDir !== undefined) location.hooksDir = found.hooksDir;
  return location;
}

/** Reads the config files of repositories into one result, following includes. */
class ConfigReader {
  private readonly seen = new Set<string>();
  /** The last core.worktree read. */
  worktree: string | undefined;
  /** Submodule git dirs read so far. */
  submodules = 0;

  constructor(
    private readonly home: string,
    private readonly result: GitExecutionKeys,
    /** The last core.hooksPath read by any reader of one decision (git: the last value wins). */
    private readonly hooksPath: { value?: string },
  ) {}

  /** Variables that come from no file (GIT_CONFIG_COUNT's pairs): a relative include there is an error in git. */
  readEntries(entries: readonly { key: string; value: string }[], source: string): void {
    this.readParsed(entries.map((entry) => ({ ...entry, line: 0 })), source, 0, (value) => (isAbsolute(value) || value.startsWith('~') ? this.includeTarget(value, '/') : undefined));
  }

  readRepository(dirs: GitDirs): void {
    this.readFile(join(dirs.commonDir, 'config'), 0);
    // config.worktree counts when extensions.worktreeConfig is set; read whenever present.
    this.readFile(join(dirs.gitDir, 'config.worktree'), 0);
  }

  /** One config file and what it includes. */
  readConfig(path: string): void {
    this.readFile(path, 0);
  }

  private fail(reason: string): void {
    this.result.unreadable ??= reason;
  }

  private readFile(path: string, depth: number): void {
    if (this.seen.has(path)) return;
    this.seen.add(path);
    let text: string;
    try {
      const stats = statSync(path, { throwIfNoEntry: false });
      if (stats === undefined) return;
      if (!stats.isFile()) return this.fail(`${path} is not a file`);
      if (stats.size > GIT_CONFIG_MAX_BYTES) return this.fail(`${path} is larger than ${GIT_CONFIG_MAX_BYTES / 1024} KiB`);
      text = readFileSync(path, 'latin1');
    } catch (error) {
      // git ignores a missing config (and a missing include); anything else it cannot read, nor can this.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.fail(`${path} cannot be read (${code ?? 'error'})`);
      return;
    }
    if (this.result.configs.length >= CONFIG_FILES_MAX) return this.fail(`more than ${CONFIG_FILES_MAX} config files are included`);
    this.result.configs.push(path);
    if (text.length > GIT_CONFIG_MAX_BYTES) return this.fail(`${path} is larger than ${GIT_CONFIG_MAX_BYTES / 1024} KiB`);
    const parsed = parseGitConfig(text);
    if (parsed.error !== undefined) return this.fail(`${path}: ${parsed.error}`);
    const decoded = parsed.entries.map((entry) => ({ ...entry, value: entry.value === undefined ? undefined : decode(entry.value) }));
    this.readParsed(decoded, path, depth, (value) => this.includeTarget(value, path));
  }

  private readParsed(entries: readonly GitConfigEntry[], source: string, depth: number, target: (value: string) => string | undefined): void {
    for (const entry of entries) {
      if (entry.key === 'core.hookspath' && entry.value !== undefined) this.hooksPath.value = entry.value;
      if (entry.key === 'core.worktree' && entry.value !== undefined) this.worktree = entry.value;
      if (isExecutionKey(entry.key, entry.value) && !this.result.keys.includes(entry.key)) {
        this.result.keys.push(entry.key);
        (this.result.keySources ??= []).push(entry.line > 0 ? `${source}:${entry.line}` : source);
      }
      const include = entry.key === 'include.path' || (entry.key.startsWith('includeif.') && entry.key.endsWith('.path'));
      if (!include || entry.value === undefined || entry.value === '') continue;
      // Every includeIf is followed whatever its condition: conditions change with the cwd and branch.
      if (depth + 1 > INCLUDE_DEPTH) return this.fail(`${source}: includes nest deeper than ${INCLUDE_DEPTH}`);
      const file = target(entry.value);
      if (file === undefined) {
        this.fail(`${source}: the include path ${JSON.stringify(entry.value)} cannot be expanded`);
        continue;
      }
      if (!(this.result.includes ??= []).includes(file)) this.result.includes.push(file);
      this.readFile(file, depth + 1);
    }
  }

  /** git's include path rules: `~/` is the home, other relative paths are relative to the including file. */
  private includeTarget(value: string, from: string): string | undefined {
    if (value === '~' || value.startsWith('~/')) return join(this.home, value.slice(1));
    if (value.startsWith('~') || value.startsWith('%(prefix)/')) return undefined;
    return isAbsolute(value) ? value : join(dirname(from), value);
  }
}

/** Executable hooks (not `*.sample`) in `dir`, added to `into`. */
function readHooks(dir: string, into: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.sort()) {
    if (name.endsWith('.sample')) continue;
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) {
        accessSync(path, constants.X_OK);
        if (!into.includes(path)) into.push(path);
      }
    } catch {
      // Not executable or gone: git would not run it.
    }
  }
}
