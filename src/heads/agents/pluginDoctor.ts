// `assent doctor` for OpenCode and Kilo Code (R-HOOK-14): the plugin file is
// assent's, unchanged since install, points at this assent with a deadline that
// leaves time for a person, loads, and blocks the canary when loaded the way the
// agent loads it (in a child process, so a broken file cannot hang doctor).
// What doctor cannot see — a run with --pure, a load error the agent swallowed —
// the load marker only hints at; the report says so.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CANARY_TOOL } from '../../core/agent/agentAction.js';
import { AGENT_TITLES, type AgentTarget } from './agentTargets.js';
import { doubleQuote } from './hookCommand.js';
import type { AgentReport, DoctorDependencies } from './doctorCheck.js';
import { digestText } from './installRecords.js';
import { agentTimeoutSuffices, HOOK_SPAWN_ALLOWANCE_SECONDS, hookMarginSeconds } from '../../core/agent/hookDeadline.js';
import { isAssentPlugin, LOAD_MARKER_NAME, pluginText, readPluginSettings } from './pluginFile.js';
import { readFileState, resolveSettingsPath } from './settingsFiles.js';

/** Words the daemon's canary denial carries (as hookDoctor's CANARY_REASON_TEXT). */
const CANARY_WORDS = 'assent doctor canary';

/** The longest doctor waits for the plugin to load and answer the canary. */
const PLUGIN_CHECK_TIMEOUT_MS = 30_000;

/**
 * Loads the plugin named by ASSENT_DOCTOR_PLUGIN as the agent would and calls
 * its before-hook with the canary. The agent's runtime (Bun) loads a `.js`
 * plugin as an ES module whatever a package.json beside it says; Node would
 * not, so the text is loaded from a private `.mjs` copy.
 */
const CHECK_SCRIPT = `
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const out = (value) => process.stdout.write(JSON.stringify(value));
const dir = mkdtempSync(join(tmpdir(), 'assent-doctor-plugin-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
let hooks;
try {
  const copy = join(dir, 'plugin.mjs');
  copyFileSync(process.env.ASSENT_DOCTOR_PLUGIN, copy);
  const loaded = await import(pathToFileURL(copy).href);
  hooks = await loaded.AssentPlugin({ directory: process.cwd(), assentDoctor: true });
  if (typeof hooks?.['tool.execute.before'] !== 'function') throw new Error('its factory returns no tool.execute.before hook');
} catch (error) {
  out({ loaded: false, message: String(error?.message ?? error) });
  process.exit(0);
}
try {
  await hooks['tool.execute.before']({ tool: ${JSON.stringify(CANARY_TOOL)}, sessionID: 'assent-doctor', callID: 'assent-doctor-canary' }, { args: {} });
  out({ loaded: true, threw: false });
} catch (error) {
  out({ loaded: true, threw: true, message: String(error?.message ?? error) });
}
`;

interface PluginCheck {
  loaded?: boolean;
  threw?: boolean;
  message?: string;
}

function parseCheck(stdout: string): PluginCheck | undefined {
  try {
    const value = JSON.parse(stdout.trim()) as unknown;
    return typeof value === 'object' && value !== null ? (value as PluginCheck) : undefined;
  } catch {
    return undefined;
  }
}

/** The load marker beside the plugin: when the agent last loaded it, or undefined. */
function lastLoad(file: string): { loadedAt: string; pid?: number } | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(path.dirname(file), LOAD_MARKER_NAME), 'utf8')) as { loadedAt?: unknown; pid?: unknown };
    if (typeof value.loadedAt !== 'string') return undefined;
    return typeof value.pid === 'number' ? { loadedAt: value.loadedAt, pid: value.pid } : { loadedAt: value.loadedAt };
  } catch {
    return undefined;
  }
}

/** Checks one plugin install; never throws for what it finds, only reports it. */
export async function checkPluginAgent(target: AgentTarget, deps: DoctorDependencies): Promise<AgentReport & { pluginLoadedAt: string | null }> {
  const { agent, scope } = target;
  const title = AGENT_TITLES[agent];
  const file = resolveSettingsPath(target.hooksFile);
  const again = `run \`assent install ${agent}${scope === 'project' ? ' --scope project' : ''}\``;
  const report: AgentReport & { pluginLoadedAt: string | null } = {
    agent,
    scope,
    installed: false,
    settingsPath: file,
    command: null,
    timeoutOk: false,
    blocksCanary: false,
    mcp: false,
    problems: [],
    notes: [],
    pluginLoadedAt: null,
  };
  const record = deps.records[file];
  let text: string;
  try {
    const state = readFileState(file);
    if (!state.exists) {
      if (record !== undefined) report.problems.push(`assent's plugin ${file} was removed by hand: ${title} runs every tool call without asking assent; ${again} to put it back, or \`assent uninstall ${agent}\` to forget it`);
      return report;
    }
    text = state.text;
  } catch (error) {
    report.installed = record !== undefined;
    report.problems.push(`${error instanceof Error ? error.message : String(error)}; ${title} cannot load a plugin it cannot read`);
    return report;
  }
  if (!isAssentPlugin(text)) {
    if (record !== undefined) report.problems.push(`${file} is no longer the plugin assent wrote (another file took its place): ${title} runs tool calls without asking assent; ${again}`);
    return report;
  }
  report.installed = true;
  const settings = readPluginSettings(text);
  if (record !== undefined && record.afterDigest !== digestText(text)) report.problems.push(`${file} was edited since \`assent install\`; ${again} to write it as assent means it`);
  if (settings === undefined) {
    report.problems.push(`${file} does not name the hook and deadline assent writes into it; ${again}`);
  } else {
    report.command = `${doubleQuote(settings.node)} ${doubleQuote(settings.hookEntry)} ${settings.agent} --timeout ${settings.timeoutSeconds}`;
    if (settings.agent !== agent) report.problems.push(`the plugin answers as ${JSON.stringify(settings.agent)}, not ${agent}; ${again}`);
    else if ((agent === 'opencode' || agent === 'kilo') && record?.afterDigest === digestText(text) && text !== pluginText({ agent, installation: { ...deps.installation, node: settings.node, hookEntry: settings.hookEntry }, timeoutSeconds: settings.timeoutSeconds })) {
      // An older plugin fails closed on what it does not know (a confined allow), so this costs approvals, not safety.
      report.problems.push(`the plugin was written by an older assent: it refuses the commands assent would run confined (R-SH-14) instead of running them in the sandbox; ${again}`);
    }
    if (!fs.existsSync(settings.node)) report.problems.push(`the plugin runs node at ${settings.node}, which is not there; ${again}`);
    if (!fs.existsSync(settings.hookEntry)) report.problems.push(`the plugin runs ${settings.hookEntry}, which does not exist; ${again}`);
    else if (resolveSettingsPath(settings.hookEntry) !== resolveSettingsPath(deps.installation.hookEntry)) {
      report.problems.push(`the plugin runs another assent (${settings.hookEntry}), not this one (${deps.installation.hookEntry}); run \`assent install ${agent}\` with the assent you mean to use`);
    }
    const margin = Number(hookMarginSeconds(settings.timeoutSeconds).toFixed(1));
    report.timeoutOk = agentTimeoutSuffices(settings.timeoutSeconds, deps.hookTimeoutSeconds);
    if (!report.timeoutOk) {
      report.problems.push(
        `the plugin's deadline (${settings.timeoutSeconds} s less the hook's ${margin} s margin) leaves less than hooks.timeoutSeconds (${deps.hookTimeoutSeconds} s) plus ${HOOK_SPAWN_ALLOWANCE_SECONDS} s for starting the daemon: a person could not decide in time; ${again}`,
      );
    }
  }
  const run = await deps.run(`${doubleQuote(deps.installation.node)} --input-type=module`, CHECK_SCRIPT, {
    cwd: deps.where.cwd,
    env: { ...deps.where.env, ASSENT_DOCTOR_PLUGIN: file },
    timeoutMs: PLUGIN_CHECK_TIMEOUT_MS,
  });
  const check = parseCheck(run.stdout);
  if (run.timedOut) report.problems.push(`the plugin did not load and answer within ${PLUGIN_CHECK_TIMEOUT_MS / 1000} s; ${title} would wait for it before every tool call; ${again}`);
  else if (check?.loaded !== true) {
    const why = check?.message ?? (run.stderr.trim().split('\n').at(-1) || `exit ${String(run.exitCode)}`);
    report.problems.push(`the plugin file does not load (${why.slice(0, 300)}): ${title} skips such a plugin without saying so and runs every tool call without asking assent; ${again}`);
  } else if (check.threw !== true) report.problems.push(`the plugin let the canary call run: ${title} would run calls assent denies; ${again}`);
  else {
    report.blocksCanary = true;
    const said = check.message ?? '';
    if (!said.includes(CANARY_WORDS)) report.problems.push(`the plugin blocked the canary, but not with the daemon's answer (${JSON.stringify(said.slice(0, 200))}): it fails closed, so every tool call is refused; check \`assent daemon status\``);
  }
  const load = lastLoad(file);
  report.pluginLoadedAt = load?.loadedAt ?? null;
  const installedAt = record?.installedAt;
  if (load === undefined) report.notes.push(`${title} has not loaded this plugin since it was installed (no ${LOAD_MARKER_NAME} beside it): it has not started since, or it skipped the plugin (its log in ~/.local/share/${agent}/log says why).`);
  else if (installedAt !== undefined && load.loadedAt < installedAt) report.notes.push(`${title} last loaded the plugin at ${load.loadedAt}, before it was last installed (${installedAt}): runs since then have not loaded it.`);
  else report.notes.push(`${title} last loaded this plugin at ${load.loadedAt}${load.pid === undefined ? '' : ` (process ${load.pid})`}.`);
  report.notes.push(`doctor cannot see a run with --pure or ${agent === 'opencode' ? 'OPENCODE_PURE' : 'KILO_PURE'}: such a run loads no plugin and gates nothing.`);
  return report;
}
