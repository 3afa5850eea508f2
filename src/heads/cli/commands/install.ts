// `assent install AGENT` (R-HOOK-7): merges assent's hook entries (and with
// --mcp its MCP server) into the agent's settings, shows the diff, writes a
// backup beside each file it changes, and applies without asking: it adds
// protection. A second run changes nothing and says so.
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { AGENT_LIST_TEXT, AGENT_TITLES, currentEnvironment, installNotes, isPluginAgent, parseAgent, parseScope, supportsMcpInstall } from '../../agents/agentTargets.js';
import { thisInstallation } from '../../agents/hookCommand.js';
import { pinnedHookTimeout, unconfirmedTimeoutNote } from '../../agents/hookTimeout.js';
import type { FileChange } from '../../agents/agentPlan.js';
import { applyInstall, desiredHooks, planInstall } from '../../agents/installPlan.js';
import { verifyPluginText } from '../../agents/pluginFile.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';

interface InstallOptions {
  scope?: string;
  dryRun?: boolean;
  mcp?: boolean;
  json?: boolean;
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** A diff for the terminal: every line escaped, since a settings file may hold anything (R-TTY-3). */
export function renderDiff(diff: string[]): string {
  return diff.map((line) => escapeText(line)).join('\n');
}

export function fileJson(file: FileChange, backups: Record<string, string>): Record<string, unknown> {
  return {
    path: file.file,
    kinds: file.kinds,
    changed: file.changed,
    created: file.changed && !file.before.exists,
    deleted: file.changed && file.afterText === undefined,
    backup: backups[file.file] ?? null,
    diff: file.diff,
  };
}

async function runInstall(agentName: string, options: InstallOptions): Promise<void> {
  const agent = parseAgent(agentName);
  const scope = parseScope(options.scope);
  const installation = thisInstallation();
  if (!fs.existsSync(installation.hookEntry)) {
    throw new AssentError(
      'invalid_input',
      `this assent has no hook entry at ${installation.hookEntry}, so an agent could not run it; build it (\`npm run build\`) and run this again. Nothing was changed`,
      { details: { path: installation.hookEntry } },
    );
  }
  if (options.mcp === true && !supportsMcpInstall(agent)) {
    throw new AssentError('usage', `--mcp is not supported for ${AGENT_TITLES[agent]}: its MCP settings take another shape; add \`assent mcp\` there by hand (docs/agents.md shows how). Nothing was changed`, {
      details: { agent },
    });
  }
  const paths = resolveStatePaths();
  // The daemon's pinned value, not an unconfirmed edit of config.json (R-HOOK-11).
  const pinned = pinnedHookTimeout(paths);
  const hookTimeoutSeconds = pinned.seconds;
  const plan = planInstall({ agent, scope, where: currentEnvironment(), installation, hookTimeoutSeconds, claudeNativePrompt: pinned.claudeNativePrompt, mcp: options.mcp === true });
  const changed = plan.files.some((f) => f.changed);
  // A plugin that fails to load is skipped by the agent without a word: never write one (R-HOOK-14).
  if (isPluginAgent(agent)) for (const file of plan.files) if (file.afterText !== undefined) await verifyPluginText(file.afterText);
  const backups = changed && options.dryRun !== true ? applyInstall(plan, { paths, now: new Date() }) : {};
  const hooks = desiredHooks(plan.target, installation, hookTimeoutSeconds, pinned.claudeNativePrompt);
  const notes = installNotes(plan.target, options.mcp === true);
  const unconfirmed = unconfirmedTimeoutNote(pinned, paths.config);
  if (unconfirmed !== undefined) notes.push(unconfirmed);
  const title = `${AGENT_TITLES[agent]} (${scope})`;
  if (options.json) {
    printJsonOk({
      agent,
      scope,
      dryRun: options.dryRun === true,
      changed,
      hookTimeoutSeconds,
      timeout: hooks.before.timeout,
      timeoutUnit: plan.target.timeoutUnit,
      command: hooks.before.command,
      settingsPath: plan.files[0]?.file,
      files: plan.files.map((file) => fileJson(file, backups)),
      notes,
    });
    return;
  }
  if (!changed) {
    out(`Nothing to change: assent's ${options.mcp ? 'hooks and MCP server are' : 'hooks are'} already in ${plan.files.map((f) => escapeText(f.file)).join(' and ')} for ${title}.`);
    return;
  }
  for (const file of plan.files.filter((f) => f.changed)) {
    out(renderDiff(file.diff));
    const backup = backups[file.file];
    if (backup !== undefined) out(`Backup: ${escapeText(backup)}`);
  }
  const timeoutText = plan.target.timeoutUnit === 'milliseconds' ? `${hooks.before.timeout} ms` : `${hooks.before.timeout} s`;
  if (options.dryRun === true) out(`Dry run: nothing was written. \`assent install ${agent}${scope === 'project' ? ' --scope project' : ''}${options.mcp ? ' --mcp' : ''}\` would make the changes above.`);
  else if (isPluginAgent(agent)) out(`Installed assent's plugin for ${title} (its deadline ${timeoutText}). Check it with \`assent doctor\`.`);
  else if (agent === 'cline') out(`Installed assent's hook files for ${title} (Cline's fixed hook timeout ${timeoutText}). Check them with \`assent doctor\`.`);
  else out(`Installed assent's hooks for ${title}${options.mcp ? ' and its MCP server' : ''} (hook timeout ${timeoutText}). Check it with \`assent doctor\`.`);
  for (const note of notes) out(`note: ${note}`);
}

export function registerInstallCommand(program: Command): void {
  program
    .command('install <agent>')
    .description(
      `Add assent's hooks to an agent's settings, or for OpenCode and Kilo its plugin file (${AGENT_LIST_TEXT}): every tool call then meets assent's policy. Shows the diff, writes a backup, applies without asking.`,
    )
    .option('--scope <scope>', 'user (the default: the agent\'s settings in your home) or project (the settings in the current directory)')
    .option('--dry-run', 'print the diff and write nothing')
    .option('--mcp', 'also register `assent mcp` as the agent\'s MCP server named "assent"')
    .option('--json', 'print one JSON document')
    .action(async (agent: string, options: InstallOptions) => {
      try {
        await runInstall(agent, options);
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
