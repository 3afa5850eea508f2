// What a rule is on the wire and how `rules.add` params become one (R-POL-4,
// R-POL-6): a tool rule with argument matchers, or one of the command, path and
// URL forms for agent actions; and the `--ttl` durations rules and tokens take.
import { z } from 'zod';
import { AGENT_NAMES } from '../core/agent/agentAction.js';
import { checkAutoRule } from '../core/policy/autoApproval.js';
import { AssentError } from '../core/base/errors.js';
import { parseRuleArg, type Rule, type RuleAccess } from '../core/policy/toolPolicy.js';

export const RuleSchema = z.object({
  id: z.string(),
  version: z.number(),
  /** A tool rule: the tool id and its argument matchers (R-POL-4). */
  tool: z.string().optional(),
  args: z.array(z.object({ pointer: z.string(), op: z.enum(['prefix', 'equals']), value: z.string() })),
  /** A rule for one part of an agent action (R-POL-6): a word pattern, a path glob (with the accesses it covers) or a URL glob. */
  command: z.string().optional(),
  path: z.string().optional(),
  access: z.enum(['read', 'write', 'any']).optional(),
  url: z.string().optional(),
  /** Only this agent's actions. */
  agent: z.enum(AGENT_NAMES).optional(),
  createdAt: z.number(),
  expiresAt: z.number().optional(),
  revokedAt: z.number().optional(),
});

/** `--ttl 8h` style durations. */
export function parseTtl(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  if (match === null) throw new AssentError('invalid_params', `ttl "${text}" is not a duration; use a number followed by s, m, h or d (e.g. 8h)`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** The params of `rules.add` that name what a rule matches. */
export interface RuleFormParams {
  tool?: string | undefined;
  args?: string[] | undefined;
  command?: string | undefined;
  path?: string | undefined;
  access?: RuleAccess | undefined;
  url?: string | undefined;
  agent?: string | undefined;
}

/**
 * What a new rule matches, checked as matching will read it: a tool id with
 * argument matchers, or exactly one of command, path (with the accesses it
 * covers) and url, optionally for one agent. Throws `invalid_params`.
 */
export function ruleFormOf(params: RuleFormParams): Pick<Rule, 'tool' | 'args' | 'command' | 'path' | 'access' | 'url' | 'agent'> {
  if (params.tool !== undefined) {
    const extra = (['command', 'path', 'access', 'url', 'agent'] as const).filter((key) => params[key] !== undefined);
    if (extra.length > 0) {
      throw new AssentError('invalid_params', `a tool rule takes no ${extra.join(', ')}; its tool id already names the agent (claude/Bash): add a separate rule for a command, path or URL`);
    }
    return { tool: params.tool, args: (params.args ?? []).map((text) => parseRuleArg(text)) };
  }
  if (params.args !== undefined && params.args.length > 0) throw new AssentError('invalid_params', 'argument matchers (args) belong to a tool rule; give tool as well');
  if (params.access !== undefined && params.path === undefined) throw new AssentError('invalid_params', 'access belongs to a path rule; give path as well');
  const agent = checkAutoRule(params);
  const form: Pick<Rule, 'args' | 'command' | 'path' | 'access' | 'url' | 'agent'> = { args: [] };
  if (params.command !== undefined) form.command = params.command;
  if (params.path !== undefined) form.path = params.path;
  if (params.path !== undefined && params.access !== undefined && params.access !== 'any') form.access = params.access;
  if (params.url !== undefined) form.url = params.url;
  if (agent !== undefined) form.agent = agent;
  return form;
}

