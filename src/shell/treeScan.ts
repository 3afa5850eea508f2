// What a recursive read reaches (R-SH-10): every entry beneath its starting
// directory, found on the file system at decision time and bounded, so
// `grep -r KEY ~` is judged by the credential files it would read.
import { closeSync, openSync, readdirSync, readSync, statSync, type Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { AssentError } from '../core/base/errors.js';
import { normalizePathText } from '../core/policy/pathPolicy.js';
import { physicalPath } from './resolvePaths.js';

/** Entries a decision looks at before it gives up (then the read is at least prompt). */
export const TREE_SCAN_LIMIT = 10_000;

export interface ScanTreeOptions {
  /**
   * False for a program that skips dot-entries (`rg` without `--hidden`/`-u`):
   * they are neither listed nor entered — unless an ignore file ripgrep reads
   * whitelists a name (`!.env` in a `.ignore`, `.rgignore`, `.fdignore` or `.gitignore` of
   * the tree or above it, `.git/info/exclude`, or one of `globalIgnoreFiles`),
   * which makes ripgrep search hidden files it names; then all are listed.
   */
  hidden: boolean;
  /** The person's global git ignore files (`~/.config/git/ignore`, core.excludesFile): ripgrep honours them too. */
  globalIgnoreFiles?: readonly string[];
  /** At most this many entries, the starting directory included (default {@link TREE_SCAN_LIMIT}). */
  limit?: number;
  /**
   * True for a program that walks into symlinked directories (`grep -R`,
   * `rg -L`, `find -L`, `zip -r` without `-y`): their targets are listed and
   * walked, each real directory once. False (the default): a symlink met in
   * the walk is listed as itself only — `grep -r` and `rg` skip it, `tar c`
   * and `cp -r` copy the link, not what it points to.
   */
  follow?: boolean;
  /** Physical paths already resolved in this decision (shared with its other paths). */
  cache?: Map<string, string | undefined>;
}

export interface TreeScan {
  /**
   * Absolute physical paths: the starting directory itself (so a rule on it
   * applies even when it is empty or absent), every file and directory
   * beneath it, and the landing path of every symlink met (dangling ones by
   * their link text), each once, shallowest first.
   */
  entries: string[];
  /** True when the walk stopped at the limit: what lies beyond is not known. */
  truncated: boolean;
}

/**
 * Every entry a recursive read starting at the absolute `dir` could reach.
 * A directory that cannot be listed is skipped: the agent, running as the
 * same user, cannot read beneath it either. Gitignored files are listed (a
 * program that honours .gitignore reads less, never more). `dir` need not
 * exist: then it is the only entry.
 */
export function scanTree(dir: string, options: ScanTreeOptions): TreeScan {
  if (!options.hidden) {
    const start = physicalPath(dir, options.cache ?? new Map<string, string | undefined>()) ?? normalizePathText(dir);
    if (whitelistAbove(start) || (options.globalIgnoreFiles ?? []).some(whitelists)) return walkAll(dir, options);
  }
  return walk(dir, options) ?? walkAll(dir, options);
}

function walkAll(dir: string, options: ScanTreeOptions): TreeScan {
  const all = walk(dir, { ...options, hidden: true });
  if (all === undefined) throw new AssentError('internal', 'a tree walk that lists hidden entries stopped for a whitelist');
  return all;
}

/** The walk; undefined when it skips hidden entries and finds an ignore file that whitelists one. */
function walk(dir: string, options: ScanTreeOptions): TreeScan | undefined {
  const limit = options.limit ?? TREE_SCAN_LIMIT;
  const cache = options.cache ?? new Map<string, string | undefined>();
  const start = physicalPath(dir, cache) ?? normalizePathText(dir);
  const entries = new Set<string>([start]);
  const queue: string[] = [];
  const walked = new Set<string>();
  if (isDirectory(start)) {
    queue.push(start);
    walked.add(start);
  }
  /** Adds one entry; false once the limit is reached. */
  const add = (path: string): boolean => {
    if (entries.has(path)) return true;
    if (entries.size >= limit) return false;
    entries.add(path);
    return true;
  };
  for (let head = 0; head < queue.length; head += 1) {
    const current = queue[head] as string;
    let children: Dirent[];
    try {
      children = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!options.hidden && children.some((child) => (IGNORE_FILES.includes(child.name) && whitelists(`${current}/${child.name}`)) || (child.name === '.git' && whitelists(`${current}/.git/info/exclude`)))) return undefined;
    for (const child of children) {
      if (!options.hidden && child.name.startsWith('.')) continue;
      const path = current === '/' ? `/${child.name}` : `${current}/${child.name}`;
      if (!add(path)) return { entries: [...entries], truncated: true };
      if (child.isDirectory()) {
        // Already walked when a followed symlink led here first.
        if (!walked.has(path)) queue.push(path);
        walked.add(path);
        continue;
      }
      if (!child.isSymbolicLink() || options.follow !== true) continue;
      // A loop lands nowhere: reading it fails with ELOOP.
      const target = physicalPath(path, cache);
      if (target === undefined) continue;
      if (!add(target)) return { entries: [...entries], truncated: true };
      if (!walked.has(target) && isDirectory(target)) {
        queue.push(target);
        walked.add(target);
      }
    }
  }
  return { entries: [...entries], truncated: false };
}

/** The ignore files ripgrep reads in every directory it walks (and, by default, in those above it); fd reads .fdignore instead of .rgignore. */
const IGNORE_FILES = ['.ignore', '.rgignore', '.fdignore', '.gitignore'];
/** How much of an ignore file is read for a whitelist line; a longer one counts as whitelisting. */
const IGNORE_READ_LIMIT = 256 * 1024;

/** Whether an ignore file holds a whitelist line (`!name`), which re-includes what hidden-skipping left out. */
function whitelists(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.alloc(IGNORE_READ_LIMIT + 1);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return read > IGNORE_READ_LIMIT || /^[ \t]*!/m.test(buffer.toString('utf8', 0, read));
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** An ignore file in `start` or a directory above it, or a repository's info/exclude there, that whitelists a name. */
function whitelistAbove(start: string): boolean {
  for (let current = start; ; current = dirname(current)) {
    if (IGNORE_FILES.some((name) => whitelists(join(current, name))) || whitelists(join(current, '.git', 'info', 'exclude'))) return true;
    if (dirname(current) === current) return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}
