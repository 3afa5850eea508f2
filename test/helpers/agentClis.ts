// The real agent CLIs (Claude Code, Codex, Gemini CLI; OpenCode, Kilo Code,
// Copilot CLI and Qwen Code through agentClisMore.ts, Factory Droid through
// agentClisDroid.ts, Auggie through agentClisAuggie.ts, Cline through
// agentClisCline.ts) from test/agents, run
// headless and offline: a fresh temp HOME per run, a fake model on 127.0.0.1,
// the given hooks and MCP servers, no other connection, a bounded lifetime.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { processesWithEnv, REPO_ROOT } from './daemon.js';
import type { AnyModelWire, FakeModel, RecordedRequest } from './fakeModels.js';
import { MORE_AGENT_NAMES, moreInstalls, prepareMore, type MoreAgentName } from './agentClisMore.js';
import { droidInstall, prepareDroid } from './agentClisDroid.js';
import { auggieInstall, prepareAuggie } from './agentClisAuggie.js';
import { clineInstall, prepareCline } from './agentClisCline.js';

export type AgentName = 'claude' | 'codex' | 'gemini';

export const AGENT_NAMES: readonly AgentName[] = ['claude', 'codex', 'gemini'];

/** Every CLI the harness runs: the three above, the six Chat Completions ones, and Auggie (Augment's own API). */
export type AnyAgentName = AgentName | MoreAgentName | 'droid' | 'auggie' | 'cline';

export const AGENTS_DIR = join(REPO_ROOT, 'test', 'agents');

export const AGENT_CLIS_SKIP_REASON = 'test/agents not installed: run scripts/installAgentClis.sh';

/** The wire each CLI speaks to its model. */
export const AGENT_WIRE = {
  claude: 'anthropic',
  codex: 'openai',
  gemini: 'gemini',
  opencode: 'chat',
  kilo: 'chat',
  copilot: 'chat',
  qwen: 'chat',
  droid: 'chat',
  auggie: 'augment',
  cline: 'chat',
} as const satisfies Record<AnyAgentName, AnyModelWire>;

/** The before-tool and after-tool hook events of each CLI. */
export const AGENT_EVENTS: Record<AgentName, { before: string; after: string }> = {
  claude: { before: 'PreToolUse', after: 'PostToolUse' },
  codex: { before: 'PreToolUse', after: 'PostToolUse' },
  gemini: { before: 'BeforeTool', after: 'AfterTool' },
};

export interface CliInstall {
  packageName: string;
  /** Packages whose installed version must equal the locked one (the CLI and its Linux x64 native part). */
  lockedPackages: string[];
  /** The file that is run; must exist. */
  entry: string;
  /** argv: the program, then its leading arguments. */
  argv: string[];
}

const modules = join(AGENTS_DIR, 'node_modules');
const CODEX_VENDOR = join(modules, '@openai', 'codex-linux-x64', 'vendor', 'x86_64-unknown-linux-musl', 'bin', 'codex');

// Claude Code runs its native binary straight from the platform package, so a
// skipped postinstall (which copies it over bin/claude.exe) does not matter.
const INSTALLS: Record<AnyAgentName, CliInstall> = {
  ...moreInstalls(modules),
  droid: droidInstall(modules),
  auggie: auggieInstall(modules),
  cline: clineInstall(modules),
  claude: {
    packageName: '@anthropic-ai/claude-code',
    lockedPackages: ['@anthropic-ai/claude-code', '@anthropic-ai/claude-code-linux-x64'],
    entry: join(modules, '@anthropic-ai', 'claude-code-linux-x64', 'claude'),
    argv: [join(modules, '@anthropic-ai', 'claude-code-linux-x64', 'claude')],
  },
  codex: {
    packageName: '@openai/codex',
    lockedPackages: ['@openai/codex', '@openai/codex-linux-x64'],
    entry: CODEX_VENDOR,
    argv: [process.execPath, join(modules, '@openai', 'codex', 'bin', 'codex.js')],
  },
  gemini: {
    packageName: '@google/gemini-cli',
    lockedPackages: ['@google/gemini-cli'],
    entry: join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
    argv: [process.execPath, join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js')],
  },
};

/** Claude Code's native binary, for a run in its interactive TUI (in a PTY). */
export const CLAUDE_BINARY = INSTALLS.claude.entry;

/** The offline environment Claude Code needs against a fake model (AGENT-CLIS.md), without HOME, PATH or proxies. */
export function claudeOfflineEnv(home: string, model: FakeModel): Record<string, string> {
  return {
    CLAUDE_CODE_TMPDIR: join(home, 'tmp'),
    ANTHROPIC_BASE_URL: model.baseUrl,
    ANTHROPIC_API_KEY: 'fake-key',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** What is wrong with the install of test/agents: one line per problem, empty when every CLI is there at its locked version. */
export function agentCliProblems(agents: readonly AnyAgentName[] = AGENT_NAMES): string[] {
  if (process.platform !== 'linux' || process.arch !== 'x64') return [`the agent CLI tests run on linux x64 only (this is ${process.platform} ${process.arch})`];
  const lock = readJson(join(AGENTS_DIR, 'package-lock.json'));
  const packages = (lock?.['packages'] ?? {}) as Record<string, { version?: string }>;
  const problems: string[] = [];
  for (const agent of agents) {
    const install = INSTALLS[agent];
    for (const name of install.lockedPackages) {
      const locked = packages[`node_modules/${name}`]?.version;
      const installed = readJson(join(modules, name, 'package.json'))?.['version'];
      if (locked === undefined) problems.push(`${agent}: ${name} is not in test/agents/package-lock.json`);
      else if (installed !== locked) problems.push(`${agent}: ${name} is ${installed === undefined ? 'missing' : `at ${String(installed)}`}, locked at ${locked}`);
    }
    if (!existsSync(install.entry)) problems.push(`${agent}: ${install.entry} is missing`);
  }
  return problems;
}

/**
 * Whether the agent CLIs are installed at their locked versions. CI must run the
 * agent tests, so under CI=true a missing install throws instead of answering
 * false (the test file then fails rather than skipping).
 */
export function agentClisAvailable(agents?: readonly AnyAgentName[]): boolean {
  const problems = agentCliProblems(agents);
  if (problems.length === 0) return true;
  if (process.env['CI'] === 'true') throw new Error(`${AGENT_CLIS_SKIP_REASON} (${problems.join('; ')})`);
  return false;
}

let straceCheck: { problem: string | undefined } | undefined;

/** Why `strace -f` cannot trace a child here (it is missing, or ptrace is not allowed, on some machines), or undefined when it can. */
export function straceProblem(): string | undefined {
  straceCheck ??= (() => {
    const probe = spawnSync('strace', ['-f', '-qq', '-e', 'trace=connect', '-o', '/dev/null', 'true'], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    if (probe.error !== undefined) return { problem: `strace could not be started (${probe.error.message}); scripts/installAgentClis.sh installs it (apt-get install strace)` };
    if (probe.status !== 0) return { problem: `strace cannot trace a child here (exit ${String(probe.status)}: ${probe.stderr.trim().split('\n')[0] ?? ''}); ptrace must be allowed` };
    return { problem: undefined };
  })();
  return straceCheck.problem;
}

/** Whether `strace -f` can trace a child here. */
export function straceAvailable(): boolean {
  return straceProblem() === undefined;
}

/**
 * Whether the strace tests run. Under CI=true always: CI must prove there are
 * no outbound connections, so a strace that is missing or cannot trace fails
 * those tests (runAgent names why) instead of skipping them in silence.
 * Elsewhere only where strace works.
 */
export function straceTestsRun(env: NodeJS.ProcessEnv = process.env, problem: () => string | undefined = straceProblem): boolean {
  return env['CI'] === 'true' || problem() === undefined;
}

export interface McpServerSpec {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  /** Codex only: how long it waits for the server to start (`startup_timeout_sec`, default 10 s; a loaded machine may need more). */
  startupTimeoutSec?: number;
}

export interface AgentRunOptions {
  /** The fake model the CLI talks to; its wire must be the CLI's. */
  model: FakeModel;
  /** The working directory of the agent (the caller creates and removes it). */
  cwd: string;
  prompt?: string;
  /** One hook command per event name, in the CLI's own event names (`PreToolUse`, `BeforeTool`…); matches every tool. */
  hooks?: Record<string, string>;
  /** Written as each hook's timeout (converted to the CLI's unit); left out, the CLI's default applies. */
  hookTimeoutSeconds?: number;
  mcpServers?: Record<string, McpServerSpec>;
  /** Extra environment for the CLI (and so for its hooks and MCP servers). */
  env?: Record<string, string>;
  /** The whole run is killed after this (default 60 s). */
  timeoutMs?: number;
  /** Runs the CLI under `strace -f -e trace=connect` and reports every inet connection (needs straceAvailable()). */
  traceConnections?: boolean;
  /**
   * Called with the temp HOME after the harness has written its settings and
   * before the CLI starts, e.g. to run `assent install <agent>` into it; the
   * settings files are then what the CLI reads ($HOME/.claude/settings.json,
   * $HOME/.codex (CODEX_HOME), $HOME/.gemini/settings.json).
   */
  prepareHome?: (home: string) => void | Promise<void>;
  /** Called with the temp HOME after the CLI ended and before the HOME is removed, e.g. to read what the CLI recorded there. */
  inspectHome?: (home: string) => void;
  /** Claude Code only: replaces `--output-format json` (e.g. stream-json with `--verbose --include-hook-events`). */
  claudeOutputArgs?: string[];
  /** Called with the temp HOME after the CLI ended and before the HOME is removed (e.g. to run `assent doctor` in it). */
  afterRun?: (home: string) => void | Promise<void>;
}

export interface InetConnection {
  address: string;
  port: number;
}

export interface AgentRun {
  agent: AnyAgentName;
  /** The temp HOME the run had; already removed when the run returns. */
  home: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The requests the fake model received during this run. */
  requests: RecordedRequest[];
  /** Requests that reached the trap the proxy variables point at: an attempt to reach anything but the fake model. */
  proxied: string[];
  /** With traceConnections: every AF_INET/AF_INET6 connect() of the CLI and its children. */
  connections: InetConnection[] | undefined;
  /** With traceConnections: the connections to anything other than the fake model and the proxy trap. */
  outbound: InetConnection[] | undefined;
}

export interface Launch {
  argv: string[];
  env: Record<string, string>;
}

type Json = Record<string, unknown>;

const MAX_OUTPUT_CHARS = 8 * 1024 * 1024;

/** Claude Code and Codex share one settings shape; Gemini's differs only in the matcher (a regex) and timeout unit (ms). */
function hookSettings(hooks: Record<string, string>, matcher: string, timeout: number | undefined): Json {
  return Object.fromEntries(
    Object.entries(hooks).map(([event, command]) => [event, [{ matcher, hooks: [{ type: 'command', command, ...(timeout === undefined ? {} : { timeout }) }] }]]),
  );
}

function mcpJson(servers: Record<string, McpServerSpec>): Json {
  return Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, { command: s.command, args: s.args ?? [], ...(s.env === undefined ? {} : { env: s.env }) }]));
}

/** A TOML basic string (JSON's escapes are a subset TOML accepts). */
const tomlString = (value: string): string => JSON.stringify(value);

function prepareClaude(home: string, options: AgentRunOptions, prompt: string): Launch {
  mkdirSync(join(home, '.claude'), { recursive: true });
  const settings = { hooks: hookSettings(options.hooks ?? {}, '*', options.hookTimeoutSeconds) };
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify(settings, null, 2));
  const args = ['-p', prompt, ...(options.claudeOutputArgs ?? ['--output-format', 'json'])];
  if (options.mcpServers !== undefined) {
    const file = join(home, 'mcp.json');
    writeFileSync(file, JSON.stringify({ mcpServers: mcpJson(options.mcpServers) }, null, 2));
    args.push('--mcp-config', file, '--strict-mcp-config');
  }
  return {
    argv: [...INSTALLS.claude.argv, ...args],
    env: {
      CLAUDE_CODE_TMPDIR: join(home, 'tmp'),
      ANTHROPIC_BASE_URL: options.model.baseUrl,
      ANTHROPIC_API_KEY: 'fake-key',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  };
}

/** Writes Codex's offline config.toml and hooks.json into `home`/.codex; returns its `codex exec` launch. */
export function prepareCodex(home: string, options: AgentRunOptions, prompt: string): Launch {
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  const lines = [
    'model = "gpt-5"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${tomlString(`${options.model.baseUrl}/v1`)}`,
    'env_key = "FAKE_API_KEY"',
    'wire_api = "responses"',
    '',
    // Without these Codex looks up its plugin and app catalogs (a DNS query was seen).
    '[features]',
    'plugins = false',
    'apps = false',
    'remote_plugin = false',
    '',
    '[analytics]',
    'enabled = false',
  ];
  for (const [name, server] of Object.entries(options.mcpServers ?? {})) {
    lines.push('', `[mcp_servers.${tomlString(name)}]`, `command = ${tomlString(server.command)}`, `args = [${(server.args ?? []).map(tomlString).join(', ')}]`);
    if (server.startupTimeoutSec !== undefined) lines.push(`startup_timeout_sec = ${server.startupTimeoutSec}`);
    if (server.env !== undefined) {
      lines.push(`[mcp_servers.${tomlString(name)}.env]`, ...Object.entries(server.env).map(([key, value]) => `${tomlString(key)} = ${tomlString(value)}`));
    }
  }
  writeFileSync(join(codexHome, 'config.toml'), `${lines.join('\n')}\n`);
  writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: hookSettings(options.hooks ?? {}, '*', options.hookTimeoutSeconds) }, null, 2));
  return {
    // Without --dangerously-bypass-hook-trust, hooks nobody has reviewed do not run at all (and the call runs).
    argv: [...INSTALLS.codex.argv, 'exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--json', prompt],
    env: { CODEX_HOME: codexHome, FAKE_API_KEY: 'fake-key' },
  };
}

function prepareGemini(home: string, options: AgentRunOptions, prompt: string): Launch {
  mkdirSync(join(home, '.gemini'), { recursive: true });
  const settings: Json = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    // Without this Gemini CLI resolves play.googleapis.com for usage statistics.
    privacy: { usageStatisticsEnabled: false },
    hooks: hookSettings(options.hooks ?? {}, '.*', options.hookTimeoutSeconds === undefined ? undefined : options.hookTimeoutSeconds * 1000),
  };
  if (options.mcpServers !== undefined) settings['mcpServers'] = mcpJson(options.mcpServers);
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    // Without yolo, headless Gemini does not offer the shell tool at all.
    argv: [...INSTALLS.gemini.argv, '-p', prompt, '--output-format', 'json', '--approval-mode=yolo'],
    env: { GEMINI_API_KEY: 'fake-key', GOOGLE_GEMINI_BASE_URL: options.model.baseUrl, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
  };
}

const PREPARE: Record<AnyAgentName, (home: string, options: AgentRunOptions, prompt: string) => Launch> = {
  claude: prepareClaude,
  codex: prepareCodex,
  gemini: prepareGemini,
  droid: (home, options, prompt) => prepareDroid(INSTALLS.droid, home, options, prompt),
  auggie: (home, options, prompt) => prepareAuggie(INSTALLS.auggie, home, options, prompt),
  cline: (home, options, prompt) => prepareCline(INSTALLS.cline, home, options, prompt),
  ...(Object.fromEntries(MORE_AGENT_NAMES.map((agent) => [agent, (home: string, options: AgentRunOptions, prompt: string) => prepareMore(agent, INSTALLS[agent], home, options, prompt)])) as Record<
    MoreAgentName,
    (home: string, options: AgentRunOptions, prompt: string) => Launch
  >),
};

/** An HTTP proxy that refuses everything and writes down what was asked of it. */
async function startProxyTrap(): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.writeHead(403);
    res.end('blocked by the agent test harness');
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    hits.push(`CONNECT ${req.url ?? ''}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** inet connect() calls in an `strace -f -e trace=connect` log. */
export function parseConnections(log: string): InetConnection[] {
  const found: InetConnection[] = [];
  for (const line of log.split('\n')) {
    const v4 = /sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line);
    if (v4) found.push({ address: v4[2] as string, port: Number(v4[1]) });
    const v6 = /sa_family=AF_INET6, sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
    if (v6) found.push({ address: v6[2] as string, port: Number(v6[1]) });
  }
  return found;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

export function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/**
 * Runs one agent CLI headless against `options.model` and returns what it did.
 * The CLI gets a fresh temp HOME (removed afterwards), an environment built from
 * scratch (PATH, locale, the CLI's offline settings, proxy variables pointing at
 * a trap), and its own process group, which is killed when the run ends or
 * times out; any process still carrying the run's HOME is killed after, so no
 * child outlives the run.
 */
export async function runAgent(agent: AnyAgentName, options: AgentRunOptions): Promise<AgentRun> {
  if (options.model.wire !== AGENT_WIRE[agent]) throw new Error(`${agent} speaks ${AGENT_WIRE[agent]}, the fake model given speaks ${options.model.wire}`);
  const traceProblem = options.traceConnections === true ? straceProblem() : undefined;
  if (traceProblem !== undefined) throw new Error(`traceConnections needs a working strace: ${traceProblem}`);
  const home = mkdtempSync(join(tmpdir(), `assent-agent-${agent}-`));
  mkdirSync(join(home, 'tmp'));
  const trap = await startProxyTrap();
  const requestsBefore = options.model.requests.length;
  try {
    const launch = PREPARE[agent](home, options, options.prompt ?? 'Run the tool.');
    await options.prepareHome?.(home);
    const proxy = `http://127.0.0.1:${trap.port}`;
    const loopback = '127.0.0.1,localhost,::1';
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: join(home, 'tmp'),
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      NO_COLOR: '1',
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      ALL_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      all_proxy: proxy,
      NO_PROXY: loopback,
      no_proxy: loopback,
      ...launch.env,
      ...options.env,
    };
    const traceLog = join(home, 'connect.strace');
    const argv = options.traceConnections === true ? ['strace', '-f', '-qq', '-e', 'trace=connect', '-o', traceLog, ...launch.argv] : launch.argv;
    const result = await spawnBounded(argv, { cwd: options.cwd, env, timeoutMs: options.timeoutMs ?? 60_000 });
    await options.afterRun?.(home);
    const connections = options.traceConnections === true ? parseConnections(existsSync(traceLog) ? readFileSync(traceLog, 'utf8') : '') : undefined;
    options.inspectHome?.(home);
    const expected = new Set([options.model.port, trap.port]);
    return {
      agent,
      home,
      ...result,
      requests: options.model.requests.slice(requestsBefore),
      proxied: [...trap.hits],
      connections,
      outbound: connections?.filter((c) => !(c.address === '127.0.0.1' && expected.has(c.port))),
    };
  } finally {
    // Claude Code and Codex start each hook in a session of its own, out of reach
    // of the group kill, and a stopped Codex leaves its hooks running: whatever
    // still carries this HOME goes now.
    for (const pid of processesWithEnv(`HOME=${home}`)) killProcess(pid);
    await trap.close();
    rmSync(home, { recursive: true, force: true });
  }
}

export const runClaude = (options: AgentRunOptions): Promise<AgentRun> => runAgent('claude', options);
export const runCodex = (options: AgentRunOptions): Promise<AgentRun> => runAgent('codex', options);
export const runGemini = (options: AgentRunOptions): Promise<AgentRun> => runAgent('gemini', options);

interface Spawned {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** Runs argv in its own process group with stdin closed; SIGTERM then SIGKILL to the group on timeout; SIGKILL to the group after exit. */
function spawnBounded(argv: string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = argv as [string, ...string[]];
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (stdout.length < MAX_OUTPUT_CHARS) stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < MAX_OUTPUT_CHARS) stderr += text;
    });
    let hardKill: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      hardKill = setTimeout(() => killGroup(child.pid, 'SIGKILL'), 2_000);
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      reject(error);
    });
    child.on('exit', (exitCode, signal) => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      // Whatever the CLI left behind (MCP servers, hooks, shells) goes with it.
      killGroup(child.pid, 'SIGKILL');
      // A grandchild outside the group may still hold the pipes: do not wait for them forever.
      const finish = (): void => resolve({ exitCode, signal, timedOut, stdout, stderr });
      const grace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, 2_000);
      child.once('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}
