// `assent doctor`'s checks for one agent and scope (R-HOOK-7): assent's hooks
// are in the agent's settings, point at this assent, give assent more time
// than it takes, and really block: the installed command is run through
// `sh -c` with a canary event the daemon always denies, running nothing.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkPluginAgent } from './pluginDoctor.js';
import type { AgentReport, CommandRunner, DoctorDependencies, ShellRun } from './doctorCheck.js';
import { checkClineAgent, clineCanaryCommand } from './clineHooks.js';
import { AGENT_TITLES, agentTarget, isHookFileAgent, isPluginAgent, type AgentId, type AgentTarget, type InstallScope, type TargetEnvironment } from './agentTargets.js';
import { asHooksSettings, findAssentHooks, findAssentMcpServer, isAssentEntry, type FoundHook } from './assentEntries.js';
import { codexHookTrust, codexTrustKeys, readCodexHookStates } from './codexHookTrust.js';
import { findCodexMcpBlock } from './codexToml.js';
import { auggieFindings } from './auggieSettings.js';
import { droidFindings } from './droidSettings.js';
import { agentTimeoutSuffices, HOOK_SPAWN_ALLOWANCE_SECONDS, hookMarginSeconds, requiredAgentTimeoutSeconds } from '../../core/agent/hookDeadline.js';
import { parseHookCommand, type AssentInstallation } from './hookCommand.js';
import { isJsonObject, parseSettings, readFileState, resolveSettingsPath, type JsonObject } from './settingsFiles.js';

/** The tool name the daemon always denies (hooks-common interface). */
export const CANARY_TOOL = 'AssentDoctorCanary';
/** Text the daemon's canary denial carries; its absence means the block came from somewhere else (a hook failing closed). */
export const CANARY_REASON_TEXT = 'assent doctor canary';
/** The longest doctor waits for a hook's answer (an auto-spawned daemon included). */
export const CANARY_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 1024 * 1024;

/** `sh -c COMMAND` in a process group of its own, killed whole on timeout; output capped at 1 MiB per stream. */
export const runThroughShell: CommandRunner = (command, input, options) =>
  new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += text;
    });
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ exitCode: null, signal: null, timedOut: false, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      kill();
      resolve({ exitCode, signal, timedOut, stdout, stderr });
    });
    child.stdin.end(input);
  });

/** A before-tool event for the canary tool, in the fields each agent sends (docs/agents-testing.md). */
export function canaryEvent(agent: AgentId, cwd: string, now: Date): JsonObject {
  const common = { session_id: 'assent-doctor', transcript_path: '', cwd };
  switch (agent) {
    case 'claude-code':
      return { ...common, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: CANARY_TOOL, tool_input: {}, tool_use_id: 'assent-doctor-canary' };
    case 'codex':
      return { ...common, turn_id: 'assent-doctor', hook_event_name: 'PreToolUse', model: 'assent-doctor', permission_mode: 'default', tool_name: CANARY_TOOL, tool_input: {}, tool_use_id: 'assent-doctor-canary' };
    case 'gemini':
      return { ...common, hook_event_name: 'BeforeTool', timestamp: now.toISOString(), tool_name: CANARY_TOOL, tool_input: {} };
    case 'qwen':
      return {
        ...common,
        hook_event_name: 'PreToolUse',
        timestamp: now.toISOString(),
        permission_mode: 'default',
        prompt_id: 'assent-doctor',
        tool_name: CANARY_TOOL,
        tool_input: {},
        tool_use_id: 'assent-doctor-canary',
        tool_call_id: 'assent-doctor-canary',
      };
    case 'copilot':
      return { sessionId: 'assent-doctor', timestamp: now.getTime(), cwd, toolName: CANARY_TOOL, toolArgs: {} };
    case 'droid':
      return { ...common, permission_mode: 'auto-high', hook_event_name: 'PreToolUse', tool_name: CANARY_TOOL, tool_input: {} };
    case 'auggie':
      return { hook_event_name: 'PreToolUse', conversation_id: 'assent-doctor', workspace_roots: [cwd], tool_name: CANARY_TOOL, tool_input: {}, tool_output: '[undefined]', tool_error: null, is_mcp_tool: false };
    case 'opencode':
    case 'kilo':
      return { hook_event_name: 'tool.execute.before', session_id: 'assent-doctor', cwd, tool_name: CANARY_TOOL, tool_input: {}, tool_use_id: 'assent-doctor-canary' };
    case 'cline':
      return { taskId: 'assent-doctor', workspaceRoots: [cwd], hookName: 'tool_call', tool_call: { id: 'assent-doctor-canary', name: CANARY_TOOL, input: {} }, preToolUse: { toolName: CANARY_TOOL, parameters: {} } };
  }
}

export interface CanaryVerdict {
  blocks: boolean;
  /** The reason the answer carried (JSON reason, else stderr). */
  reason: string;
  /** Whether the block is the daemon's canary answer (so hook → socket → daemon works). */
  fromDaemon: boolean;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
}

/**
 * Whether the agent would block on this answer, as each CLI was observed to
 * read it: exit 2 blocks everywhere; with exit 0, Claude Code and Codex need
 * `hookSpecificOutput.permissionDecision: "deny"` (or the legacy top-level
 * `decision: "block"`, never both), Gemini CLI `decision: "deny"`. Anything
 * else (exit 1, empty or other output, a timeout) lets Codex and Gemini run
 * the call, so it does not count.
 */
export function judgeCanaryAnswer(agent: AgentId, run: ShellRun): CanaryVerdict {
  const answer = parseJson(run.stdout);
  const json = isJsonObject(answer) ? answer : undefined;
  const specific = isJsonObject(json?.['hookSpecificOutput']) ? (json['hookSpecificOutput'] as JsonObject) : undefined;
  let reason: string;
  let denied: boolean;
  if (agent === 'cline') {
    // Cline reads no exit code: only {"cancel":true} on stdout blocks.
    const denied = json?.['cancel'] === true;
    const said = typeof json?.['errorMessage'] === 'string' ? json['errorMessage'] : '';
    return { blocks: !run.timedOut && denied, reason: said !== '' ? said : run.stderr.trim(), fromDaemon: denied && `${said}\n${run.stderr}`.includes(CANARY_REASON_TEXT) };
  }
  if (agent === 'gemini' || agent === 'opencode' || agent === 'kilo') {
    denied = json?.['decision'] === 'deny';
    reason = typeof json?.['reason'] === 'string' ? json['reason'] : '';
  } else if (agent === 'copilot') {
    // Copilot's own hook style reads the flat fields only.
    denied = json?.['permissionDecision'] === 'deny';
    reason = typeof json?.['permissionDecisionReason'] === 'string' ? json['permissionDecisionReason'] : '';
  } else {
    const modern = specific?.['permissionDecision'] === 'deny';
    const legacy = json?.['decision'] === 'block';
    denied = modern !== legacy && (modern ? json?.['decision'] === undefined : specific === undefined);
    const said = modern ? specific?.['permissionDecisionReason'] : json?.['reason'];
    reason = typeof said === 'string' ? said : '';
  }
  const blocks = !run.timedOut && (run.exitCode === 2 || (run.exitCode === 0 && denied));
  const shown = reason !== '' ? reason : run.stderr.trim();
  return { blocks, reason: shown, fromDaemon: blocks && `${reason}\n${run.stderr}`.includes(CANARY_REASON_TEXT) };
}

/** The caveat doctor's summary carries whenever Codex is installed: what doctor cannot see. */
export const CODEX_TRUST_CAVEAT = "Codex: hooks must be trusted in Codex's /hooks review; doctor cannot check this";

/** The caveat doctor's summary carries whenever Auggie is installed. */
export const AUGGIE_SWITCH_CAVEAT = "Auggie: hooks run only while Augment's server switches them on; doctor reads only what Auggie's log says of its last start (in auggie, /hooks is offered only while they are on)";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function sameFile(a: string, b: string): boolean {
  return resolveSettingsPath(a) === resolveSettingsPath(b);
}

/** Seconds a hook entry's timeout gives assent; undefined when the value is not a positive number. */
function timeoutSecondsOf(target: AgentTarget, hook: FoundHook): number | undefined {
  if (hook.timeout === undefined) return target.defaultTimeoutSeconds;
  if (typeof hook.timeout !== 'number' || !(hook.timeout > 0)) return undefined;
  return target.timeoutUnit === 'milliseconds' ? hook.timeout / 1000 : hook.timeout;
}

/**
 * What is wrong with one entry's timeout (R-HOOK-11): the agent's timeout must
 * leave the hook's margin over a spawn and the whole of hooks.timeoutSeconds,
 * and the command must carry that same timeout, or the hook's deadline is
 * not the agent's.
 */
function timeoutProblemsOf(target: AgentTarget, hook: FoundHook, hookTimeoutSeconds: number, again: string): string[] {
  const name = `the ${hook.event} hook`;
  const seconds = timeoutSecondsOf(target, hook);
  if (seconds === undefined) return [`${name} has the timeout ${JSON.stringify(hook.timeout)}, which is not a positive number; ${again}`];
  const problems: string[] = [];
  const needed = requiredAgentTimeoutSeconds(hookTimeoutSeconds);
  if (!agentTimeoutSuffices(seconds, hookTimeoutSeconds)) {
    problems.push(
      `${name} timeout (${seconds} s) leaves less than the hook's margin (${Number(hookMarginSeconds(seconds).toFixed(1))} s) over hooks.timeoutSeconds (${hookTimeoutSeconds} s) plus ${HOOK_SPAWN_ALLOWANCE_SECONDS} s for starting the daemon: ` +
        `the hook would answer deny before a person's time is up; it needs at least ${needed} s; ${again}`,
    );
  }
  const parsed = parseHookCommand(hook.command);
  if (parsed !== undefined && parsed.timeoutSeconds === undefined) {
    problems.push(`${name} command carries no --timeout, so the hook cannot know ${AGENT_TITLES[target.agent]}'s timeout and assumes the agent's default; ${again}`);
  } else if (parsed?.timeoutSeconds !== undefined && parsed.timeoutSeconds !== seconds) {
    problems.push(
      `${name} command says --timeout ${parsed.timeoutSeconds} but the entry's timeout is ${seconds} s${parsed.timeoutSeconds > seconds ? `: ${AGENT_TITLES[target.agent]} would give up on the hook before it answers${target.agent === 'claude-code' ? '' : ' and run the call'}` : ''}; ${again}`,
    );
  }
  return problems;
}

/** What is wrong with one installed command: not this assent's, or pointing at files that are not there. */
function commandProblems(target: AgentTarget, hook: FoundHook, installation: AssentInstallation, after: boolean): string[] {
  const parsed = parseHookCommand(hook.command);
  const name = `the ${hook.event} hook`;
  if (parsed === undefined) return [`${name} runs ${JSON.stringify(hook.command)}, not a command \`assent install\` writes; run \`assent install ${target.agent}\` to replace it`];
  const problems: string[] = [];
  if (!isExecutable(parsed.node)) problems.push(`${name} runs node at ${parsed.node}, which is not an executable file; run \`assent install ${target.agent}\` again`);
  if (!fs.existsSync(parsed.hookEntry)) problems.push(`${name} runs ${parsed.hookEntry}, which does not exist; run \`assent install ${target.agent}\` again`);
  else if (!sameFile(parsed.hookEntry, installation.hookEntry)) {
    problems.push(`${name} runs another assent (${parsed.hookEntry}), not this one (${installation.hookEntry}); run \`assent install ${target.agent}\` with the assent you mean to use`);
  }
  const agentOk = parsed.agent === target.agent || (target.agent === 'claude-code' && parsed.agent === 'claude');
  if (!agentOk) problems.push(`${name} answers as ${JSON.stringify(parsed.agent)}, not ${target.agent}, so ${AGENT_TITLES[target.agent]} may not read its answer; run \`assent install ${target.agent}\` again`);
  if (parsed.after !== after) problems.push(`${name} ${after ? 'lacks' : 'has'} --after; run \`assent install ${target.agent}\` again`);
  return problems;
}

/** Agent switches in this file that keep every hook from running. */
function disabledProblems(target: AgentTarget, settings: JsonObject, commands: string[]): string[] {
  if (target.agent === 'claude-code' && settings['disableAllHooks'] === true) {
    return ['"disableAllHooks": true in this file turns off every hook, assent\'s too; remove it'];
  }
  if (target.agent === 'gemini') {
    const config = isJsonObject(settings['hooksConfig']) ? settings['hooksConfig'] : undefined;
    if (config?.['enabled'] === false) return ['"hooksConfig.enabled": false in this file turns off every hook, assent\'s too; remove it'];
    const disabled = Array.isArray(config?.['disabled']) ? (config['disabled'] as unknown[]) : [];
    // Gemini CLI names a hook by its `name`, else its command, in that list.
    if (commands.some((command) => disabled.includes(command))) return ['"hooksConfig.disabled" lists assent\'s hook, so Gemini CLI does not run it; remove it from that list'];
  }
  return [];
}

function hasMcp(target: AgentTarget): boolean {
  try {
    const state = readFileState(resolveSettingsPath(target.mcp.file));
    if (!state.exists) return false;
    if (target.mcp.format === 'toml') return findCodexMcpBlock(state.text, target.mcp.file) !== undefined;
    return findAssentMcpServer(parseSettings(target.mcp.file, state.text, target.jsonDialect)) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Codex's trust record of assent's before-tool hook (codexHookTrust.ts): none
 * or switched off is a problem (Codex runs every call without asking assent);
 * a record is a note, since doctor cannot check its hash.
 */
function checkCodexTrust(report: AgentReport, settings: JsonObject, target: AgentTarget, where: TargetEnvironment): void {
  const configFile = agentTarget('codex', 'user', where).mcp.file;
  const keys = [...new Set([report.settingsPath, target.hooksFile])].flatMap((file) => codexTrustKeys(settings, file, target.events.before, isAssentEntry));
  let states: ReturnType<typeof readCodexHookStates>;
  try {
    const state = readFileState(resolveSettingsPath(configFile));
    states = readCodexHookStates(state.exists ? state.text : '', configFile);
  } catch (error) {
    report.codexTrust = 'unreadable';
    report.notes.push(`${configFile} could not be read (${error instanceof Error ? error.message : String(error)}), so doctor cannot see whether you trusted assent's hook in Codex's /hooks review.`);
    return;
  }
  const found = keys.map((key) => codexHookTrust(states, key));
  const review = "open codex, type /hooks and trust assent's hook (until then Codex runs every call without asking assent, and `codex exec` says nothing about it)";
  if (found.some((trust) => trust.state === 'disabled')) {
    report.codexTrust = 'disabled';
    report.problems.push(`assent's ${target.events.before} hook is switched off in Codex's /hooks review (enabled = false in ${configFile}): Codex runs every tool call without asking assent; ${review}`);
  } else if (!found.some((trust) => trust.state === 'recorded')) {
    report.codexTrust = 'missing';
    report.problems.push(`Codex has no trust record for assent's ${target.events.before} hook (no [hooks.state."${keys[0] ?? `${report.settingsPath}:pre_tool_use:…`}"] in ${configFile}): Codex runs every tool call without asking assent; ${review}`);
  } else {
    report.codexTrust = 'recorded';
    report.notes.push(`Codex has a trust record for assent's hook in ${configFile}; doctor cannot check that it matches the hook as installed now: if /hooks in codex lists it as modified, trust it again.`);
  }
}

function notesFor(target: AgentTarget, cwd: string): string[] {
  if (target.agent === 'copilot') {
    const repoHooks = path.join(cwd, '.github', 'hooks');
    return [
      `Copilot CLI always loads the hooks in ${target.hooksFile}; hooks in a repository's .github/hooks load only in a folder it trusts (or with --trust-folder), and doctor does not check those${fs.existsSync(repoHooks) ? ` (this folder has ${repoHooks})` : ''}.`,
    ];
  }
  return [];
}

/** Checks one agent in one scope; never throws for what it finds, only reports it. */
export async function checkAgent(agent: AgentId, scope: InstallScope, deps: DoctorDependencies): Promise<AgentReport> {
  const target = agentTarget(agent, scope, deps.where);
  if (isPluginAgent(agent)) return checkPluginAgent(target, deps);
  if (isHookFileAgent(agent)) {
    return checkClineAgent(target, deps, async (file) => {
      const run = await deps.run(clineCanaryCommand(file), `${JSON.stringify(canaryEvent(agent, deps.where.cwd, deps.now()))}\n`, { cwd: deps.where.cwd, env: deps.where.env, timeoutMs: CANARY_TIMEOUT_MS });
      return judgeCanaryAnswer(agent, run);
    });
  }
  const file = resolveSettingsPath(target.hooksFile);
  const report: AgentReport = { agent, scope, installed: false, settingsPath: file, command: null, timeoutOk: false, blocksCanary: false, mcp: hasMcp(target), problems: [], notes: [] };
  const recorded = deps.records[file]?.kinds.includes('hooks') === true;
  let settings: JsonObject;
  try {
    const state = readFileState(file);
    if (!state.exists) {
      if (recorded) report.problems.push(`assent install wrote hooks into ${file}, but the file is gone: ${AGENT_TITLES[agent]} runs every tool call without asking assent; run \`assent install ${agent}${scope === 'project' ? ' --scope project' : ''}\` again`);
      return report;
    }
    settings = parseSettings(file, state.text, target.jsonDialect);
  } catch (error) {
    report.installed = recorded;
    report.problems.push(`${error instanceof Error ? error.message : String(error)}; ${AGENT_TITLES[agent]} skips a settings file it cannot read, so none of its hooks run`);
    return report;
  }
  const found = findAssentHooks(asHooksSettings(target, settings));
  const before = found.filter((hook) => hook.event === target.events.before);
  const after = found.filter((hook) => hook.event === target.events.after);
  const dialog = found.filter((hook) => target.events.dialog !== undefined && hook.event === target.events.dialog);
  report.installed = found.length > 0;
  const again = `run \`assent install ${agent}${scope === 'project' ? ' --scope project' : ''}\``;
  if (!report.installed) {
    if (recorded) report.problems.push(`assent's hooks were removed from ${file} by hand: ${AGENT_TITLES[agent]} runs every tool call without asking assent; ${again} to put them back, or \`assent uninstall ${agent}\` to forget them`);
    return report;
  }
  if (agent === 'codex') checkCodexTrust(report, settings, target, deps.where);
  if (agent === 'droid') {
    const droid = droidFindings(target, file, settings, deps.where.cwd);
    report.problems.push(...droid.problems);
    report.notes.push(...droid.notes);
  }
  if (agent === 'auggie') {
    const auggie = auggieFindings(deps.where);
    report.auggieHooks = auggie.state;
    report.problems.push(...auggie.problems);
    report.notes.push(...auggie.notes);
  }
  report.notes.push(...notesFor(target, deps.where.cwd));
  report.command = before[0]?.command ?? null;
  if (before.length === 0) report.problems.push(`no ${target.events.before} hook: ${AGENT_TITLES[agent]} runs every tool call without asking assent; ${again}`);
  if (after.length === 0) report.problems.push(`no ${target.events.after} hook: the outcome of allowed calls is not recorded in the audit log; ${again}`);
  if (target.events.dialog !== undefined) {
    if (deps.claudeNativePrompt === true && dialog.length === 0 && before.length > 0) {
      report.problems.push(`hooks.claudeNativePrompt is on, but there is no ${target.events.dialog} hook: an answer given in \`assent approve\`, \`assent watch\` or the web page cannot close ${AGENT_TITLES[agent]}'s own dialog; ${again}`);
    }
    if (deps.claudeNativePrompt !== true && dialog.length > 0) {
      report.problems.push(`a ${target.events.dialog} hook of assent is installed, but hooks.claudeNativePrompt is off: it would refuse every dialog ${AGENT_TITLES[agent]} opens on its own; ${again} to remove it`);
    }
  }
  for (const hook of found.filter((h) => h.event !== target.events.before && h.event !== target.events.after && h.event !== target.events.dialog)) {
    report.problems.push(`an assent hook sits under ${JSON.stringify(hook.event)}, an event assent does not install; ${again}`);
  }
  for (const hook of before) {
    if (hook.matcher !== undefined && !target.allToolsMatchers.includes(hook.matcher as string)) {
      report.problems.push(`the ${target.events.before} hook matches only ${JSON.stringify(hook.matcher)}, so other tools run without asking assent; ${again}`);
    }
  }
  for (const hook of [...before, ...after, ...dialog]) report.problems.push(...commandProblems(target, hook, deps.installation, hook.event === target.events.after));
  const timeoutProblems = [...before, ...after, ...dialog].flatMap((hook) => timeoutProblemsOf(target, hook, deps.hookTimeoutSeconds, again));
  report.timeoutOk = before.length + after.length > 0 && timeoutProblems.length === 0;
  report.problems.push(...timeoutProblems);
  report.problems.push(...disabledProblems(target, settings, found.flatMap((hook) => (typeof hook.name === 'string' ? [hook.name, hook.command] : [hook.command]))));
  const canary = before[0];
  if (canary !== undefined) {
    const run = await deps.run(canary.command, `${JSON.stringify(canaryEvent(agent, deps.where.cwd, deps.now()))}\n`, {
      cwd: deps.where.cwd,
      env: deps.where.env,
      timeoutMs: Math.min(CANARY_TIMEOUT_MS, (timeoutSecondsOf(target, canary) ?? 30) * 1000),
    });
    const verdict = judgeCanaryAnswer(agent, run);
    report.blocksCanary = verdict.blocks;
    const outcome = run.timedOut ? 'did not answer in time' : `exited ${run.exitCode === null ? `on ${run.signal ?? 'an error'}` : run.exitCode}`;
    const said = verdict.reason === '' ? (run.stdout.trim() === '' ? 'no output' : `output ${JSON.stringify(run.stdout.trim().slice(0, 200))}`) : JSON.stringify(verdict.reason.slice(0, 200));
    if (!verdict.blocks) report.problems.push(`the installed hook did not block the canary call (it ${outcome}, ${said}): ${AGENT_TITLES[agent]} would run the call; ${again}`);
    else if (!verdict.fromDaemon) report.problems.push(`the hook blocked the canary, but not with the daemon's answer (${said}): it fails closed, so every tool call is refused; check \`assent daemon status\``);
  }
  return report;
}

/** The scopes doctor looks at: the user's, and the project's in the cwd when its settings file exists and is another file. */
export function scopesToCheck(agent: AgentId, where: TargetEnvironment): InstallScope[] {
  // Copilot CLI has no project scope assent installs into (its repository hooks need a trusted folder).
  if (agent === 'copilot') return ['user'];
  const user = resolveSettingsPath(agentTarget(agent, 'user', where).hooksFile);
  const project = resolveSettingsPath(agentTarget(agent, 'project', where).hooksFile);
  return project !== user && fs.existsSync(project) ? ['user', 'project'] : ['user'];
}

/** A report is fine when it is not installed and nothing is amiss, or installed with no problem. */
export function reportIsFine(report: AgentReport): boolean {
  return report.problems.length === 0;
}
