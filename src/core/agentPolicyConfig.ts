// `policy.commands`, `policy.paths`, `policy.urls` (SPEC §18): their schemas,
// the default policy for agent actions (R-POL-8) that fills a section left out,
// and the snapshot compiled from them once per configuration.
import { z } from 'zod';
import { compileCommandRule, compileCommands, type CommandRuleConfig, type CommandsConfig, type CompiledCommands } from './commandPolicy.js';
import { escapeText } from './escape.js';
import { compilePathGlob, compilePaths, GLOB_CHECK_VARS, type CompiledPaths, type PathRuleConfig, type PathsConfig, type PathVars } from './pathPolicy.js';
import { PolicyValueSchema } from './policyValue.js';
import { compileUrlPattern, compileUrls, type CompiledUrls, type UrlRuleConfig, type UrlsConfig } from './urlPolicy.js';

// Options that write or execute, so the read-only forms below never match them.
const GREP_UNLESS = ['-f*', '--file*', '-e*', '--regexp*', '-[!-]*f*', '-[!-]*e*'];
const GIT_UNLESS = ['--output*', '-o*', '--ext-diff', '--textconv', '--exec-path*', '--upload-pack*'];

/** The built-in read-only commands (R-POL-8), in narrow, statically known forms. */
export const DEFAULT_COMMAND_RULES: readonly CommandRuleConfig[] = Object.freeze([
  { match: 'ls *', decision: 'allow', operands: 'read' },
  { match: 'pwd *', decision: 'allow' },
  { match: 'cat *', decision: 'allow', operands: 'read' },
  { match: 'head *', decision: 'allow', operands: 'read' },
  { match: 'tail *', decision: 'allow', operands: 'read' },
  { match: 'wc *', decision: 'allow', operands: 'read', unless: ['--files0-from*'] },
  { match: 'file *', decision: 'allow', operands: 'read', unless: ['-C', '--compile'] },
  { match: 'stat *', decision: 'allow', operands: 'read' },
  { match: 'grep *', decision: 'allow', operands: 'read-after-first', unless: GREP_UNLESS },
  { match: 'rg *', decision: 'allow', operands: 'read-after-first', unless: [...GREP_UNLESS, '--pre*', '-z', '--search-zip', '-[!-]*z*'] },
  { match: 'find *', decision: 'allow', operands: 'read', unless: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint*', '-fls'] },
  { match: 'sort *', decision: 'allow', operands: 'read', unless: ['-o*', '--output*', '-[!-]*o*', '--compress-program*'] },
  { match: 'git status *', decision: 'allow', unless: GIT_UNLESS },
  { match: 'git diff *', decision: 'allow', unless: GIT_UNLESS },
  { match: 'git log *', decision: 'allow', unless: GIT_UNLESS },
  { match: 'git show *', decision: 'allow', unless: GIT_UNLESS },
  { match: 'git branch', decision: 'allow' },
  { match: 'git branch --show-current', decision: 'allow' },
  { match: 'git branch [-]*[arv]', decision: 'allow', unless: ['-[!-]*[dDmMcCfu]*'] },
  { match: 'which *', decision: 'allow' },
  { match: 'echo *', decision: 'allow' },
  { match: 'printf *', decision: 'allow' },
  { match: 'cd *', decision: 'allow', operands: 'read' },
  // Wrappers as a layer of their own; what they run is judged separately (R-SH-1).
  { match: 'time *', decision: 'allow', unless: ['-o*', '--output*'] },
  { match: 'timeout *', decision: 'allow' },
  { match: 'nice *', decision: 'allow' },
  { match: 'nohup *', decision: 'allow' },
  { match: 'stdbuf *', decision: 'allow' },
  // An agent must not approve, reconfigure or uninstall its own gate (R-POL-8).
  { match: 'assent *', decision: 'deny', except: ['assent pending *', 'assent daemon status *', 'assent policy explain *', 'assent audit *'] },
  { match: 'assent pending *', decision: 'allow' },
  { match: 'assent daemon status *', decision: 'allow' },
  { match: 'assent policy explain *', decision: 'allow' },
  { match: 'assent audit *', decision: 'allow' },
] satisfies CommandRuleConfig[]);

const CREDENTIALS = [
  '~/.ssh/**',
  '~/.aws/**',
  '~/.gnupg/**',
  '~/.config/gh/**',
  '~/.config/gcloud/**',
  '~/.azure/**',
  '~/.kube/config',
  '~/.docker/config.json',
  '~/.npmrc',
  '~/.pypirc',
  '~/.netrc',
  '~/.git-credentials',
  '**/.env',
  '**/.env.!(example)',
  '~/.config/google-chrome/**',
  '~/.config/chromium/**',
  '~/.mozilla/**',
  '~/Library/Application Support/Google/Chrome/**',
  '~/Library/Application Support/Firefox/**',
];

const GATE_FILES = ['${assentHome}/**', '~/.claude/settings*.json', '${cwd}/.claude/settings*.json', '${codexHome}/**', '~/.gemini/settings.json'];

/** Files a shell runs at its next start: a write there is code that runs later. */
const STARTUP_FILES = ['~/.bashrc', '~/.bash_profile', '~/.bash_login', '~/.profile', '~/.zshrc', '~/.zprofile', '~/.zshenv', '~/.config/fish/**'];

/** The built-in path rules (R-POL-8). */
export const DEFAULT_PATH_RULES: readonly PathRuleConfig[] = Object.freeze([
  ...CREDENTIALS.map((glob): PathRuleConfig => ({ glob, access: 'any', decision: 'deny' })),
  ...GATE_FILES.map((glob): PathRuleConfig => ({ glob, access: 'write', decision: 'deny' })),
  ...STARTUP_FILES.map((glob): PathRuleConfig => ({ glob, access: 'write', decision: 'prompt' })),
  { glob: '${cwd}/**', access: 'write', decision: 'allow' },
  // `2>/dev/null` and friends are not file writes anyone reviews.
  { glob: '/dev/{null,stdout,stderr}', access: 'any', decision: 'allow' },
]);


function refineCompiles(compile: () => unknown, path: string, ctx: z.RefinementCtx): void {
  try {
    compile();
  } catch (error) {
    ctx.addIssue({ code: 'custom', path: [path], message: error instanceof Error ? error.message : String(error) });
  }
}

const nonEmpty = (what: string): z.ZodString => z.string({ error: what }).min(1, { error: `${what}; an empty one matches nothing` });

export const CommandRuleSchema = z
  .object(
    {
      match: nonEmpty('a word pattern such as "git status *"'),
      decision: PolicyValueSchema,
      unless: z.array(nonEmpty('a word glob such as "-o*"'), { error: 'an array of word globs' }).optional(),
      except: z.array(nonEmpty('a word pattern'), { error: 'an array of word patterns' }).optional(),
      operands: z.enum(['read', 'read-after-first'], { error: '"read" or "read-after-first"' }).optional(),
    },
    { error: 'an object with "match" and "decision"' },
  )
  .superRefine((rule, ctx) => {
    if (rule.match.trim() === '') {
      ctx.addIssue({ code: 'custom', path: ['match'], message: 'the pattern is blank; name at least the command, e.g. "git status"' });
      return;
    }
    try {
      compileCommandRule(rule, 0);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const at = /^(match|unless\.\d+|except\.\d+): /.exec(message);
      ctx.addIssue({ code: 'custom', path: at === null ? [] : (at[1] as string).split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message: at === null ? message : message.slice(at[0].length) });
    }
  });

export const CommandsSchema = z.object(
  {
    default: PolicyValueSchema.default('prompt'),
    rules: z.array(CommandRuleSchema, { error: 'an array of rules' }).default(() => DEFAULT_COMMAND_RULES.map((rule) => ({ ...rule }))),
  },
  { error: 'an object with "default" and "rules"' },
);

export const PathRuleSchema = z
  .object(
    {
      glob: nonEmpty('a path glob such as "~/.ssh/**"'),
      access: z.enum(['read', 'write', 'any'], { error: '"read", "write" or "any"' }).default('any'),
      decision: PolicyValueSchema,
    },
    { error: 'an object with "glob", "access" and "decision"' },
  )
  .superRefine((rule, ctx) => refineCompiles(() => compilePathGlob(rule.glob, GLOB_CHECK_VARS), 'glob', ctx));

export const PathsSchema = z.object(
  {
    read: PolicyValueSchema.default('allow'),
    write: PolicyValueSchema.default('prompt'),
    rules: z.array(PathRuleSchema, { error: 'an array of rules' }).default(() => DEFAULT_PATH_RULES.map((rule) => ({ ...rule }))),
  },
  { error: 'an object with "read", "write" and "rules"' },
);

export const UrlRuleSchema = z
  .object({ match: nonEmpty('a URL glob such as "https://docs.example.com/*"'), decision: PolicyValueSchema }, { error: 'an object with "match" and "decision"' })
  .superRefine((rule, ctx) => refineCompiles(() => compileUrlPattern(rule.match), 'match', ctx));

export const UrlsSchema = z.object(
  { default: PolicyValueSchema.default('prompt'), rules: z.array(UrlRuleSchema, { error: 'an array of rules' }).default([]) },
  { error: 'an object with "default" and "rules"' },
);

/** The agent-action sections of a validated `policy`. */
export interface AgentPolicyConfig {
  commands: CommandsConfig;
  paths: PathsConfig;
  urls: UrlsConfig;
}

/** Policy for agent actions prepared for evaluation; built once per configuration. */
export interface AgentPolicySnapshot {
  commands: CompiledCommands;
  paths: CompiledPaths;
  urls: CompiledUrls;
  vars: PathVars;
}

/** Compiles the sections; `vars` are the directories the globs' variables stand for on this host. */
export function compileAgentPolicy(policy: AgentPolicyConfig, vars: PathVars): AgentPolicySnapshot {
  return { commands: compileCommands(policy.commands), paths: compilePaths(policy.paths, vars), urls: compileUrls(policy.urls), vars };
}

function ruleText(rule: unknown): string {
  return escapeText(JSON.stringify(rule));
}

/** Reload diff lines for the agent-action sections (R-CFG-4): defaults changed, rules added or removed. */
export function diffAgentPolicy(a: AgentPolicyConfig, b: AgentPolicyConfig): string[] {
  const lines: string[] = [];
  const scalar = (path: string, x: string, y: string): void => {
    if (x !== y) lines.push(`${path}: ${x} → ${y}`);
  };
  scalar('policy.commands.default', a.commands.default, b.commands.default);
  scalar('policy.paths.read', a.paths.read, b.paths.read);
  scalar('policy.paths.write', a.paths.write, b.paths.write);
  scalar('policy.urls.default', a.urls.default, b.urls.default);
  const rules = (path: string, x: readonly unknown[], y: readonly unknown[]): void => {
    const before = x.map(ruleText);
    const after = y.map(ruleText);
    for (const rule of after) if (!before.includes(rule)) lines.push(`${path}: added ${rule}`);
    for (const rule of before) if (!after.includes(rule)) lines.push(`${path}: removed ${rule}`);
  };
  rules('policy.commands.rules', a.commands.rules, b.commands.rules);
  rules('policy.paths.rules', a.paths.rules, b.paths.rules);
  rules('policy.urls.rules', a.urls.rules, b.urls.rules);
  return lines;
}

/** The default agent policy as `assent init` writes it (R-POL-8), so it can be read and edited. */
export function defaultAgentPolicyDocument(): AgentPolicyConfig {
  return {
    commands: { default: 'prompt', rules: DEFAULT_COMMAND_RULES.map((rule) => ({ ...rule })) },
    paths: { read: 'allow', write: 'prompt', rules: DEFAULT_PATH_RULES.map((rule) => ({ ...rule })) },
    urls: { default: 'prompt', rules: [] satisfies UrlRuleConfig[] },
  };
}
