// Where the paths of an agent action land on this host (R-PATH-1): each path in
// two forms, `..` resolved as text and resolved as the kernel would, following
// every symlink, a dangling one by its link text, so `link/../x`, a symlink into
// `~/.ssh` or a dangling `docs/notes.md -> ../../.ssh/authorized_keys2` is judged where it lands.
import { lstatSync, readlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PathRequest, ResolvedPaths } from '../core/policy/actionPlan.js';
import { normalizePathText, type PathVars } from '../core/policy/pathPolicy.js';

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
  const result = resolvePhysical(path, cache);
  cache.set(path, result);
  return result;
}

function resolvePhysical(path: string, cache: Map<string, string | undefined>): string | undefined {
  return resolveFrom(normalizeSlashes(path), cache, { hops: 0 });
}

/** `path` without repeated or trailing slashes (`..` and `.` kept: they are resolved against what exists). */
function normalizeSlashes(path: string): string {
  const trimmed = path.replace(/\/{2,}/g, '/');
  return trimmed.length > 1 && trimmed.endsWith('/') ? trimmed.slice(0, -1) : trimmed;
}

/**
 * The kernel's walk, from the last component back: the parent resolved first
 * (through `cache`, so the paths of one decision share their directories),
 * then one lstat of the last component. A missing component ends the walk —
 * nothing below it exists, so the rest lands as written; a symlink is followed
 * by its text, a dangling one too, counting hops across the whole walk.
 * Asks the file system without exceptions on the common path (a missing file).
 */
function resolveFrom(path: string, cache: Map<string, string | undefined>, walk: { hops: number }): string | undefined {
  if (path === '/' || path === '') return '/';
  if (cache.has(path)) return cache.get(path);
  const slash = path.lastIndexOf('/');
  const parentPath = slash <= 0 ? '/' : path.slice(0, slash);
  const name = path.slice(slash + 1);
  const parent = resolveFrom(parentPath, cache, walk);
  if (parent === undefined) return undefined;
  let result: string | undefined;
  if (name === '.' || name === '') result = parent;
  else if (name === '..') result = parent === '/' ? '/' : parent.slice(0, parent.lastIndexOf('/')) || '/';
  else {
    const next = parent === '/' ? `/${name}` : `${parent}/${name}`;
    let stats: ReturnType<typeof lstatSync> | undefined;
    try {
      stats = lstatSync(next, { throwIfNoEntry: false });
    } catch {
      stats = undefined; // not searchable: the agent's own open could not pass it either
    }
    if (stats === undefined || !stats.isSymbolicLink()) result = next;
    else {
      walk.hops += 1;
      if (walk.hops > SYMLINK_HOPS) return undefined;
      let text: string;
      try {
        text = readlinkSync(next);
      } catch {
        return undefined;
      }
      const target = text.startsWith('/') ? normalizeSlashes(text) : `${parent === '/' ? '' : parent}/${text}`;
      // Not cached under the link's own path when a loop is under way: the hop count decides.
      result = resolveFrom(normalizeSlashes(target), cache, walk);
    }
  }
  cache.set(path, result);
  return result;
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
export function resolvePathRequests(requests: readonly PathRequest[], cache = new Map<string, string | undefined>()): ResolvedPaths {
  return requests.map((request) => {
    const resolved = resolvePathRequest(request, cache);
    return resolved.unresolved === undefined ? resolved.forms : [];
  });
}

/** The forms of the agent's cwd that `${cwd}` stands for (a cwd that loops has only its lexical form). */
export function cwdForms(cwd: string, cache = new Map<string, string | undefined>()): string[] {
  return [...new Set([normalizePathText(cwd), physicalPath(cwd, cache) ?? normalizePathText(cwd)])];
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
