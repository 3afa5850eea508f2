// `assent doctor` (R-HOOK-7): for each agent, whether assent's hooks are
// installed, point at this assent, have time enough, and really block (the
// canary); before them, whether the state files are sound (issue 35). Exit 0
// when every installed agent is fine and no state file is damaged, 65 otherwise.
import type { Command } from 'commander';
import { AssentError, exitCodeFor } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { confinementStatus, sandboxStatus, type ConfinementStatus } from '../../../exec/confine/sandboxRun.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { AGENT_IDS, AGENT_TITLES, currentEnvironment } from '../../agents/agentTargets.js';
import type { AgentReport } from '../../agents/doctorCheck.js';
import { AUGGIE_SWITCH_CAVEAT, checkAgent, CODEX_TRUST_CAVEAT, reportIsFine, runThroughShell, scopesToCheck } from '../../agents/hookDoctor.js';
import { thisInstallation } from '../../agents/hookCommand.js';
import { DEFAULT_HOOK_TIMEOUT_SECONDS, pinnedHookTimeout, unconfirmedTimeoutNote, type PinnedHookTimeout } from '../../agents/hookTimeout.js';
import { inspectStateFiles, type StateDamage } from '../../../journal/stateDamage.js';
import { readInstallRecords } from '../../agents/installRecords.js';
import { ExitWith, reportFailure } from '../output.js';
import { checkStorage, storageLine } from './doctorStorage.js';

interface DoctorOptions {
  json?: boolean;
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function humanLine(report: AgentReport): string {
  const where = `${AGENT_TITLES[report.agent]} (${report.scope}, ${escapeText(report.settingsPath)})`;
  if (report.problems.length > 0) return `${where}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`;
  if (!report.installed) return `${where}: not installed (\`assent install ${report.agent}\`)`;
  return `${where}: ok, blocks the canary${report.mcp ? ', MCP server registered' : ''}`;
}

/**
 * R-SH-14, as this shell's PATH finds the sandbox: a note, never a failure —
 * without it, commands that run project code ask a person, which is safe.
 */
function confinementLine(status: ConfinementStatus): string {
  if (status.available) return `Confined runs (R-SH-14): on, bwrap ${status.version} at ${escapeText(status.bwrap)}; project code runs in the sandbox without a person for ${status.agents.map((agent) => AGENT_TITLES[agent]).join(', ')}.`;
  return `Confined runs (R-SH-14): off, so ${status.effect}: ${escapeText(status.reason)}. The daemon's own view: \`assent daemon status\`.`;
}

/** The all-fine summary: it never claims what doctor cannot see (Codex's /hooks trust, Auggie's server switch). */
function summaryLine(reports: AgentReport[]): string {
  const caveats = [
    ...(reports.some((report) => report.agent === 'codex' && report.installed) ? [CODEX_TRUST_CAVEAT] : []),
    ...(reports.some((report) => report.agent === 'auggie' && report.installed) ? [AUGGIE_SWITCH_CAVEAT] : []),
  ];
  return caveats.length > 0 ? `All installed agents are gated by this assent, as far as doctor can see. ${caveats.map((caveat) => `${caveat}.`).join(' ')}` : 'All installed agents are gated by this assent.';
}

/** The state files' lines: each damaged one with what it does and its fix, or that all are sound. */
function stateLines(home: string, damaged: readonly StateDamage[]): string[] {
  if (damaged.length === 0) return [`State files in ${escapeText(home)}: sound (journal.db, the confirmed configuration, config.json, the audit log's last line).`];
  const lines = [`State files in ${escapeText(home)}: ${damaged.length} damaged`];
  for (const damage of damaged) {
    lines.push(`  - ${escapeText(damage.file)}${damage.line === undefined ? '' : `:${damage.line}`}: ${escapeText(damage.problem)}`);
    lines.push(`    now: ${escapeText(damage.effect)}`);
    lines.push(`    fix: ${escapeText(damage.fix)}`);
  }
  return lines;
}

/** The daemon's hooks.timeoutSeconds; with config.json broken and nothing confirmed yet, the default (the state check names the file). */
function hookTimeoutOrDefault(paths: ReturnType<typeof resolveStatePaths>): PinnedHookTimeout {
  try {
    return pinnedHookTimeout(paths);
  } catch (error) {
    if (!(error instanceof AssentError) || error.type !== 'config_invalid') throw error;
    return { seconds: DEFAULT_HOOK_TIMEOUT_SECONDS, source: 'file', claudeNativePrompt: false };
  }
}

async function runDoctor(options: DoctorOptions): Promise<void> {
  const paths = resolveStatePaths();
  const where = currentEnvironment();
  // Damaged state first (issue 35): the daemon refuses to start, or runs fail-closed, on each of these.
  const damaged = inspectStateFiles(paths);
  // The daemon's pinned value, not an unconfirmed edit of config.json (R-HOOK-11).
  const timeout = hookTimeoutOrDefault(paths);
  const unconfirmed = unconfirmedTimeoutNote(timeout, paths.config);
  const deps = {
    where,
    installation: thisInstallation(),
    hookTimeoutSeconds: timeout.seconds,
    claudeNativePrompt: timeout.claudeNativePrompt,
    records: readInstallRecords(paths),
    run: runThroughShell,
    now: () => new Date(),
  };
  const reports: AgentReport[] = [];
  for (const agent of AGENT_IDS) {
    for (const scope of scopesToCheck(agent, where)) {
      const report = await checkAgent(agent, scope, deps);
      if (unconfirmed !== undefined && report.installed) report.notes.push(unconfirmed);
      reports.push(report);
    }
  }
  const confinement = confinementStatus(sandboxStatus());
  // Issue 35: a full or failing device under ASSENT_HOME makes the daemon refuse every call, whatever the hooks.
  const storage = await checkStorage(paths);
  const failing = reports.filter((r) => !reportIsFine(r));
  const ok = failing.length === 0 && damaged.length === 0 && storage.ok;
  if (options.json) {
    const document: Record<string, unknown> = {
      ok,
      data: { agents: reports, confinement, state: { home: paths.home, damaged }, storage },
      meta: { hookTimeoutSeconds: deps.hookTimeoutSeconds, hookTimeoutSource: timeout.source },
    };
    if (!ok) {
      const error =
        damaged.length > 0
          ? new AssentError('state_damaged', damaged.map((d) => `${d.file}: ${d.problem}; ${d.fix}`).join(' | '), { details: { damaged, agents: failing.map((r) => ({ agent: r.agent, scope: r.scope, problems: r.problems })) } })
          : new AssentError('invalid_input', `${failing.map((r) => `${r.agent} (${r.scope})`).join(', ')}: assent's hooks are not in working order; see data.agents[].problems`, {
              details: { agents: failing.map((r) => ({ agent: r.agent, scope: r.scope, problems: r.problems })) },
            });
      document['error'] = { type: error.type, message: error.message, details: error.details };
    }
    if (!storage.ok && damaged.length === 0 && failing.length === 0) document['error'] = { type: 'unavailable', message: storageLine(storage), details: { storage } };
    process.stdout.write(`${JSON.stringify(document)}\n`);
  } else {
    for (const line of stateLines(paths.home, damaged)) out(line);
    for (const report of reports) {
      out(humanLine(report));
      for (const problem of report.problems) out(`  - ${escapeText(problem)}`);
      for (const note of report.notes) out(`  note: ${escapeText(note)}`);
    }
    out(confinementLine(confinement));
    out(storageLine(storage));
    if (damaged.length > 0) out(`${damaged.length} state file${damaged.length === 1 ? ' is' : 's are'} damaged; fix ${damaged.length === 1 ? 'it' : 'them'} as shown above and run \`assent doctor\` again.`);
    if (failing.length > 0) out(`${failing.length} agent setting${failing.length === 1 ? ' has' : 's have'} problems; fix them and run \`assent doctor\` again.`);
    else if (damaged.length === 0) out(summaryLine(reports));
  }
  if (!ok) throw new ExitWith(exitCodeFor(damaged.length > 0 ? 'state_damaged' : 'invalid_input'));
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description("Check the state files (journal.db, the confirmed configuration, config.json, the audit log's last line) and each agent's assent hooks: installed, pointing at this assent, with time enough, and blocking a canary call (nothing runs). Exit 0 when all is fine, 65 otherwise.")
    .option('--json', 'print one JSON document: {ok, data:{agents:[…]}}')
    .action(async (options: DoctorOptions) => {
      try {
        await runDoctor(options);
      } catch (error) {
        if (error instanceof ExitWith) throw error;
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
