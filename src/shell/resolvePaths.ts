// Where the paths of an agent action land on this host (R-PATH-1): each path in
// two forms, `..` resolved as text and resolved as the kernel would, following
// every symlink, a dangling one by its link text, so `link/../x`, a symlink into
// `~/.ssh` or a dangling `docs/notes.md -> ../../.ssh/authorized_keys2` is judged where it lands.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PathRequest, ResolvedPaths } from '../core/actionPlan.js';
import { normalizePathText, type PathVars } from '../core/pathPolicy.js';

/** Symlinks the kernel follows while resolving one path (Linux MAXSYMLINKS); one more and open() fails with ELOOP. */
export const SYMLINK_HOPS = 40;

/**
 * The physical path of the absolute `path`: where an open that creates it
 * would land. Existing symlinks are followed; a dangling one is followed by
 * its link text (relative to the link's directory) although the target does
 * not exist, because a write through it creates the target there. Past the
 * first component that does not exist, the rest is text (`..` as text).
 *
 * Undefined when the resolution loops or needs more than {@link SYMLINK_HOPS}
 * symlinks: the kernel refuses such a path with ELOOP, and where it lands
 * cannot be known, so the caller must judge it "not known" (at least prompt).
 */
export function physicalPath(path: string, cache = new Map<string, string | undefined>()): string | undefined {
  if (cache.has(path)) return cache.get(path);
  const result = resolvePhysical(path);
  cache.set(path, result);
  return result;
}

function resolvePhysical(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
  }
  return walkComponents(path);
}

/**
 * The kernel's walk, one component at a time (only reached when realpath
 * failed, i.e. some component is missing or unreadable): `dir` is always a
 * physical directory (or the path reached so far), `pending` the components
 * still to walk, last one first, so a link's text is pushed in front of the rest.
 */
function walkComponents(path: string): string | undefined {
  const pending = path.split('/').reverse();
  let dir = '/';
  let hops = 0;
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (name === '' || name === '.') continue;
    if (name === '..') {
      dir = dir.slice(0, dir.lastIndexOf('/')) || '/';
      continue;
    }
    const next = dir === '/' ? `/${name}` : `${dir}/${name}`;
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      // Missing (or not searchable, which the agent's own open could not pass
      // either): nothing below it exists, so the rest lands as written.
      return normalizePathText([next, ...pending.reverse()].join('/'));
    }
    if (!isLink) {
      dir = next;
      continue;
    }
    hops += 1;
    if (hops > SYMLINK_HOPS) return undefined;
    let text: string;
    try {
      text = readlinkSync(next);
    } catch {
      return undefined;
    }
    if (text.startsWith('/')) dir = '/';
    pending.push(...text.split('/').reverse());
  }
  return dir;
}

/** What the edge found for one request: every form it could compute, and why the request cannot be resolved, if so. */
export interface ResolvedRequest {
  /** Per base: the lexical form and, when it resolves, the physical one (deduplicated). */
  forms: string[];
  /** Set when a physical form does not resolve (a symlink loop, more than 40 symlinks): then the access is not known. */
  unresolved?: string;
}

/** Every absolute form of one request; `cache` may be shared by the requests of one decision. */
export function resolvePathRequest(request: PathRequest, cache = new Map<string, string | undefined>()): ResolvedRequest {
  const absolutes = request.text.startsWith('/') ? [request.text] : request.bases.map((base) => `${base}/${request.text}`);
  const forms = new Set<string>();
  let unresolved: string | undefined;
  for (const absolute of absolutes) {
    forms.add(normalizePathText(absolute));
    const physical = physicalPath(absolute, cache);
    if (physical !== undefined) forms.add(physical);
    else unresolved ??= `${absolute} does not resolve: a symlink loop or more than ${SYMLINK_HOPS} symlinks`;
  }
  const resolved: ResolvedRequest = { forms: [...forms] };
  if (unresolved !== undefined) resolved.unresolved = unresolved;
  return resolved;
}

/**
 * Every absolute form of each request: per base, the lexical and the physical
 * resolution. A request that does not resolve gets no forms at all, which
 * `decidePlan` judges `prompt` (`evaluatePathForms` falls back to prompt for an
 * empty list, and no auto-approval matches it): the kernel refuses such a path
 * with ELOOP, so nothing is reached, but where it would land is not known.
 */
export function resolvePathRequests(requests: readonly PathRequest[]): ResolvedPaths {
  const cache = new Map<string, string | undefined>();
  return requests.map((request) => {
    const resolved = resolvePathRequest(request, cache);
    return resolved.unresolved === undefined ? resolved.forms : [];
  });
}

/** The forms of the agent's cwd that `${cwd}` stands for (a cwd that loops has only its lexical form). */
export function cwdForms(cwd: string): string[] {
  return [...new Set([normalizePathText(cwd), physicalPath(cwd) ?? normalizePathText(cwd)])];
}

/**
 * The directories behind `~`, `${assentHome}` and `${codexHome}` on this host,
 * physical (symlinks resolved), so they compare with the physical form of a path.
 */
export function hostPathVars(env: NodeJS.ProcessEnv, assentHome: string): PathVars {
  const home = env['HOME'] !== undefined && env['HOME'].startsWith('/') ? env['HOME'] : homedir();
  const codex = env['CODEX_HOME'];
  const physical = (path: string): string => physicalPath(path) ?? normalizePathText(path);
  return {
    home: physical(home),
    assentHome: physical(assentHome),
    codexHome: physical(codex !== undefined && codex.startsWith('/') ? codex : join(home, '.codex')),
  };
}
