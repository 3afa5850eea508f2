// URL rules (R-URL-1): a fetch's URL normalised (scheme and host lower-cased,
// default port, user info and fragment dropped) and compared with globs. The
// host and the path are matched apart, so `*` in a host never crosses a `/`.
import picomatch from 'picomatch/posix.js';
import type { PolicyValue } from './policyValue.js';
import { AssentError } from '../base/errors.js';
import { mostRestrictive } from './decisions.js';

export interface UrlRuleConfig {
  match: string;
  decision: PolicyValue;
}

export interface UrlsConfig {
  default: PolicyValue;
  rules: UrlRuleConfig[];
}

interface CompiledUrlRule {
  index: number;
  match: string;
  decision: PolicyValue;
  scheme: RegExp;
  /** Host (and `:port`) with dots read as separators, so `*` matches one label and `**` any number. */
  host: RegExp;
  path: RegExp;
}

export interface CompiledUrls {
  default: PolicyValue;
  rules: CompiledUrlRule[];
}

export interface UrlVerdict {
  decision: PolicyValue;
  rule: string;
  /** The URL as compared, or undefined when it is not a URL. */
  normalized?: string;
  reason?: string;
}

interface UrlParts {
  scheme: string;
  host: string;
  path: string;
}

/** Scheme, host[:port] and path+query of a URL as compared; undefined when it is not an absolute URL. */
export function normalizeUrl(text: string): UrlParts | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.host === '') return undefined;
  return { scheme: url.protocol.slice(0, -1), host: url.host, path: `${url.pathname}${url.search}` };
}

function glob(text: string, options: { bash?: boolean }, match: string): RegExp {
  try {
    return picomatch.makeRe(text, { dot: true, strictBrackets: true, ...options });
  } catch (error) {
    throw new AssentError('invalid_params', `the URL pattern ${JSON.stringify(match)} does not compile: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A URL pattern compiled for matching. */
export type CompiledUrlPattern = Omit<CompiledUrlRule, 'index' | 'decision'>;

/** Compiles one `urls.rules[].match`; throws an AssentError saying what shape is expected. */
export function compileUrlPattern(match: string): CompiledUrlPattern {
  const parts = /^([A-Za-z*][A-Za-z0-9+.*-]*):\/\/([^/]+)(\/.*)?$/.exec(match);
  if (parts === null) throw new AssentError('invalid_params', `the URL pattern ${JSON.stringify(match)} is not "scheme://host/path", e.g. "https://docs.example.com/*"`);
  const host = (parts[2] as string).toLowerCase().replace(/\./g, '/');
  return {
    match,
    scheme: glob((parts[1] as string).toLowerCase(), {}, match),
    host: glob(host, {}, match),
    path: glob(parts[3] ?? '/', { bash: true }, match),
  };
}

export function compileUrls(config: UrlsConfig): CompiledUrls {
  return { default: config.default, rules: config.rules.map((rule, index) => ({ index, decision: rule.decision, ...compileUrlPattern(rule.match) })) };
}

function partsMatch(pattern: CompiledUrlPattern, parts: UrlParts, host: string): boolean {
  return pattern.scheme.test(parts.scheme) && pattern.host.test(host) && pattern.path.test(parts.path);
}

/** Whether `pattern` matches the URL `text` as normalised (R-URL-1); what is not a URL matches nothing. */
export function urlPatternMatches(pattern: CompiledUrlPattern, text: string): boolean {
  const parts = normalizeUrl(text);
  return parts !== undefined && partsMatch(pattern, parts, parts.host.replace(/\./g, '/'));
}

/** Decides a fetch of `text` (R-URL-1): the most restrictive matching rule, else `urls.default`; not a URL → at least prompt. */
export function evaluateUrl(urls: CompiledUrls, text: string): UrlVerdict {
  const parts = normalizeUrl(text);
  if (parts === undefined) {
    return { decision: urls.default === 'deny' ? 'deny' : 'prompt', rule: 'policy.urls.default', reason: 'not an absolute URL, so no rule can match it' };
  }
  const normalized = `${parts.scheme}://${parts.host}${parts.path}`;
  const host = parts.host.replace(/\./g, '/');
  let best: CompiledUrlRule | undefined;
  for (const rule of urls.rules) {
    if (best !== undefined && mostRestrictive(best.decision, rule.decision) === best.decision) continue;
    if (partsMatch(rule, parts, host)) best = rule;
  }
  if (best !== undefined) return { decision: best.decision, rule: `policy.urls.rules.${best.index} ${JSON.stringify(best.match)}`, normalized };
  return { decision: urls.default, rule: 'policy.urls.default', normalized };
}
