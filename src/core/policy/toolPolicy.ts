// Tool policy (SPEC §5): which decision a tool call gets from config.json and the
// user's auto-approval rules. Pure and indexed so one call costs microseconds (R-POL-5).
import type { AgentName } from '../agent/agentAction.js';
import type { PolicyValue } from './policyValue.js';
import { AssentError } from '../base/errors.js';
import { toolCallRisk, type ApprovalRisk, type RiskLevel } from '../approval/approvalRisk.js';

export type ToolDecision = PolicyValue;

/** One argument condition of a rule: the value at a JSON pointer into the call's arguments. */
export interface ArgMatcher {
  /** RFC 6901 JSON pointer into the arguments object, e.g. "/path". */
  pointer: string;
  op: 'prefix' | 'equals';
  value: string;
}

/** Which file accesses a `--path` rule covers. */
export type RuleAccess = 'read' | 'write' | 'any';

/**
 * A user-authored auto-approval rule (R-POL-4, R-POL-6), stored in the journal.
 * Exactly one form: a tool rule (`tool` + `args`, for gateway calls and agent
 * tool ids), or a rule for one part of an agent action (`command`, `path` or
 * `url`, optionally for one `agent` only).
 */
export interface Rule {
  id: string;
  version: number;
  /** Tool id "<alias>/<tool>" of a tool rule. */
  tool?: string;
  /** Argument matchers of a tool rule; empty for the other forms. */
  args: ArgMatcher[];
  /** A word pattern a simple command of a shell action must match (R-SH-2), e.g. `npm test` or `npm run *`. */
  command?: string;
  /** A path glob (R-PATH-1) every form of an accessed path must match, e.g. `${cwd}/dist/**`. */
  path?: string;
  /** The accesses a `path` rule covers; `any` when absent. */
  access?: RuleAccess;
  /** A URL glob (R-URL-1) a fetch's normalised URL must match. */
  url?: string;
  /** Only this agent's actions; every agent's when absent (the forms other than `tool`). */
  agent?: AgentName;
  createdAt: number;
  expiresAt?: number;
  revokedAt?: number;
}

export interface ToolCall {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

export interface ToolPolicyResult {
  decision: ToolDecision;
  source: 'tool' | 'destructive' | 'default' | 'agents' | 'rule' | 'commands' | 'paths' | 'urls';
  /** The config key that decided, e.g. "policy.tools.fs/write_file" or "policy.default". */
  key?: string;
  ruleId?: string;
}

interface CompiledMatcher {
  segments: string[];
  op: 'prefix' | 'equals';
  value: string;
}

interface CompiledRule {
  /** Position in evaluation order (oldest first); lower wins when several rules match. */
  order: number;
  id: string;
  expiresAt: number | undefined;
  revokedAt: number | undefined;
  matchers: CompiledMatcher[];
}

/** Rules of one pointer, looked up by the string at that pointer instead of scanned. */
interface PointerIndex {
  segments: string[];
  equals: Map<string, CompiledRule[]>;
  prefixes: Map<number, Map<string, CompiledRule[]>>;
  /** Distinct prefix lengths, ascending. */
  lengths: number[];
}

/**
 * The rules of one tool, indexed by their first matcher, so a tool with
 * hundreds of rules (one per directory, say) still costs a few map lookups.
 */
interface ToolRuleIndex {
  unkeyed: CompiledRule[];
  byPointer: PointerIndex[];
}

/** Policy and rules prepared for fast evaluation; build once per config/rule change. */
export interface PolicySnapshot {
  readonly default: ToolDecision;
  readonly destructive: ToolDecision;
  readonly tools: ReadonlyMap<string, ToolDecision>;
  /** Rules per tool id, oldest first. */
  readonly rulesByTool: ReadonlyMap<string, readonly CompiledRule[]>;
  readonly ruleIndex: ReadonlyMap<string, ToolRuleIndex>;
  /** The `command`, `path` and `url` rules, oldest first; the kind's rules of an agent action apply them (R-POL-6). */
  readonly agentRules: readonly Rule[];
  /** `policy.toolRisk`: the risk level a gateway call of the tool carries, instead of its annotations' (R-POL-10). */
  readonly toolRisk: ReadonlyMap<string, RiskLevel>;
}

const RULE_ARG_SYNTAX = 'expected "/pointer:prefix=VALUE", "/pointer:equals=VALUE" or "/pointer=VALUE", e.g. "/path:prefix=/srv/data/"';

/** Splits an RFC 6901 pointer into unescaped segments; throws on a malformed one. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new AssentError('invalid_params', `JSON pointer ${JSON.stringify(pointer)} must start with "/" (e.g. "/path")`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => {
      if (/~[^01]|~$/.test(segment)) {
        throw new AssentError(
          'invalid_params',
          `JSON pointer ${JSON.stringify(pointer)} has a bad escape; write "~0" for "~" and "~1" for "/"`,
        );
      }
      return segment.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/**
 * Parses the CLI syntax of `assent rules add --arg`: `/path:prefix=/srv/data/`,
 * `/path:equals=x`, or plain `/path=x` (equals). The value is everything after
 * the first `=`, so it may itself contain `=` or `:`.
 */
export function parseRuleArg(text: string): ArgMatcher {
  const eq = text.indexOf('=');
  if (eq < 0) {
    throw new AssentError('invalid_params', `rule argument ${JSON.stringify(text)} has no "="; ${RULE_ARG_SYNTAX}`);
  }
  let pointer = text.slice(0, eq);
  const value = text.slice(eq + 1);
  let op: ArgMatcher['op'] = 'equals';
  const opMatch = /:(prefix|equals)$/.exec(pointer);
  if (opMatch) {
    op = opMatch[1] as ArgMatcher['op'];
    pointer = pointer.slice(0, opMatch.index);
  } else if (/:[a-z]+$/.test(pointer)) {
    throw new AssentError('invalid_params', `rule argument ${JSON.stringify(text)} names an unknown operator; ${RULE_ARG_SYNTAX}`);
  }
  if (!pointer.startsWith('/')) {
    throw new AssentError('invalid_params', `rule argument ${JSON.stringify(text)} must start with a JSON pointer such as "/path"; ${RULE_ARG_SYNTAX}`);
  }
  parsePointer(pointer);
  if (op === 'prefix' && value === '') {
    throw new AssentError('invalid_params', `rule argument ${JSON.stringify(text)} has an empty prefix, which would match every string; give the prefix, e.g. "/path:prefix=/srv/data/"`);
  }
  return { pointer, op, value };
}

/** Renders a matcher back in the CLI syntax, for listings. */
export function formatRuleArg(matcher: ArgMatcher): string {
  return `${matcher.pointer}:${matcher.op}=${matcher.value}`;
}

/** The part of config.json's `policy` a tool call's decision reads (R-POL-1). */
export interface ToolPolicySettings {
  default: PolicyValue;
  destructive: PolicyValue;
  tools: Readonly<Record<string, PolicyValue>>;
  toolRisk?: Readonly<Record<string, RiskLevel>>;
}

/** Prepares config policy and rules for evaluation: tool entries and rules are indexed by tool id. */
export function compilePolicy(config: ToolPolicySettings, rules: readonly Rule[]): PolicySnapshot {
  const tools = new Map<string, ToolDecision>(Object.entries(config.tools));
  const rulesByTool = new Map<string, CompiledRule[]>();
  const ordered = [...rules].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const agentRules: Rule[] = [];
  for (const [order, rule] of ordered.entries()) {
    if (rule.tool === undefined) {
      agentRules.push(rule);
      continue;
    }
    const compiled: CompiledRule = {
      order,
      id: rule.id,
      expiresAt: rule.expiresAt,
      revokedAt: rule.revokedAt,
      matchers: rule.args.map((m) => ({ segments: parsePointer(m.pointer), op: m.op, value: m.value })),
    };
    const list = rulesByTool.get(rule.tool);
    if (list) list.push(compiled);
    else rulesByTool.set(rule.tool, [compiled]);
  }
  const ruleIndex = new Map<string, ToolRuleIndex>();
  for (const [tool, list] of rulesByTool) ruleIndex.set(tool, indexRules(list));
  const toolRisk = new Map<string, RiskLevel>(Object.entries(config.toolRisk ?? {}));
  return { default: config.default, destructive: config.destructive, tools, rulesByTool, ruleIndex, agentRules, toolRisk };
}

function pushTo<K>(map: Map<K, CompiledRule[]>, key: K, rule: CompiledRule): void {
  const list = map.get(key);
  if (list) list.push(rule);
  else map.set(key, [rule]);
}

/** Indexes rules (given oldest first, so every bucket stays oldest first) by their first matcher. */
function indexRules(rules: readonly CompiledRule[]): ToolRuleIndex {
  const index: ToolRuleIndex = { unkeyed: [], byPointer: [] };
  const pointers = new Map<string, PointerIndex>();
  for (const rule of rules) {
    const first = rule.matchers[0];
    if (first === undefined) {
      index.unkeyed.push(rule);
      continue;
    }
    const key = JSON.stringify(first.segments);
    let entry = pointers.get(key);
    if (entry === undefined) {
      entry = { segments: first.segments, equals: new Map(), prefixes: new Map(), lengths: [] };
      pointers.set(key, entry);
      index.byPointer.push(entry);
    }
    if (first.op === 'equals') pushTo(entry.equals, first.value, rule);
    else {
      let byValue = entry.prefixes.get(first.value.length);
      if (byValue === undefined) {
        byValue = new Map();
        entry.prefixes.set(first.value.length, byValue);
        entry.lengths.push(first.value.length);
      }
      pushTo(byValue, first.value, rule);
    }
  }
  for (const entry of index.byPointer) entry.lengths.sort((a, b) => a - b);
  return index;
}

/** The risk a gateway call of `toolId` carries (R-POL-10): the operator's `policy.toolRisk` level, else its annotations'. */
export function gatewayCallRisk(snapshot: Pick<PolicySnapshot, 'toolRisk'> | undefined, toolId: string, annotations: ToolCall['annotations']): ApprovalRisk {
  const level = snapshot?.toolRisk.get(toolId);
  return toolCallRisk(annotations, level === undefined ? undefined : { level, setBy: `policy.toolRisk[${JSON.stringify(toolId)}]` });
}

/**
 * Only the level of {@link gatewayCallRisk}, for the gateway's settled calls:
 * with no `policy.toolRisk` entry it is read off the annotations directly, so
 * the per-call cost is a map probe at most (the same table as toolCallRisk).
 */
export function gatewayCallLevel(snapshot: Pick<PolicySnapshot, 'toolRisk'> | undefined, server: string, tool: string, annotations: ToolCall['annotations']): RiskLevel {
  if (snapshot !== undefined && snapshot.toolRisk.size > 0) {
    const level = snapshot.toolRisk.get(`${server}/${tool}`);
    if (level !== undefined) return level;
  }
  if (annotations?.readOnlyHint === true) return 'low';
  return annotations?.destructiveHint === true ? 'high' : 'elevated';
}

/** Destructive unless the server says readOnlyHint: true or destructiveHint: false (R-POL-3, MCP defaults). */
export function isDestructive(annotations: ToolCall['annotations']): boolean {
  if (annotations === undefined) return true;
  return !(annotations.readOnlyHint === true || annotations.destructiveHint === false);
}

function lookup(args: unknown, segments: readonly string[]): unknown {
  let current = args;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/**
 * A path that climbs with `..` could leave the prefix the operator approved
 * (`/srv/data/../../etc`), so such a value never matches a prefix rule; the call
 * falls back to a prompt instead.
 */
function climbsOut(value: string): boolean {
  return value.includes('\0') || /(^|[\\/])\.\.([\\/]|$)/.test(value);
}

function matches(matcher: CompiledMatcher, args: Record<string, unknown>): boolean {
  const actual = lookup(args, matcher.segments);
  if (typeof actual !== 'string') return false;
  if (matcher.op === 'equals') return actual === matcher.value;
  return actual.startsWith(matcher.value) && !climbsOut(actual);
}

function isActive(rule: CompiledRule, nowMs: number): boolean {
  return (rule.revokedAt === undefined || rule.revokedAt > nowMs) && (rule.expiresAt === undefined || rule.expiresAt > nowMs);
}

/** The oldest active rule in `list` (ordered oldest first) that matches and is older than `best`. */
function better(list: readonly CompiledRule[] | undefined, args: Record<string, unknown>, nowMs: number, best: CompiledRule | undefined): CompiledRule | undefined {
  if (list === undefined) return best;
  for (const rule of list) {
    if (best !== undefined && rule.order >= best.order) return best;
    if (isActive(rule, nowMs) && rule.matchers.every((m) => matches(m, args))) return rule;
  }
  return best;
}

function activeMatch(index: ToolRuleIndex | undefined, args: Record<string, unknown>, nowMs: number): string | undefined {
  if (index === undefined) return undefined;
  let best = better(index.unkeyed, args, nowMs, undefined);
  for (const entry of index.byPointer) {
    const actual = lookup(args, entry.segments);
    if (typeof actual !== 'string') continue;
    best = better(entry.equals.get(actual), args, nowMs, best);
    for (const length of entry.lengths) {
      if (length > actual.length) break;
      best = better(entry.prefixes.get(length)?.get(actual.slice(0, length)), args, nowMs, best);
    }
  }
  return best?.id;
}

/**
 * Decides one tool call (R-POL-2): `policy.tools[id]` wins outright, else
 * `policy.destructive` for a destructive tool, else `policy.default`. A
 * `prompt` then becomes `allow` when an active rule for the tool matches; a
 * rule never touches `deny` or `allow`. The oldest matching rule is reported.
 */
export function evaluateToolPolicy(snapshot: PolicySnapshot, call: ToolCall, nowMs: number): ToolPolicyResult {
  const id = `${call.server}/${call.tool}`;
  let result: ToolPolicyResult;
  const explicit = snapshot.tools.get(id);
  if (explicit !== undefined) result = { decision: explicit, source: 'tool', key: `policy.tools.${id}` };
  else if (isDestructive(call.annotations)) result = { decision: snapshot.destructive, source: 'destructive', key: 'policy.destructive' };
  else result = { decision: snapshot.default, source: 'default', key: 'policy.default' };
  if (result.decision !== 'prompt') return result;
  const ruleId = activeMatch(snapshot.ruleIndex.get(id), call.args, nowMs);
  return ruleId === undefined ? result : { decision: 'allow', source: 'rule', key: result.key, ruleId };
}

/** The id of the oldest active rule for tool id `id` that matches `args`, if any (R-POL-4). */
export function matchingRuleId(snapshot: PolicySnapshot, id: string, args: Record<string, unknown>, nowMs: number): string | undefined {
  return activeMatch(snapshot.ruleIndex.get(id), args, nowMs);
}

/** Whether a rule still decides calls at `nowMs`: not revoked and not expired. */
export function isRuleActive(rule: Rule, nowMs: number): boolean {
  return (rule.revokedAt === undefined || rule.revokedAt > nowMs) && (rule.expiresAt === undefined || rule.expiresAt > nowMs);
}
