// Auto-approval rules for the parts of an agent action (R-POL-6): `assent rules
// add --command PATTERN | --path GLOB | --url GLOB [--agent A]`. Each may turn a
// part that the kind's rules left at `prompt` into `allow`; never a `deny`, and
// never a part that is not statically known. Pure: the edge compiles the rules
// once per change with the host's directories, and hands them to the plan.
import { parseAgentName, type AgentName } from '../agent/agentAction.js';
import { autoApprovalMatches } from './commandPolicy.js';
import { AssentError } from '../base/errors.js';
import { compilePathGlob, GLOB_CHECK_VARS, pathGlobMatchesEvery, type CompiledPathGlob, type PathAccess, type PathVars } from './pathPolicy.js';
import type { SimpleCommand } from './shellCommand.js';
import type { Rule, RuleAccess } from './toolPolicy.js';
import { compileUrlPattern, urlPatternMatches, type CompiledUrlPattern } from './urlPolicy.js';
import { compileWordPattern, type WordPattern } from './wordPattern.js';

/** The longest pattern a rule may have; longer is refused when it is added. */
export const MAX_RULE_PATTERN_LENGTH = 2000;

interface AutoRuleBase {
  id: string;
  /** How a part names the rule that decided it: `rule rabcde --command "npm test"`. */
  label: string;
  agent: AgentName | undefined;
  expiresAt: number | undefined;
  revokedAt: number | undefined;
}

interface CommandAutoRule extends AutoRuleBase {
  pattern: WordPattern;
}

interface PathAutoRule extends AutoRuleBase {
  glob: CompiledPathGlob;
  access: RuleAccess;
}

interface UrlAutoRule extends AutoRuleBase {
  pattern: CompiledUrlPattern;
}

/** Every `command`, `path` and `url` rule, compiled, oldest first. */
export interface CompiledAutoRules {
  commands: CommandAutoRule[];
  paths: PathAutoRule[];
  urls: UrlAutoRule[];
}

/** The rules that apply to one action: active at its time, for its agent (or every agent). Oldest first. */
export interface AutoApprovals {
  readonly commands: readonly CommandAutoRule[];
  readonly paths: readonly PathAutoRule[];
  readonly urls: readonly UrlAutoRule[];
}

/** No auto-approval rule applies: what a plan gets when none are given. */
export const NO_AUTO_APPROVALS: AutoApprovals = Object.freeze({ commands: [], paths: [], urls: [] });

/** The rule's form and pattern as the CLI takes them, for listings and part labels: `--command "npm test"`. */
export function describeRuleForm(rule: Pick<Rule, 'command' | 'path' | 'access' | 'url' | 'agent'>): string {
  let text: string;
  if (rule.command !== undefined) text = `--command ${JSON.stringify(rule.command)}`;
  else if (rule.path !== undefined) text = `--path ${JSON.stringify(rule.path)}${rule.access === undefined || rule.access === 'any' ? '' : ` --access ${rule.access}`}`;
  else if (rule.url !== undefined) text = `--url ${JSON.stringify(rule.url)}`;
  else text = '(no pattern)';
  return rule.agent === undefined ? text : `${text} --agent ${rule.agent}`;
}

/**
 * Checks the fields of a new `command`/`path`/`url` rule the way matching will
 * compile them, and returns the agent it names in its canonical form
 * (`claude` → `claude-code`). Throws `invalid_params` saying what is wrong.
 */
export function checkAutoRule(rule: { command?: string | undefined; path?: string | undefined; url?: string | undefined; agent?: string | undefined }): AgentName | undefined {
  const given = (['command', 'path', 'url'] as const).filter((form) => rule[form] !== undefined);
  if (given.length !== 1) {
    throw new AssentError('invalid_params', `a rule has exactly one of command, path and url (given: ${given.length === 0 ? 'none' : given.join(', ')})`);
  }
  const form = given[0] as 'command' | 'path' | 'url';
  const pattern = rule[form] as string;
  if (pattern.trim() === '') throw new AssentError('invalid_params', `the ${form} pattern is empty; an empty pattern matches nothing`);
  if (pattern.length > MAX_RULE_PATTERN_LENGTH) throw new AssentError('invalid_params', `the ${form} pattern is ${pattern.length} characters long; at most ${MAX_RULE_PATTERN_LENGTH}`);
  if (form === 'command') compileWordPattern(pattern);
  else if (form === 'path') compilePathGlob(pattern, GLOB_CHECK_VARS);
  else compileUrlPattern(pattern);
  if (rule.agent === undefined) return undefined;
  const agent = parseAgentName(rule.agent);
  if (agent === undefined) throw new AssentError('invalid_params', `unknown agent ${JSON.stringify(rule.agent)}; use claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline`);
  return agent;
}

function base(rule: Rule): AutoRuleBase {
  return { id: rule.id, label: `rule ${rule.id} ${describeRuleForm(rule)}`, agent: rule.agent, expiresAt: rule.expiresAt, revokedAt: rule.revokedAt };
}

/**
 * Compiles the `command`, `path` and `url` rules (tool rules are skipped);
 * `vars` are this host's directories behind `~` and the glob variables. A rule
 * that does not compile (it was checked when added) is left out: it allows nothing.
 */
export function compileAutoRules(rules: readonly Rule[], vars: PathVars): CompiledAutoRules {
  const compiled: CompiledAutoRules = { commands: [], paths: [], urls: [] };
  for (const rule of rules) {
    try {
      if (rule.command !== undefined) compiled.commands.push({ ...base(rule), pattern: compileWordPattern(rule.command) });
      else if (rule.path !== undefined) compiled.paths.push({ ...base(rule), glob: compilePathGlob(rule.path, vars), access: rule.access ?? 'any' });
      else if (rule.url !== undefined) compiled.urls.push({ ...base(rule), pattern: compileUrlPattern(rule.url) });
    } catch {
      continue;
    }
  }
  return compiled;
}

function applies(rule: AutoRuleBase, agent: AgentName, nowMs: number): boolean {
  return (rule.agent === undefined || rule.agent === agent) && (rule.revokedAt === undefined || rule.revokedAt > nowMs) && (rule.expiresAt === undefined || rule.expiresAt > nowMs);
}

/** The rules for one action of `agent` at `nowMs`: `--agent` limits a rule to that agent; revoked and expired rules drop out. */
export function autoApprovalsFor(compiled: CompiledAutoRules, agent: AgentName, nowMs: number): AutoApprovals {
  return {
    commands: compiled.commands.filter((rule) => applies(rule, agent, nowMs)),
    paths: compiled.paths.filter((rule) => applies(rule, agent, nowMs)),
    urls: compiled.urls.filter((rule) => applies(rule, agent, nowMs)),
  };
}

/** What an auto-approval rule that matched a part says: its id and how the part names it. */
export interface AutoApproval {
  ruleId: string;
  label: string;
}

function found(rule: AutoRuleBase | undefined): AutoApproval | undefined {
  return rule === undefined ? undefined : { ruleId: rule.id, label: rule.label };
}

/** The oldest command rule that lets this simple command through (see `autoApprovalMatches`). */
export function approveCommand(rules: AutoApprovals, command: SimpleCommand, extraReasons: readonly string[]): AutoApproval | undefined {
  return found(rules.commands.find((rule) => autoApprovalMatches(rule.pattern, command, extraReasons)));
}

/** The oldest path rule for this access whose glob holds every form of the path (R-PATH-1). */
export function approvePath(rules: AutoApprovals, forms: readonly string[], access: PathAccess, cwds: readonly string[]): AutoApproval | undefined {
  return found(rules.paths.find((rule) => (rule.access === 'any' || rule.access === access) && pathGlobMatchesEvery(rule.glob, forms, cwds)));
}

/** The oldest URL rule that matches the fetch's normalised URL (R-URL-1). */
export function approveUrl(rules: AutoApprovals, url: string): AutoApproval | undefined {
  return found(rules.urls.find((rule) => urlPatternMatches(rule.pattern, url)));
}
