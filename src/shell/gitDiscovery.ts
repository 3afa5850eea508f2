// Which repository git would use from a directory (R-SH-9): the walk up from
// the directory the way git's setup.c makes it (a `.git` directory or file, or
// a bare repository), and the look-alikes git does not take yet, which count
// as repositories to guard. gitRepository.ts reads their configuration.
import { accessSync, constants, lstatSync, readFileSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { physicalPath } from './resolvePaths.js';

export interface GitDirs {
  gitDir: string;
  commonDir: string;
  /** The directory whose `.git` it was found through: the top of the work tree. */
  workTree?: string;
}

export interface Discovery {
  repository?: GitDirs;
  /** Directories that look like repositories but that git does not take (yet). */
  candidates: GitDirs[];
  unreadable?: string;
}

/** The file's stats, undefined when it does not exist; without throwing for the common case (a throw costs ~10 µs, and the walk stats three names per level). */
export function statOf(path: string, follow: boolean): Stats | undefined | 'error' {
  try {
    return follow ? statSync(path, { throwIfNoEntry: false }) : lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : 'error';
  }
}

/** git's discovery walk alone (see {@link gitExecutionKeys}): the repository git takes, and the lookalikes passed on the way. */
export function discoverRepository(startDir: string): Discovery {
  const candidates: GitDirs[] = [];
  const start = physicalPath(startDir);
  if (start === undefined) return { candidates, unreadable: `${startDir} does not resolve (a symlink loop)` };
  // git cannot start in a directory that does not exist; the nearest existing one is where it could.
  let dir = start;
  while (dir !== '/' && statOf(dir, true) === undefined) dir = dirname(dir);
  for (;;) {
    const dotGit = join(dir, '.git');
    const stats = statOf(dotGit, true);
    if (stats === 'error') return { candidates, unreadable: `${dotGit} cannot be read` };
    if (stats?.isFile() === true) {
      const target = readGitFile(dotGit);
      if ('unreadable' in target) return { candidates, unreadable: target.unreadable };
      const dirs = repositoryAt(target.gitDir);
      // git dies here ("not a git repository: X"): nothing of it runs, but the state is not one to allow in.
      if (dirs === undefined) return { candidates, unreadable: `${dotGit} points to ${target.gitDir}, which is not a git repository` };
      return { repository: { ...dirs, workTree: dir }, candidates };
    }
    if (stats?.isDirectory() === true) {
      const dirs = repositoryAt(dotGit);
      if (dirs !== undefined) return { repository: { ...dirs, workTree: dir }, candidates };
      const maybe = lookalikeAt(dotGit);
      if (maybe !== undefined) candidates.push(maybe);
    }
    if (statOf(join(dir, 'HEAD'), false) !== undefined) {
      const bare = repositoryAt(dir, true);
      if (bare !== undefined) return { repository: bare, candidates };
      const maybe = lookalikeAt(dir);
      if (maybe !== undefined) candidates.push(maybe);
    }
    if (dir === '/') return { candidates };
    dir = dirname(dir);
  }
}

/** read_gitfile_gently: `gitdir: X` (exactly one space), trailing CR/LF dropped, X relative to the file's directory. */
export function readGitFile(path: string): { gitDir: string } | { unreadable: string } {
  let text: string;
  try {
    if (statSync(path).size > 1024 * 1024) return { unreadable: `${path} is too large for a gitfile` };
    text = readFileSync(path, 'latin1');
  } catch {
    return { unreadable: `${path} cannot be read` };
  }
  if (!text.startsWith('gitdir: ')) return { unreadable: `${path} is not a valid gitfile (no "gitdir: " line)` };
  const target = decode(text.slice(8).replace(/[\r\n]+$/, ''));
  if (target === '') return { unreadable: `${path} names no git directory` };
  return { gitDir: isAbsolute(target) ? target : join(dirname(path), target) };
}

/** A latin1-decoded byte string back to the path it names. */
export function decode(text: string): string {
  return Buffer.from(text, 'latin1').toString('utf8');
}

/** The common directory of a git dir (its `commondir` file, relative to it), physical; undefined when that file names nothing. */
function commonDirOf(gitDir: string): string | undefined | 'error' {
  const file = join(gitDir, 'commondir');
  const stats = statOf(file, true);
  if (stats === undefined) return gitDir;
  if (stats === 'error') return 'error';
  try {
    const text = decode(readFileSync(file, 'latin1').replace(/[\r\n]+$/, ''));
    return realpathSync.native(isAbsolute(text) ? text : join(gitDir, text));
  } catch {
    return undefined;
  }
}

/** validate_headref: HEAD a symlink to `refs/…`, or `ref: refs/…`, or an object id. */
function validHead(path: string): boolean {
  try {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats === undefined) return false;
    if (stats.isSymbolicLink()) return readlinkSync(path).startsWith('refs/');
    const text = readFileSync(path, 'latin1').slice(0, 255);
    const ref = /^ref:[ \t\n\r]*(.*)/s.exec(text);
    if (ref !== null && (ref[1] as string).startsWith('refs/')) return true;
    return /^([0-9a-f]{40}|[0-9a-f]{64})/i.test(text);
  } catch {
    return false;
  }
}

function searchable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** is_git_directory: the git and common dirs when git takes `dir` as a repository; `physical` when `dir` is known to hold no symlink. */
export function repositoryAt(dir: string, physical = false): GitDirs | undefined {
  if (!validHead(join(dir, 'HEAD'))) return undefined;
  const commonDir = commonDirOf(dir);
  if (typeof commonDir !== 'string' || commonDir === 'error') return undefined;
  if (!searchable(join(commonDir, 'objects')) || !searchable(join(commonDir, 'refs'))) return undefined;
  const gitDir = physical ? dir : (physicalPath(dir) ?? dir);
  return { gitDir, commonDir: commonDir === dir ? gitDir : commonDir };
}

/** A directory that is one step from being a repository: `HEAD` beside `config` or `commondir`. */
function lookalikeAt(dir: string): GitDirs | undefined {
  if (statOf(join(dir, 'HEAD'), false) === undefined) return undefined;
  if (statOf(join(dir, 'config'), false) === undefined && statOf(join(dir, 'commondir'), false) === undefined) return undefined;
  const gitDir = physicalPath(dir) ?? dir;
  const common = commonDirOf(dir);
  return { gitDir, commonDir: typeof common === 'string' && common !== 'error' && common !== dir ? common : gitDir };
}
