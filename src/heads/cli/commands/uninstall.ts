// `assent uninstall AGENT` (R-HOOK-7): removes only assent's entries. It removes
// protection, so like `assent rules add` it needs a person at a terminal typing
// a fresh code; an agent's shell cannot take its own gate away.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { AGENT_TITLES, currentEnvironment, parseAgent, parseScope } from '../../agents/agentTargets.js';
import { readInstallRecords } from '../../agents/installRecords.js';
import type { FileChange } from '../../agents/agentPlan.js';
import { applyUninstall, planUninstall } from '../../agents/installPlan.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { requireInteractiveTerminal, requireTypedCode } from '../terminal.js';
import { fileJson, renderDiff } from './install.js';

interface UninstallOptions {
  scope?: string;
  mcp?: boolean;
  json?: boolean;
}

const CONFIRM_DEADLINE_MS = 60_000;

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function outcome(file: FileChange): string {
  if (file.afterText === undefined) return `${escapeText(file.file)}: removed (assent had created it)`;
  if (file.restoredExactly === true) return `${escapeText(file.file)}: restored byte for byte as it was before \`assent install\``;
  if (file.file.endsWith('.toml')) return `${escapeText(file.file)}: removed assent's marked table; the rest of the file is as it was`;
  if (file.textKept === true) return `${escapeText(file.file)}: removed assent's entries; the file changed since \`assent install\`, and every other byte of it is as it was`;
  return `${escapeText(file.file)}: removed assent's entries; the file changed since \`assent install\`, so the rest was re-serialized (same keys and values, the file's indentation)`;
}

async function runUninstall(agentName: string, options: UninstallOptions): Promise<void> {
  const agent = parseAgent(agentName);
  const scope = parseScope(options.scope);
  const paths = resolveStatePaths();
  const plan = planUninstall({ agent, scope, where: currentEnvironment(), mcp: options.mcp === true, records: readInstallRecords(paths) });
  const title = `${AGENT_TITLES[agent]} (${scope})`;
  if (plan.files.length === 0) {
    if (options.json) printJsonOk({ agent, scope, changed: false, files: [] });
    else out(`Nothing to remove: no assent entries for ${title} in ${escapeText(plan.target.hooksFile)}${options.mcp ? ` or ${escapeText(plan.target.mcp.file)}` : ''}.`);
    return;
  }
  requireInteractiveTerminal('`assent uninstall`');
  for (const file of plan.files) process.stderr.write(`${renderDiff(file.diff)}\n`);
  const code = newApprovalCode((n) => randomBytes(n));
  await requireTypedCode(code, {
    deadlineMs: CONFIRM_DEADLINE_MS,
    consequence: `nothing was removed from ${title}`,
    prompt:
      `Remove assent's ${options.mcp ? 'hooks and MCP server' : 'hooks'} for ${title}? ${AGENT_TITLES[agent]}'s tool calls will then run without asking assent.\n` +
      `Type ${code} to remove them, anything else cancels: `,
  });
  const backups = applyUninstall(plan, { paths, now: new Date() });
  if (options.json) {
    printJsonOk({
      agent,
      scope,
      changed: true,
      files: plan.files.map((file) => ({ ...fileJson(file, backups), restoredExactly: file.restoredExactly === true })),
    });
    return;
  }
  for (const file of plan.files) {
    out(outcome(file));
    const backup = backups[file.file];
    if (backup !== undefined) out(`Backup of the file as it was: ${escapeText(backup)}`);
  }
  out(`Removed assent's ${options.mcp ? 'hooks and MCP server' : 'hooks'} for ${title}.`);
}

export function registerUninstallCommand(program: Command): void {
  program
    .command('uninstall <agent>')
    .description("Remove assent's hooks from an agent's settings, restoring the rest of the file; needs your terminal and a typed code, since it removes protection.")
    .option('--scope <scope>', 'user (the default) or project (the settings in the current directory)')
    .option('--mcp', 'also remove the "assent" MCP server that `assent install --mcp` registered')
    .option('--json', 'print one JSON document')
    .action(async (agent: string, options: UninstallOptions) => {
      try {
        await runUninstall(agent, options);
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
