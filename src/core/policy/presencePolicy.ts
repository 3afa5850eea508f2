// `policy.presence` (R-REM-6): which actions need a passkey for their approval.
// Keys are tool ids or globs over them (`fs/write_file`, `fs/*`, `*/Bash`),
// compiled once per configuration with picomatch like the path and URL rules;
// the only value is "passkey". Pure: the daemon asks `presenceFor` when it
// files an approval and again when one is decided.
import picomatch from 'picomatch/posix.js';
import { z } from 'zod';
import { AGENT_NAMES, agentToolId, agentToolsOfKinds, type AgentActionKind, type AgentName } from '../agent/agentAction.js';
import { escapeText } from '../base/escape.js';
import type { Rule } from './toolPolicy.js';

export type Presence = 'passkey';

/** A key is checked on its own, so a bad value elsewhere does not hide it. */
const PresenceKeySchema = z.string().superRefine((key, ctx) => {
  const problem = presenceKeyProblem(key);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

export const PresenceSchema = z.record(PresenceKeySchema, z.literal('passkey', { error: '"passkey"' }), {
  error: 'an object mapping a tool id or glob ("fs/write_file", "fs/*", "claude/Bash") to "passkey"',
});
export type PresenceConfig = z.infer<typeof PresenceSchema>;

export interface CompiledPresence {
  /** Exact tool ids, looked up without a scan. */
  readonly exact: ReadonlyMap<string, Presence>;
  readonly globs: readonly { key: string; pattern: RegExp; presence: Presence }[];
}

const GLOB_CHARS = /[*?[\]{}()!+@]/;

function globOf(key: string): RegExp {
  return picomatch.makeRe(key, { dot: true, strictBrackets: true });
}

/** Why `key` can never name a tool id, or undefined when it is a tool id or a glob over them. */
export function presenceKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) {
    return `the key ${JSON.stringify(key)} is not a tool id or glob; expected "<server alias>/<tool name>", e.g. "fs/write_file", "fs/*" or "claude/Bash"`;
  }
  if (!GLOB_CHARS.test(key)) return undefined;
  try {
    globOf(key);
    return undefined;
  } catch (error) {
    return `the glob ${JSON.stringify(key)} does not compile (${error instanceof Error ? error.message : String(error)}); close every "[", "{" and "("`;
  }
}

/** The literal server alias a key names, or undefined when its alias part is a glob. */
export function presenceKeyAlias(key: string): string | undefined {
  const alias = key.slice(0, key.indexOf('/'));
  return alias === '' || GLOB_CHARS.test(alias) ? undefined : alias;
}

export function compilePresence(config: PresenceConfig): CompiledPresence {
  const exact = new Map<string, Presence>();
  const globs: { key: string; pattern: RegExp; presence: Presence }[] = [];
  for (const [key, presence] of Object.entries(config)) {
    if (GLOB_CHARS.test(key)) globs.push({ key, pattern: globOf(key), presence });
    else exact.set(key, presence);
  }
  return { exact, globs };
}

export const NO_PRESENCE: CompiledPresence = Object.freeze({ exact: new Map(), globs: [] });

/** The presence the approval of tool id `toolId` (`<server>/<tool>`) needs, with the key that asked for it. */
export function presenceFor(compiled: CompiledPresence, toolId: string): { presence: Presence; key: string } | undefined {
  const exact = compiled.exact.get(toolId);
  if (exact !== undefined) return { presence: exact, key: toolId };
  for (const glob of compiled.globs) if (glob.pattern.test(toolId)) return { presence: glob.presence, key: glob.key };
  return undefined;
}

/**
 * The kinds of agent action whose parts each auto-approval rule form may allow
 * (R-POL-6): a command rule a shell action's simple commands; a path rule the
 * paths of read and write tools and of a shell action (its redirections and
 * read operands), for the accesses it covers; a URL rule a fetch.
 */
function kindsOfRuleForm(rule: Pick<Rule, 'command' | 'path' | 'access' | 'url'>): AgentActionKind[] {
  if (rule.command !== undefined) return ['shell'];
  if (rule.url !== undefined) return ['fetch'];
  if (rule.path === undefined) return [];
  if (rule.access === 'read') return ['read', 'shell'];
  if (rule.access === 'write') return ['write', 'shell'];
  return ['read', 'write', 'shell'];
}

/**
 * The agent tool ids a `--command`, `--path` or `--url` rule could approve
 * (part by part) that `policy.presence` marks: such a rule is refused, since a
 * rule's allow is no person's assertion (R-REM-6). Empty for a tool rule, whose
 * tool id is checked as it is.
 */
export function presenceMarkedToolsOfRule(compiled: CompiledPresence, rule: Pick<Rule, 'command' | 'path' | 'access' | 'url' | 'agent'>): string[] {
  const kinds = kindsOfRuleForm(rule);
  if (kinds.length === 0) return [];
  const agents: readonly AgentName[] = rule.agent === undefined ? AGENT_NAMES : [rule.agent];
  const marked: string[] = [];
  for (const agent of agents) {
    for (const tool of agentToolsOfKinds(agent, kinds)) {
      const id = agentToolId(agent, tool);
      if (presenceFor(compiled, id) !== undefined) marked.push(id);
    }
  }
  return marked;
}

/** Lines for a reload's policy diff (R-CFG-4): dropping a passkey requirement loosens policy, so it is shown. */
export function diffPresence(a: PresenceConfig, b: PresenceConfig): string[] {
  const lines: string[] = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const before = a[key];
    const after = b[key];
    if (before === after) continue;
    const path = `policy.presence.${escapeText(key)}`;
    if (before === undefined) lines.push(`${path}: added "${after}"`);
    else lines.push(`${path}: removed (was "${before}")`);
  }
  return lines;
}

/**
 * `policy.presence` keys whose literal alias names no configured server nor an
 * agent (R-CFG-1): such a key never matches, so the passkey the operator asked
 * for would never be required. Judged on the raw document, like `policy.tools`.
 */
export function unknownPresenceAliases(presence: unknown, aliases: readonly string[], agentAliases: readonly string[]): { key: string; message: string }[] {
  if (presence === null || typeof presence !== 'object' || Array.isArray(presence)) return [];
  const problems: { key: string; message: string }[] = [];
  const configured = aliases.length === 0 ? 'no servers are configured' : `configured servers: ${aliases.map((a) => JSON.stringify(a)).join(', ')}`;
  for (const key of Object.keys(presence)) {
    if (presenceKeyProblem(key) !== undefined) continue; // reported by the schema
    const alias = presenceKeyAlias(key);
    if (alias === undefined || aliases.includes(alias) || agentAliases.includes(alias)) continue;
    problems.push({
      key,
      message:
        `${JSON.stringify(alias)} is not a server alias, so this entry would never require a passkey; ${configured} ` +
        `(agent tool ids start with ${agentAliases.map((a) => JSON.stringify(a)).join(', ')}). Fix the alias or add the server under "servers"`,
    });
  }
  return problems;
}
