// The shape of config.json (SPEC §4) and its validation. Pure: the file is read
// by src/journal/configFile.ts; this module only judges values (the reload
// diff of two valid configurations is configDiff.ts).
import { z } from 'zod';
import { checkToolIdKeys } from './toolIdKeys.js';

import { AuditSchema } from './auditExportConfig.js';
import { CommandsSchema, PathsSchema, UrlsSchema } from '../policy/agentPolicyConfig.js';
import { NotificationsSchema } from './notificationsConfig.js';
import { HostSchema } from './hostConfig.js';
import { JournalSchema } from './journalConfig.js';
import { QuorumSchema } from './teamConfig.js';
import { PolicyValueSchema } from '../policy/policyValue.js';
import { PresenceSchema, unknownPresenceAliases } from '../policy/presencePolicy.js';
import { WebSchema } from './webConfig.js';

export { PolicyValueSchema, type PolicyValue } from '../policy/policyValue.js';
export { WebSchema, parseListen, type WebConfig } from './webConfig.js';

/** Upper bound of consentTimeoutSeconds: below the 30-minute idle window of MCP clients (R-CFG-3). */
export const MAX_CONSENT_TIMEOUT_SECONDS = 1500;

/** Server aliases become the first half of a tool id `<alias>/<tool>` (R-POL-1), so no `/`. */
const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function intRange(min: number, max: number): z.ZodNumber {
  const allowed = `an integer from ${min} to ${max}`;
  return z.number({ error: allowed }).int({ error: allowed }).min(min, { error: allowed }).max(max, { error: allowed });
}

const nonEmptyString = (allowed: string): z.ZodString => z.string({ error: allowed }).min(1, { error: allowed });
const stringMap = z.record(z.string(), z.string({ error: 'a string' }), { error: 'an object of string values' });

export const ServerSchema = z
  .object(
    {
      command: nonEmptyString('a non-empty command name or path').optional(),
      args: z.array(z.string({ error: 'a string' }), { error: 'an array of strings' }).optional(),
      env: stringMap.optional(),
      cwd: nonEmptyString('an absolute directory path').optional(),
      url: nonEmptyString('an http:// or https:// URL').optional(),
      headers: stringMap.optional(),
    },
    { error: 'an object with either "command" (stdio server) or "url" (HTTP server)' },
  )
  .superRefine((server, ctx) => {
    const hasCommand = server.command !== undefined;
    const hasUrl = server.url !== undefined;
    if (hasCommand === hasUrl) {
      ctx.addIssue({
        code: 'custom',
        message: hasCommand
          ? 'has both "command" and "url"; a server needs exactly one of them: "command" for a stdio server or "url" for an HTTP server'
          : 'has neither "command" nor "url"; a server needs exactly one of them: "command" for a stdio server or "url" for an HTTP server',
      });
    }
    if (server.url !== undefined && !/^https?:\/\/[^\s]+$/i.test(server.url)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: `got ${describeValue(server.url)}; expected an http:// or https:// URL` });
    }
    if (server.cwd !== undefined && !server.cwd.startsWith('/')) {
      ctx.addIssue({ code: 'custom', path: ['cwd'], message: `got ${describeValue(server.cwd)}; expected an absolute directory path` });
    }
    if (hasUrl && (server.args !== undefined || server.env !== undefined || server.cwd !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: '"args", "env" and "cwd" apply only to a stdio server ("command"); remove them or use "command" instead of "url"',
      });
    }
  });
export type Server = z.infer<typeof ServerSchema>;

export const PolicySchema = z.object(
  {
    default: PolicyValueSchema.default('allow'),
    destructive: PolicyValueSchema.default('prompt'),
    tools: z
      .record(z.string(), PolicyValueSchema, { error: 'an object mapping "<server>/<tool>" to "allow", "deny" or "prompt"' })
      .default({})
      .superRefine(checkToolIdKeys),
    consentTimeoutSeconds: intRange(1, MAX_CONSENT_TIMEOUT_SECONDS).default(90),
    quorum: QuorumSchema.default({}),
    /** The risk level a gateway call of the tool carries (R-POL-10), instead of the one its annotations give; a hint, never a decision. */
    toolRisk: z
      .record(z.string(), z.enum(['low', 'elevated', 'high'], { error: '"low", "elevated" or "high"' }), {
        error: 'an object mapping "<server>/<tool>" to "low", "elevated" or "high"',
      })
      .default({})
      .superRefine(checkToolIdKeys),
    /** Agent actions (SPEC §18) that no `policy.tools` entry or kind rule decides. */
    agents: z
      .object(
        {
          default: PolicyValueSchema.default('prompt'),
          /** The agents' bookkeeping tools (to-do lists, plans, subagents; R-POL-8). */
          bookkeeping: PolicyValueSchema.default('allow'),
        },
        { error: 'an object with "default" and "bookkeeping"' },
      )
      .prefault({}),
    /** Agent actions (SPEC §18): shell commands, paths, URLs. A section left out gets the default policy (R-POL-8). */
    commands: CommandsSchema.prefault({}),
    paths: PathsSchema.prefault({}),
    urls: UrlsSchema.prefault({}),
    /** Actions whose approval counts only with an enrolled passkey's assertion (R-REM-6). */
    presence: PresenceSchema.default({}),
  },
  { error: 'an object with "default", "destructive", "tools", "consentTimeoutSeconds", "quorum", "toolRisk", "agents", "commands", "paths", "urls" and "presence"' },
);
export type Policy = z.infer<typeof PolicySchema>;

/** Agent hooks (SPEC §17). */
export const HooksSchema = z.object(
  {
    /** How long an approval filed by a hook waits for a person (R-HOOK-3, R-HOOK-4); `consentTimeoutSeconds` stays the gateway's. */
    timeoutSeconds: intRange(1, MAX_CONSENT_TIMEOUT_SECONDS).default(110),
    /** Claude Code only (R-HOOK-9): answer prompt with Claude's own dialog. Validated; not acted on by this version. */
    claudeNativePrompt: z.boolean({ error: 'true or false' }).default(false),
  },
  { error: 'an object with "timeoutSeconds" and "claudeNativePrompt"' },
);

export const ChannelsSchema = z.object(
  {
    elicitation: z.boolean({ error: 'true or false' }).default(false),
    tty: z.boolean({ error: 'true or false' }).default(false),
  },
  { error: 'an object with "elicitation" and "tty" booleans' },
);

export const ApprovalsSchema = z.object(
  {
    handoff: z.boolean({ error: 'true or false' }).default(false),
    proofTtlSeconds: intRange(1, 3600).default(300),
    /** R-TEAM-3: the principal that owns an agent session may not approve its own request (it may deny). */
    fourEyes: z.boolean({ error: 'true or false' }).default(false),
  },
  { error: 'an object with "handoff", "proofTtlSeconds" and "fourEyes"' },
);

export const ConfigSchema = z.object(
  {
    servers: z
      .record(z.string(), ServerSchema, { error: 'an object mapping server aliases to server definitions' })
      .default({})
      .superRefine((servers, ctx) => {
        for (const alias of Object.keys(servers)) {
          if (!ALIAS_PATTERN.test(alias)) {
            ctx.addIssue({
              code: 'custom',
              path: [alias],
              message: `the alias ${JSON.stringify(alias)} is not allowed; use 1-64 letters, digits, "_", "." or "-" (no "/"), starting with a letter or digit`,
            });
          }
        }
      }),
    policy: PolicySchema.prefault({}),
    channels: ChannelsSchema.prefault({}),
    approvals: ApprovalsSchema.prefault({}),
    hooks: HooksSchema.prefault({}),
    notifications: NotificationsSchema,
    web: WebSchema.prefault({}),
    host: HostSchema.prefault({}),
    journal: JournalSchema.prefault({}),
    auditRetentionDays: intRange(1, 3650).default(30),
    /** Where audit lines are exported besides the day files (R-AUD-4). */
    audit: AuditSchema.prefault({}),
  },
  { error: 'a JSON object' },
);
export type Config = z.infer<typeof ConfigSchema>;

/** The configuration in force when there is no config.json. */
export const DEFAULT_CONFIG: Config = Object.freeze(ConfigSchema.parse({})) as Config;

export interface ConfigProblem {
  severity: 'error' | 'warning';
  /** Dotted key path, e.g. "policy.tools.fs/write_file"; "" is the whole document. */
  path: string;
  /** Says what is wrong with the value (its type) and what is allowed. */
  message: string;
}

/** Names a value's JSON type (and a short rendering) for messages that say what was wrong. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the key is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  switch (typeof value) {
    case 'string': {
      const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
      return `a string (${JSON.stringify(shown)})`;
    }
    case 'number':
      return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key) => String(key)).join('.');
}

type SchemaNode = z.core.$ZodType;

/**
 * Levenshtein distance, for "did you mean" on unknown keys: a misspelt
 * `policy.tools` drops every entry under it, which can loosen policy, so the
 * warning names the key that was probably meant.
 */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Agent tool ids `<agent>/<tool>` (SPEC §17) are valid `policy.tools` keys
 * without a server of that name: the hook heads decide them by these aliases.
 */
export const AGENT_TOOL_ALIASES: readonly string[] = Object.freeze(['claude', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'qwen', 'droid', 'auggie', 'cline']);

/**
 * Why an unknown key at this path is an error, or undefined where it is a
 * warning: inside `policy` a typo (`"defualt"`, `"tool"`) silently drops what
 * the operator meant and so loosens policy (R-CFG-1); inside `audit` one
 * (`"exprot"`, a sink's `"hedaers"`) silently turns export off or sends a sink
 * without its settings, while the security team believes it receives every record.
 */
function unknownKeyIsError(path: readonly PropertyKey[], near: string | undefined): string | undefined {
  if (path[0] === 'policy') return 'inside "policy" a misspelt key would silently loosen policy, so it is refused';
  if (path[0] === 'audit') return 'inside "audit" a misspelt key would silently turn export off or drop a sink\'s setting, so it is refused';
  // At the top, a key a letter or two from a section's name is that section misspelt: "polcy" would drop the whole
  // policy, "audt" all export, "jornal" a team's database. A name unlike any section (a newer version's) stays a warning.
  if (path.length === 0 && near !== undefined) return `a misspelt section would silently drop all of "${near}", so it is refused`;
  return undefined;
}

/** Walks the input beside the schema and reports keys the schema does not know (R-CFG-1). */
function unknownKeys(schema: SchemaNode, value: unknown, path: PropertyKey[], out: ConfigProblem[]): void {
  if (value === null || typeof value !== 'object') return;
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
    case 'pipe': {
      // A preprocess (e.g. `notifications: true` → `{os: true}`) passes an object through to the schema after it.
      const inner = (def['innerType'] ?? def['in']) as SchemaNode;
      unknownKeys(inner._zod.def.type === 'transform' ? (def['out'] as SchemaNode) : inner, value, path, out);
      return;
    }
    case 'record':
      if (Array.isArray(value)) return;
      for (const [key, item] of Object.entries(value)) unknownKeys(def['valueType'] as SchemaNode, item, [...path, key], out);
      return;
    case 'union': {
      // A discriminated union (audit.export sinks): judge the keys against the option its "kind" names.
      const kind = (value as Record<string, unknown>)['kind'];
      const options = (def['options'] ?? []) as SchemaNode[];
      const chosen = options.find((option) => {
        const inner = option._zod.def.type === 'pipe' ? ((option._zod.def as unknown as { in: SchemaNode }).in) : option;
        const shape = (inner._zod.def as unknown as { shape?: Record<string, z.ZodType> }).shape;
        return shape?.['kind']?.safeParse(kind).success === true;
      });
      if (chosen !== undefined) unknownKeys(chosen, value, path, out);
      return;
    }
    case 'array':
      if (!Array.isArray(value)) return;
      (value as unknown[]).forEach((item, index) => unknownKeys(def['element'] as SchemaNode, item, [...path, index], out));
      return;
    case 'object': {
      if (Array.isArray(value)) return;
      const shape = def['shape'] as Record<string, SchemaNode>;
      for (const [key, item] of Object.entries(value)) {
        const child = shape[key];
        if (child === undefined) {
          const names = Object.keys(shape);
          const near = names.find((name) => editDistance(name.toLowerCase(), key.toLowerCase()) <= 2);
          const known = names.map((k) => JSON.stringify(k)).join(', ');
          const here = [...path, key];
          const why = unknownKeyIsError(path, near);
          if (why !== undefined) {
            out.push({
              severity: 'error',
              path: formatPath(here),
              message: `unknown key${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}; ${why}. Known keys here: ${known}`,
            });
          } else {
            out.push({
              severity: 'warning',
              path: formatPath(here),
              message: `unknown key, ignored${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}; known keys here: ${known}`,
            });
          }
        } else {
          unknownKeys(child, item, [...path, key], out);
        }
      }
      return;
    }
    default:
      return;
  }
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * R-CFG-1: a `policy.tools` (or `policy.quorum`, `policy.toolRisk`) id whose alias names no configured server (nor an
 * agent, §17) can never match a call, so the operator's intended `deny` or
 * `prompt` does nothing; that is an error, and so is a `policy.presence` key
 * naming one (its passkey would never be asked for). Judged on the raw document so it is
 * reported beside every other problem, even when a server entry is invalid.
 */
function unknownToolAliases(value: unknown, section: 'tools' | 'quorum' | 'toolRisk' = 'tools'): ConfigProblem[] {
  const root = plainObject(value);
  const tools = plainObject(plainObject(root?.['policy'])?.[section]);
  const aliases = Object.keys(plainObject(root?.['servers']) ?? {});
  const presence = section !== 'tools' ? [] : unknownPresenceAliases(plainObject(root?.['policy'])?.['presence'], aliases, AGENT_TOOL_ALIASES).map(
    ({ key, message }): ConfigProblem => ({ severity: 'error', path: formatPath(['policy', 'presence', key]), message }),
  );
  if (tools === undefined) return presence;
  const configured = aliases.length === 0 ? 'no servers are configured' : `configured servers: ${aliases.map((a) => JSON.stringify(a)).join(', ')}`;
  const agents = AGENT_TOOL_ALIASES.map((a) => JSON.stringify(a)).join(', ');
  const problems: ConfigProblem[] = [];
  for (const id of Object.keys(tools)) {
    const slash = id.indexOf('/');
    if (slash <= 0 || slash === id.length - 1) continue; // reported by the schema as "not a tool id"
    const alias = id.slice(0, slash);
    if (aliases.includes(alias) || AGENT_TOOL_ALIASES.includes(alias)) continue;
    const near = aliases.find((name) => editDistance(name.toLowerCase(), alias.toLowerCase()) <= 2);
    problems.push({
      severity: 'error',
      path: formatPath(['policy', section, id]),
      message:
        `${JSON.stringify(alias)} is not a server alias${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}, so this entry would never match a call; ` +
        `${configured} (agent tool ids start with ${agents}). Fix the alias or add the server under "servers"`,
    });
  }
  return [...problems, ...presence];
}

/**
 * A top-level `"$schema"` names the file's JSON Schema for editors
 * (schema/config.schema.json): accepted as a string and otherwise ignored, so
 * the configuration in force is the same with it or without it.
 */
function withoutSchemaKey(value: unknown): { value: unknown; problems: ConfigProblem[] } {
  const root = plainObject(value);
  if (root === undefined || !Object.prototype.hasOwnProperty.call(root, '$schema')) return { value, problems: [] };
  const { $schema: schema, ...rest } = root;
  const problems: ConfigProblem[] =
    typeof schema === 'string' ? [] : [{ severity: 'error', path: '$schema', message: `got ${describeValue(schema)}; expected a string naming the file's JSON Schema (or no "$schema" key)` }];
  return { value: rest, problems };
}

/**
 * Judges a parsed config.json. Collects every problem instead of stopping at the
 * first, so `assent config check` can list them all (R-CFG-5); `config` is
 * undefined when there is at least one error. Unknown keys are warnings, except
 * inside `policy` and `audit`, where they are errors, as are `policy.tools` ids
 * naming an unknown server alias (R-CFG-1).
 */
export function validateConfig(input: unknown): { config: Config | undefined; problems: ConfigProblem[] } {
  const { value, problems: schemaKeyProblems } = withoutSchemaKey(input);
  const problems: ConfigProblem[] = [...schemaKeyProblems, ...unknownToolAliases(value), ...unknownToolAliases(value, 'quorum'), ...unknownToolAliases(value, 'toolRisk')];
  const result = ConfigSchema.safeParse(value);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = formatPath(issue.path);
      if (issue.code === 'custom') {
        problems.push({ severity: 'error', path, message: issue.message });
      } else if (issue.code === 'invalid_key') {
        // A record key its own schema refused: that schema's words say what is wrong with it.
        problems.push({ severity: 'error', path, message: issue.issues.map((inner) => inner.message).join('; ') });
      } else {
        const actual = valueAt(value, issue.path);
        problems.push({ severity: 'error', path, message: `got ${describeValue(actual)}; expected ${issue.message}` });
      }
    }
  }
  unknownKeys(ConfigSchema, value, [], problems);
  problems.sort((a, b) => (a.severity === b.severity ? a.path.localeCompare(b.path) : a.severity === 'error' ? -1 : 1));
  const valid = result.success && !problems.some((p) => p.severity === 'error');
  return { config: valid ? result.data : undefined, problems };
}
