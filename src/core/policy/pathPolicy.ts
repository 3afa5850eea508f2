// Path rules (R-PATH-1): which decision a file access gets. Globs are compiled
// once per configuration with picomatch; `~`, `${cwd}` and the other variables
// are prefixes compared as strings, so a home directory never acts as a glob.
import picomatch from 'picomatch/posix.js';
import type { PolicyValue } from './policyValue.js';
import { AssentError } from '../base/errors.js';
import { mostRestrictive } from './decisions.js';

export type PathAccess = 'read' | 'write';

export interface PathRuleConfig {
  glob: string;
  access: PathAccess | 'any';
  decision: PolicyValue;
}

export interface PathsConfig {
  read: PolicyValue;
  write: PolicyValue;
  rules: PathRuleConfig[];
}

/** The directories the variables of a glob stand for; `cwd` comes with each action. */
export interface PathVars {
  home: string;
  assentHome: string;
  codexHome: string;
}

/** Any syntax check of a glob needs directories for its variables (string prefixes, never part of the glob); these stand in for them. */
export const GLOB_CHECK_VARS: PathVars = Object.freeze({ home: '/home/user', assentHome: '/home/user/.assent', codexHome: '/home/user/.codex' });

/** The variables a glob may start with, besides `~`. */
export const PATH_VARIABLES = ['cwd', 'assentHome', 'codexHome'] as const;

interface CompiledPathRule {
  index: number;
  glob: string;
  access: PathRuleConfig['access'];
  decision: PolicyValue;
  /** `cwd`: relative to the action's cwd; else an absolute prefix (`~`, a variable) or none. */
  prefix: 'cwd' | string | undefined;
  /** Matched against the rest of the path after the prefix and `/` (the whole path when there is no prefix). */
  rest: RegExp | undefined;
}

export interface CompiledPaths {
  read: PolicyValue;
  write: PolicyValue;
  rules: CompiledPathRule[];
}

export interface PathVerdict {
  decision: PolicyValue;
  /** The config key that decided: `policy.paths.rules.3 "~/.ssh/**"` or `policy.paths.read`. */
  rule: string;
}

const GLOB_OPTIONS = { dot: true, strictBrackets: true } as const;

/** Splits a glob into its prefix variable and the glob after it; throws an AssentError when it cannot match. */
export function compilePathGlob(glob: string, vars: PathVars): { prefix: string | undefined; rest: RegExp | undefined } {
  let prefix: string | undefined;
  let rest: string;
  const variable = /^\$\{([A-Za-z]+)\}/.exec(glob);
  if (glob === '~' || glob.startsWith('~/')) {
    prefix = vars.home;
    rest = glob.slice(2);
  } else if (variable !== null) {
    const name = variable[1] as string;
    if (!(PATH_VARIABLES as readonly string[]).includes(name)) {
      throw new AssentError('invalid_params', `the glob ${JSON.stringify(glob)} uses the unknown variable \${${name}}; known: ${PATH_VARIABLES.map((v) => `\${${v}}`).join(', ')}`);
    }
    prefix = name === 'cwd' ? 'cwd' : vars[name as 'assentHome' | 'codexHome'];
    const after = glob.slice(variable[0].length);
    if (after !== '' && !after.startsWith('/')) throw new AssentError('invalid_params', `the glob ${JSON.stringify(glob)} needs a "/" after \${${name}}`);
    rest = after.slice(1);
  } else if (glob.startsWith('/') || glob.startsWith('**/')) {
    rest = glob;
  } else {
    throw new AssentError('invalid_params', `the glob ${JSON.stringify(glob)} is relative; start it with "/", "~/", "\${cwd}/", "\${assentHome}/", "\${codexHome}/" or "**/"`);
  }
  if (rest === '') return { prefix, rest: undefined };
  try {
    return { prefix, rest: picomatch.makeRe(rest, GLOB_OPTIONS) };
  } catch (error) {
    throw new AssentError('invalid_params', `the glob ${JSON.stringify(glob)} does not compile: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Prepares `policy.paths` for evaluation. */
export function compilePaths(config: PathsConfig, vars: PathVars): CompiledPaths {
  const rules = config.rules.map((rule, index): CompiledPathRule => {
    const { prefix, rest } = compilePathGlob(rule.glob, vars);
    return { index, glob: rule.glob, access: rule.access, decision: rule.decision, prefix, rest };
  });
  return { read: config.read, write: config.write, rules };
}

function under(path: string, base: string): string | undefined {
  if (path === base) return '';
  const withSlash = base.endsWith('/') ? base : `${base}/`;
  return path.startsWith(withSlash) ? path.slice(withSlash.length) : undefined;
}

/** Whether an absolute path is one of `bases` or inside one. */
export function isUnderAny(path: string, bases: readonly string[]): boolean {
  return bases.some((base) => under(path, base) !== undefined);
}

/** A path glob split into its prefix variable and the rest, as `compilePathGlob` returns it. */
export type CompiledPathGlob = ReturnType<typeof compilePathGlob>;

function ruleMatches(rule: CompiledPathGlob, path: string, cwds: readonly string[]): boolean {
  const bases = rule.prefix === undefined ? [undefined] : rule.prefix === 'cwd' ? cwds : [rule.prefix];
  for (const base of bases) {
    const rest = base === undefined ? path : under(path, base);
    if (rest === undefined) continue;
    if (rule.rest === undefined ? rest === '' : rule.rest.test(rest)) return true;
  }
  return false;
}

/**
 * Decides one access to one absolute path (R-PATH-1): the most restrictive
 * matching rule, else `paths.read`/`paths.write`. `cwds` are the forms of the
 * agent's cwd that `${cwd}` stands for.
 */
export function evaluatePath(paths: CompiledPaths, path: string, access: PathAccess, cwds: readonly string[]): PathVerdict {
  let best: CompiledPathRule | undefined;
  for (const rule of paths.rules) {
    if (rule.access !== 'any' && rule.access !== access) continue;
    if (best !== undefined && mostRestrictive(best.decision, rule.decision) === best.decision) continue;
    if (ruleMatches(rule, path, cwds)) best = rule;
  }
  if (best !== undefined) return { decision: best.decision, rule: `policy.paths.rules.${best.index} ${JSON.stringify(best.glob)}` };
  return { decision: paths[access], rule: `policy.paths.${access}` };
}

/** The most restrictive verdict over several forms of one path (lexical, physical, each possible cwd). */
export function evaluatePathForms(paths: CompiledPaths, forms: readonly string[], access: PathAccess, cwds: readonly string[]): PathVerdict {
  let verdict: PathVerdict | undefined;
  for (const form of forms) {
    const next = evaluatePath(paths, form, access, cwds);
    if (verdict === undefined || mostRestrictive(verdict.decision, next.decision) !== verdict.decision) verdict = next;
  }
  return verdict ?? { decision: 'prompt', rule: `policy.paths.${access}` };
}

/**
 * Whether every form of one path (lexical, physical, per possible cwd) lies
 * inside `glob`: what an auto-approval rule needs before it allows an access
 * (R-POL-6), so a symlink or `..` that leads out of the glob is not allowed by it.
 */
export function pathGlobMatchesEvery(glob: CompiledPathGlob, forms: readonly string[], cwds: readonly string[]): boolean {
  return forms.length > 0 && forms.every((form) => ruleMatches(glob, form, cwds));
}

/** `.`, `..` and repeated slashes resolved as text; for the part of a path that does not exist. */
export function normalizePathText(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}
