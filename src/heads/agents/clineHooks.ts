// `assent install|uninstall|doctor cline` (R-HOOK-14): Cline CLI 3.0.65 runs
// every file named after a hook event in its hooks folders (with bash for
// `.sh`), the event's JSON on stdin, and reads one JSON answer from stdout. It
// has no settings file for hooks, so assent writes two small files of its own,
// PreToolUse.sh and PostToolUse.sh, each one `exec` of assent's hook, and owns
// them whole: install refuses a file of that name that is not assent's, and
// uninstall removes them, so the folder is as it was (docs/agents.md).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import { agentTimeoutSuffices, hookDeadlineMs, HOOK_SPAWN_ALLOWANCE_SECONDS } from '../../core/agent/hookDeadline.js';
import { AGENT_TITLES, type AgentTarget } from './agentTargets.js';
import type { AgentPlan, FileChange, InstallRequest, EntryKind } from './agentPlan.js';
import type { AgentReport, DoctorDependencies } from './doctorCheck.js';
import { doubleQuote, hookCommand, type AssentInstallation } from './hookCommand.js';
import { digestText, type InstallRecords } from './installRecords.js';
import { readFileState, resolveSettingsPath, type FileState } from './settingsFiles.js';

/** Cline gives every hook command 120 s and then runs the call; no setting changes it (observed in 3.0.65). */
export const CLINE_HOOK_TIMEOUT_SECONDS = 120;

/** The second line of each hook file assent writes: how assent tells its files from anyone else's. */
const HEADER = '# assent hook: written by `assent install cline`';

type MakeChange = (file: string, kinds: EntryKind[], before: FileState, afterText: string | undefined) => FileChange;

/** The before-tool and after-tool hook files of a target (its hooksFile is the first). */
export function clineHookFiles(target: Pick<AgentTarget, 'hooksFile'>): { before: string; after: string } {
  const before = resolveSettingsPath(target.hooksFile);
  return { before, after: path.join(path.dirname(before), 'PostToolUse.sh') };
}

/** One hook file's whole text: a shell script that hands the event to assent's hook. Every path is double-quoted. */
export function clineHookText(installation: AssentInstallation, after: boolean): string {
  const what = after
    ? 'after every tool call, to record its end in the audit (it never blocks)'
    : 'before every tool call: only its {} runs the call as asked; a refusal runs a command that prints the reason in place of a run_commands call, and cancels any other (which ends the task)';
  return `#!/bin/sh
${HEADER}; \`assent uninstall cline\` removes it, \`assent doctor\` checks it.
# Cline CLI runs this ${what}.
exec ${hookCommand(installation, 'cline', after, CLINE_HOOK_TIMEOUT_SECONDS)}
`;
}

export function isAssentClineHook(text: string): boolean {
  return text.split('\n', 3)[1]?.startsWith(HEADER) === true;
}

/** The command a hook file of assent's runs (its `exec` line), or undefined. */
function execLine(text: string): string | undefined {
  return /^exec (.+)$/m.exec(text)?.[1];
}

function refuseForeign(file: string, before: FileState): void {
  if (before.exists && !isAssentClineHook(before.text)) {
    throw new AssentError('conflict', `${file} exists and is not a hook file assent wrote; Cline runs every PreToolUse.* and PostToolUse.* there, so move it away (or rename it to another event's name), then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
}

/** The two hook files with this assent's hook; a file of either name that assent did not write is refused. */
export function planClineInstall(target: AgentTarget, request: InstallRequest, change: MakeChange): AgentPlan {
  const files = clineHookFiles(target);
  const states = { before: readFileState(files.before), after: readFileState(files.after) };
  refuseForeign(files.before, states.before);
  refuseForeign(files.after, states.after);
  return {
    target,
    files: [change(files.before, ['hooks'], states.before, clineHookText(request.installation, false)), change(files.after, ['hooks'], states.after, clineHookText(request.installation, true))],
  };
}

/** Removing assent's hook files; a file that is gone or not assent's is left alone. */
export function planClineUninstall(target: AgentTarget, records: InstallRecords, change: MakeChange): AgentPlan {
  const planned: FileChange[] = [];
  for (const file of Object.values(clineHookFiles(target))) {
    const before = readFileState(file);
    if (!before.exists || !isAssentClineHook(before.text)) continue;
    const removal = change(file, ['hooks'], before, undefined);
    // The file is assent's whole: removing it puts the folder back as it was.
    removal.restoredExactly = true;
    const record = records[file];
    if (record !== undefined) removal.record = record;
    planned.push(removal);
  }
  return { target, files: planned };
}

/** Cline's other hook folders holding a PreToolUse file: those run beside assent's, and one that answers `overrideInput` after it replaces what assent judged. */
function safeOtherHookFolders(deps: DoctorDependencies, mine: string): string[] {
  const found: string[] = [];
  for (const folder of [path.join(deps.where.homedir, 'Documents', 'Cline', 'Hooks'), path.join(deps.where.cwd, '.clinerules', 'hooks'), path.join(deps.where.cwd, '.cline', 'hooks')]) {
    if (path.resolve(folder) === path.dirname(mine)) continue;
    try {
      if (fs.readdirSync(folder).some((name) => /^pretooluse(\.|$)/i.test(name))) found.push(folder);
    } catch {
      // No such folder: nothing of Cline's runs from it.
    }
  }
  return found;
}

/** Checks Cline's hook files; never throws for what it finds, only reports it. `canary` runs the before-tool file with doctor's canary event. */
export async function checkClineAgent(target: AgentTarget, deps: DoctorDependencies, canary: (file: string) => Promise<{ blocks: boolean; fromDaemon: boolean; reason: string }>): Promise<AgentReport> {
  const { agent, scope } = target;
  const title = AGENT_TITLES[agent];
  const files = clineHookFiles(target);
  const again = `run \`assent install cline${scope === 'project' ? ' --scope project' : ''}\``;
  const report: AgentReport = { agent, scope, installed: false, settingsPath: files.before, command: null, timeoutOk: false, blocksCanary: false, mcp: false, problems: [], notes: [] };
  const texts: Partial<Record<'before' | 'after', string>> = {};
  for (const side of ['before', 'after'] as const) {
    const file = files[side];
    const record = deps.records[file];
    let state: FileState;
    try {
      state = readFileState(file);
    } catch (error) {
      report.problems.push(`${error instanceof Error ? error.message : String(error)}; ${title} cannot run a hook file it cannot read`);
      continue;
    }
    if (!state.exists) {
      if (record !== undefined) report.problems.push(`assent's hook file ${file} was removed by hand: ${title} ${side === 'before' ? 'runs every tool call without asking assent' : 'no longer reports the end of a call, so allowed calls stay "started" in the audit'}; ${again} to put it back, or \`assent uninstall cline\` to forget it`);
      continue;
    }
    if (!isAssentClineHook(state.text)) {
      if (record !== undefined) report.problems.push(`${file} is no longer the hook file assent wrote (another file took its place): ${title} runs tool calls without asking assent; ${again}`);
      continue;
    }
    texts[side] = state.text;
    if (record !== undefined && record.afterDigest !== digestText(state.text)) report.problems.push(`${file} was edited since \`assent install\`; ${again} to write it as assent means it`);
    if (state.text !== clineHookText(deps.installation, side === 'after')) {
      const command = execLine(state.text);
      report.problems.push(`${file} runs ${command === undefined ? 'no command assent wrote' : `${command}, not this assent's hook (${hookCommand(deps.installation, 'cline', side === 'after', CLINE_HOOK_TIMEOUT_SECONDS)})`}; ${again}`);
    }
  }
  if (texts.before === undefined) return report;
  report.installed = true;
  report.command = execLine(texts.before) ?? null;
  if (texts.after === undefined && !report.problems.some((problem) => problem.includes(files.after))) report.problems.push(`${files.after} is missing: the end of an allowed call is not recorded, so it stays "started" in the audit; ${again}`);
  report.timeoutOk = agentTimeoutSuffices(CLINE_HOOK_TIMEOUT_SECONDS, deps.hookTimeoutSeconds);
  if (!report.timeoutOk) {
    const window = Math.max(0, Math.floor(hookDeadlineMs(CLINE_HOOK_TIMEOUT_SECONDS) / 1000) - HOOK_SPAWN_ALLOWANCE_SECONDS);
    report.notes.push(
      `${title} gives a hook ${CLINE_HOOK_TIMEOUT_SECONDS} s, fixed, and then runs the call; assent's hook answers deny before that, so a person has about ${window} s to decide, not hooks.timeoutSeconds (${deps.hookTimeoutSeconds} s). Set hooks.timeoutSeconds to ${window} or less for the full window.`,
    );
  }
  const verdict = await canary(files.before);
  report.blocksCanary = verdict.blocks;
  if (!verdict.blocks) report.problems.push(`the hook file let the canary call run (its answer: ${JSON.stringify(verdict.reason.slice(0, 200))}): ${title} would run calls assent denies; ${again}`);
  else if (!verdict.fromDaemon) report.problems.push(`the hook blocked the canary, but not with the daemon's answer (${JSON.stringify(verdict.reason.slice(0, 200))}): it fails closed, so every tool call is refused; check \`assent daemon status\``);
  for (const folder of safeOtherHookFolders(deps, files.before)) {
    report.notes.push(`${title} also runs the PreToolUse hooks in ${folder}: one that answers "overrideInput" replaces the input assent judged, and it runs as that hook wrote it.`);
  }
  report.notes.push(`doctor cannot see a run with --config, --hooks-dir or CLINE_DIR pointing at another folder: such a run reads other hook files and, without assent's there, gates nothing.`);
  report.notes.push(`${title} ends the whole task on every call assent refuses other than run_commands ({"cancel":true} is its only refusal); the reason is then in the task's log, not shown to the model.`);
  return report;
}

/** The canary's command line for one hook file: bash, as Cline runs a `.sh` hook. */
export function clineCanaryCommand(file: string): string {
  return `bash ${doubleQuote(file)}`;
}
