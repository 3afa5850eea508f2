// Where the paths of an agent action land on this host (R-PATH-1): each path in
// two forms, `..` resolved as text and resolved through the symlinks of the part
// that exists, so `link/../x` or a symlink into `~/.ssh` is judged where it lands.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PathRequest, ResolvedPaths } from '../core/actionPlan.js';
import { normalizePathText, type PathVars } from '../core/pathPolicy.js';

/** The physical path of `path` (absolute, not normalised): real for the longest existing prefix, text for the rest. */
export function physicalPath(path: string, cache = new Map<string, string>()): string {
  const known = cache.get(path);
  if (known !== undefined) return known;
  let result: string;
  try {
    result = realpathSync.native(path);
  } catch {
    const slash = path.lastIndexOf('/');
    if (slash <= 0) result = normalizePathText(path);
    else {
      const parent = physicalPath(path.slice(0, slash), cache);
      const name = path.slice(slash + 1);
      result = name === '..' ? normalizePathText(`${parent}/..`) : name === '.' || name === '' ? parent : normalizePathText(`${parent}/${name}`);
    }
  }
  cache.set(path, result);
  return result;
}

/** Every absolute form of each request: per base, the lexical and the physical resolution. */
export function resolvePathRequests(requests: readonly PathRequest[]): ResolvedPaths {
  const cache = new Map<string, string>();
  return requests.map((request) => {
    const absolutes = request.text.startsWith('/') ? [request.text] : request.bases.map((base) => `${base}/${request.text}`);
    const forms = new Set<string>();
    for (const absolute of absolutes) {
      forms.add(normalizePathText(absolute));
      forms.add(physicalPath(absolute, cache));
    }
    return [...forms];
  });
}

/** The forms of the agent's cwd that `${cwd}` stands for. */
export function cwdForms(cwd: string): string[] {
  return [...new Set([normalizePathText(cwd), physicalPath(cwd)])];
}

/**
 * The directories behind `~`, `${assentHome}` and `${codexHome}` on this host,
 * physical (symlinks resolved), so they compare with the physical form of a path.
 */
export function hostPathVars(env: NodeJS.ProcessEnv, assentHome: string): PathVars {
  const home = env['HOME'] !== undefined && env['HOME'].startsWith('/') ? env['HOME'] : homedir();
  const codex = env['CODEX_HOME'];
  return {
    home: physicalPath(home),
    assentHome: physicalPath(assentHome),
    codexHome: physicalPath(codex !== undefined && codex.startsWith('/') ? codex : join(home, '.codex')),
  };
}
