// `policy.commands`, `policy.paths`, `policy.urls` (SPEC §18): their schemas,
// the default policy for agent actions (R-POL-8) that fills a section left out,
// and the snapshot compiled from them once per configuration.
import { canonicalJson } from '../base/canonical.js';
import { z } from 'zod';
import { compileCommandRule, compileCommands, type CommandRuleConfig, type CommandsConfig, type CompiledCommands } from './commandPolicy.js';
import { escapeText } from '../base/escape.js';
import { compilePathGlob, compilePaths, GLOB_CHECK_VARS, type CompiledPaths, type PathRuleConfig, type PathsConfig, type PathVars } from './pathPolicy.js';
import { PolicyValueSchema } from './policyValue.js';
import { compileUrlPattern, compileUrls, type CompiledUrls, type UrlRuleConfig, type UrlsConfig } from './urlPolicy.js';
import { compileWordPattern } from './wordPattern.js';

/** Programs the default policy allows in the forms their model describes (R-SH-6, R-POL-8). */
const MODELLED_DEFAULTS = [
  // read-only
  'ls', 'pwd', 'cat', 'head', 'tail', 'wc', 'file', 'stat', 'grep', 'rg', 'find', 'sort', 'uniq', 'diff', 'cmp', 'du', 'tree',
  'basename', 'dirname', 'realpath', 'date', 'whoami', 'uname', 'which', 'echo', 'printf', 'cd', 'pushd', 'true', 'false', 'sed',
  // local work
  'mkdir', 'touch', 'cp', 'mv', 'git',
  // wrappers, as a layer of their own: what they run is judged separately (R-SH-1)
  'time', 'timeout', 'nice', 'nohup', 'stdbuf',
  // read-only programs that coding agents approve on their own (after the others, so the rules above keep their numbers)
  'cut', 'tr', 'nl', 'paste', 'rev', 'tac', 'numfmt', 'base64', 'fold', 'expand', 'unexpand', 'comm', 'join', 'od',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum', 'seq', 'expr',
  'id', 'hostname', 'df', 'pgrep', 'nproc', 'uptime', 'printenv', 'egrep', 'fgrep', 'fd', 'fdfind', 'jq',
  'test', '[', 'command', 'type', 'gh', 'docker',
];

/** The built-in command rules (R-POL-8): each modelled program in the forms its model accepts, the version forms of the version table, and assent itself. */
export const DEFAULT_COMMAND_RULES: readonly CommandRuleConfig[] = Object.freeze([
  // A name's glob characters are escaped: `[` is the program, not the start of a bracket expression.
  ...MODELLED_DEFAULTS.map((name): CommandRuleConfig => ({ match: `${name.replace(/[\\*?[\]'"]/g, '\\$&')} *`, decision: 'allow', model: name })),
  // Only the programs of the version table (programs/version.ts): the model refuses every other name.
  { match: '* --version', decision: 'allow', model: 'version' },
  { match: '* -V', decision: 'allow', model: 'version' },
  { match: '* -v', decision: 'allow', model: 'version' },
  { match: '* -version', decision: 'allow', model: 'version' },
  // An agent must not approve, reconfigure or uninstall its own gate (R-POL-8).
  { match: 'assent *', decision: 'deny', except: ['assent pending *', 'assent daemon status *', 'assent policy explain *', 'assent audit *'] },
  { match: 'assent *', decision: 'allow', model: 'assent' },
] satisfies CommandRuleConfig[]);

export const CREDENTIALS = [
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
  // A process's environment holds the agent's API keys (env and printenv are refused for that reason), its
  // memory anything it read, its root and cwd and open files reach any file it can (R-POL-8). A command line of
  // another process may carry a token: every process's, since /proc/self resolves to the daemon's own pid here.
  '/proc/*/environ',
  '/proc/*/cmdline',
  '/proc/*/mem',
  '/proc/*/root/**',
  '/proc/*/cwd/**',
  '/proc/*/fd/**',
  '/proc/*/map_files/**',
  '/proc/*/task/*/environ',
  '/proc/*/task/*/cmdline',
  '/proc/*/task/*/mem',
  '/proc/*/task/*/root/**',
  '/proc/*/task/*/cwd/**',
  '/proc/*/task/*/fd/**',
];

/** assent's own state: the journal, the team database URL, the TLS key — no tool or command of an agent touches it (R-POL-8). */
const ASSENT_STATE = ['${assentHome}', '${assentHome}/**'];

/** Agents' settings and hook files: an agent must not rewrite its own gate (R-POL-8). */
const AGENT_SETTINGS = [
  '~/.claude/settings*.json',
  '${cwd}/.claude/settings*.json',
  '${codexHome}/**',
  '~/.gemini/settings.json',
  // OpenCode and Kilo load every plugin file in their config dirs; Copilot CLI, Qwen Code and Factory Droid read their hooks here (R-HOOK-14).
  '~/.config/opencode/**',
  '~/.config/kilo/**',
  '${cwd}/.opencode/**',
  '${cwd}/.kilo/**',
  '~/.copilot/settings.json',
  '~/.copilot/config.json',
  '${cwd}/.github/hooks/**',
  '~/.qwen/settings.json',
  '${cwd}/.qwen/settings.json',
  // Factory Droid reads hooks from hooks.json (and hooks/hooks.json, settings.json's "hooks"); "hooksDisabled" in a settings.json switches them off.
  '~/.factory/hooks.json',
  '~/.factory/hooks/**',
  '~/.factory/settings*.json',
  '${cwd}/.factory/hooks.json',
  '${cwd}/.factory/hooks/**',
  '${cwd}/.factory/settings*.json',
  // Auggie reads hooks from settings.json (and a project's settings.local.json) and from its plugins.
  '~/.augment/settings*.json',
  '~/.augment/plugins/**',
  '${cwd}/.augment/settings*.json',
  // Cline CLI loads plugins and runs hook files from these folders, and starts the MCP servers its data/settings name.
  '~/.cline/plugins/**',
  '~/.cline/hooks/**',
  '~/.cline/data/settings/**',
  '~/Documents/Cline/Plugins/**',
  '~/Documents/Cline/Hooks/**',
  '${cwd}/.cline/**',
  '${cwd}/.clinerules/hooks/**',
];

/**
 * Files that make programs execute (R-SH-9): repository configuration and hooks,
 * and agent and tool configuration a project carries. `**` puts them at any
 * depth, so the cwd and every repository root above it are covered.
 */
export const GATE_FILE_GLOBS: readonly string[] = Object.freeze([
  '**/.git/config',
  '**/.git/hooks/**',
  '**/.git/info/**',
  // A submodule's own git dir and a linked worktree's: their config and hooks are obeyed as the repository's (R-SH-12).
  '**/.git/modules/**',
  '**/.git/worktrees/**',
  '**/.git/config.worktree',
  '**/.git/commondir',
  '**/.gitmodules',
  '**/.mcp.json',
  '**/.claude/**',
  '**/.gemini/**',
  '**/.codex/**',
  '**/.cursor/**',
  '**/.opencode/**',
  '**/.kilo/**',
  '**/.qwen/**',
  '**/.factory/**',
  '**/.augment/**',
  '**/.cline/**',
  '**/.clinerules/**',
  '**/.github/hooks/**',
  '**/.envrc',
  // Editors and tools run these on their own when a person opens or uses the project: a VS Code task with
  // `runOn: folderOpen`, a dev container's lifecycle commands, a husky, pre-commit or lefthook hook, and the
  // package managers' script shell and node options.
  '**/.vscode/tasks.json',
  '**/.vscode/settings.json',
  '**/.vscode/launch.json',
  '**/*.code-workspace',
  '**/.devcontainer/**',
  '**/.devcontainer.json',
  '**/.idea/**',
  '**/.husky/**',
  '**/.pre-commit-config.yaml',
  '**/lefthook.{yml,yaml,json,toml}',
  '**/.lefthook.{yml,yaml,json,toml}',
  '**/lefthook-local.{yml,yaml,json,toml}',
  '**/.lefthook-local.{yml,yaml,json,toml}',
  '**/.lefthook/**',
  '**/.npmrc',
  '**/.yarnrc.yml',
  '**/.yarnrc',
  // git's own configuration in the home directory: a pager or alias set there runs in every repository.
  '~/.gitconfig',
  '~/.config/git/**',
]);

/** Files a shell runs at its next start: a write there is code that runs later. */
const STARTUP_FILES = ['~/.bashrc', '~/.bash_profile', '~/.bash_login', '~/.profile', '~/.zshrc', '~/.zprofile', '~/.zshenv', '~/.config/fish/**'];

/** The built-in path rules (R-POL-8). */
export const DEFAULT_PATH_RULES: readonly PathRuleConfig[] = Object.freeze([
  ...CREDENTIALS.map((glob): PathRuleConfig => ({ glob, access: 'any', decision: 'deny' })),
  ...ASSENT_STATE.map((glob): PathRuleConfig => ({ glob, access: 'any', decision: 'deny' })),
  ...AGENT_SETTINGS.map((glob): PathRuleConfig => ({ glob, access: 'write', decision: 'deny' })),
  ...GATE_FILE_GLOBS.map((glob): PathRuleConfig => ({ glob, access: 'write', decision: 'prompt' })),
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
      model: z.string({ error: 'the name of a program model such as "git"' }).optional(),
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
      const at = /^(match|model|unless\.\d+|except\.\d+): /.exec(message);
      ctx.addIssue({ code: 'custom', path: at === null ? [] : (at[1] as string).split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message: at === null ? message : message.slice(at[0].length) });
    }
  });

/** The rule lists a section left out of config.json got from the built-in defaults (R-POL-8), as the parser made them. */
const BUILT_IN_RULE_LISTS = new WeakSet<object>();

function builtIn<T extends object>(list: T): T {
  BUILT_IN_RULE_LISTS.add(list);
  return list;
}

/**
 * Whether a policy key such as `policy.paths.rules.0` names a rule config.json
 * does not hold: its list was filled from the built-in defaults when the file
 * was parsed (the section was left out), so a message must not say it is in the file.
 */
export function isBuiltInRuleKey(policy: { commands: { rules: object }; paths: { rules: object }; urls: { rules: object } }, key: string): boolean {
  const section = /^policy\.(commands|paths|urls)\.rules\.\d+(?:\s|$)/.exec(key)?.[1] as 'commands' | 'paths' | 'urls' | undefined;
  return section !== undefined && BUILT_IN_RULE_LISTS.has(policy[section].rules);
}

/**
 * Commands that run the project's own code (R-SH-14): the package managers'
 * script runners and the test and build tools of the common ecosystems. A
 * prompt they match may run confined instead, where the agent's hook can
 * rewrite the command and the sandbox works on this host.
 */
export const DEFAULT_CONFINE_PATTERNS: readonly string[] = Object.freeze([
  'npm test *', 'npm t *', 'npm run *', 'npm run-script *', 'npm exec *', 'npm x *', 'npx *',
  'pnpm test *', 'pnpm run *', 'pnpm exec *', 'yarn test *', 'yarn run *', 'yarn exec *', 'bun test *', 'bun run *',
  'node *', 'python *', 'python3 *', 'pytest *', 'python -m pytest *', 'python3 -m pytest *',
  'cargo build *', 'cargo check *', 'cargo test *', 'cargo clippy *', 'go build *', 'go test *', 'go vet *',
  'make *', 'just *', './*.sh *',
]);

const ConfinePatternSchema = nonEmpty('a word pattern such as "npm test *"').superRefine((source, ctx) => {
  try {
    compileWordPattern(source);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
  }
});

export const CommandsSchema = z.object(
  {
    default: PolicyValueSchema.default('prompt'),
    rules: z.array(CommandRuleSchema, { error: 'an array of rules' }).default(() => builtIn(DEFAULT_COMMAND_RULES.map((rule) => ({ ...rule })))),
    networkIntoShell: PolicyValueSchema.default('deny'),
    confine: z.array(ConfinePatternSchema, { error: 'an array of word patterns such as "npm test *"' }).default(() => [...DEFAULT_CONFINE_PATTERNS]),
  },
  { error: 'an object with "default", "rules", "networkIntoShell" and "confine"' },
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
    rules: z.array(PathRuleSchema, { error: 'an array of rules' }).default(() => builtIn(DEFAULT_PATH_RULES.map((rule) => ({ ...rule })))),
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
  scalar('policy.commands.networkIntoShell', a.commands.networkIntoShell ?? 'deny', b.commands.networkIntoShell ?? 'deny');
  scalar('policy.paths.read', a.paths.read, b.paths.read);
  scalar('policy.paths.write', a.paths.write, b.paths.write);
  scalar('policy.urls.default', a.urls.default, b.urls.default);
  // Rules compare as values (canonical JSON): the same rule with its keys in another order is no change.
  const rules = (path: string, x: readonly unknown[], y: readonly unknown[]): void => {
    const before = new Set(x.map((rule) => canonicalJson(rule)));
    const after = new Set(y.map((rule) => canonicalJson(rule)));
    for (const rule of y) if (!before.has(canonicalJson(rule))) lines.push(`${path}: added ${ruleText(rule)}`);
    for (const rule of x) if (!after.has(canonicalJson(rule))) lines.push(`${path}: removed ${ruleText(rule)}`);
  };
  rules('policy.commands.rules', a.commands.rules, b.commands.rules);
  rules('policy.paths.rules', a.paths.rules, b.paths.rules);
  rules('policy.urls.rules', a.urls.rules, b.urls.rules);
  return lines;
}

/** The default agent policy as `assent init` writes it (R-POL-8), so it can be read and edited. */
export function defaultAgentPolicyDocument(): AgentPolicyConfig {
  return {
    commands: { default: 'prompt', rules: DEFAULT_COMMAND_RULES.map((rule) => ({ ...rule })), networkIntoShell: 'deny', confine: [...DEFAULT_CONFINE_PATTERNS] },
    paths: { read: 'allow', write: 'prompt', rules: DEFAULT_PATH_RULES.map((rule) => ({ ...rule })) },
    urls: { default: 'prompt', rules: [] satisfies UrlRuleConfig[] },
  };
}
