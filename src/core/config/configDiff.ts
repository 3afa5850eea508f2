// The reload diff (R-CFG-4): what confirming a changed config.json would
// change, line by line, each section's lines from its own file, and marked
// where a setting applies only from the next daemon start (restartSettings.ts).
import { escapedJson, escapeText } from '../base/escape.js';
import { diffAgentPolicy } from '../policy/agentPolicyConfig.js';
import { diffPresence } from '../policy/presencePolicy.js';
import { diffAuditExport } from './auditExportConfig.js';
import type { Config, Server } from './config.js';
import { keyedChanges, shownValue } from './diffLines.js';
import { diffJournalConfig } from './journalConfig.js';
import { diffNotifications } from './notificationsConfig.js';
import { markFromNextStart } from './restartSettings.js';
import { diffTeamConfig } from './teamConfig.js';
import { diffWebConfig } from './webConfig.js';

const show = shownValue;

/** Describes a server without its env or header values, which may hold secrets. */
function serverSummary(server: Server): string {
  if (server.url !== undefined) return `url ${escapeText(server.url)}`;
  const args = server.args === undefined ? '' : ` ${escapedJson(server.args)}`;
  return `command ${escapedJson(server.command)}${args}`;
}

function serverChanges(a: Server, b: Server): string[] {
  const changed: string[] = [];
  for (const key of ['command', 'args', 'cwd', 'url'] as const) {
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) changed.push(`${key} ${show(a[key])} → ${show(b[key])}`);
  }
  for (const key of ['env', 'headers'] as const) {
    const before = a[key] ?? {};
    const after = b[key] ?? {};
    const names = new Set([...Object.keys(before), ...Object.keys(after)]);
    const touched = [...names].filter((name) => before[name] !== after[name]).sort();
    if (touched.length > 0) changed.push(`${key} values changed for ${touched.map(escapeText).join(', ')}`);
  }
  return changed;
}

/**
 * Human lines describing what a reload would change, so the operator sees a
 * widening before confirming it (R-CFG-4). Env and header values are never
 * shown, only their names. Everything taken from the file is escaped
 * (R-TTY-3), so the only non-ASCII text in a line is the arrow `→` this
 * function writes itself. An empty array means nothing that matters changed.
 */
export function diffPolicy(a: Config, b: Config): string[] {
  const lines: string[] = [];
  const scalar = (path: string, x: unknown, y: unknown): void => {
    if (JSON.stringify(x) !== JSON.stringify(y)) lines.push(`${path}: ${show(x)} → ${show(y)}`);
  };
  scalar('policy.default', a.policy.default, b.policy.default);
  scalar('policy.destructive', a.policy.destructive, b.policy.destructive);
  lines.push(...keyedChanges('policy.tools', a.policy.tools, b.policy.tools));
  scalar('policy.consentTimeoutSeconds', a.policy.consentTimeoutSeconds, b.policy.consentTimeoutSeconds);
  scalar('policy.agents.default', a.policy.agents.default, b.policy.agents.default);
  scalar('policy.agents.bookkeeping', a.policy.agents.bookkeeping, b.policy.agents.bookkeeping);
  lines.push(...diffAgentPolicy(a.policy, b.policy));
  lines.push(...diffPresence(a.policy.presence, b.policy.presence));
  const aliases = [...new Set([...Object.keys(a.servers), ...Object.keys(b.servers)])].sort();
  for (const alias of aliases) {
    const before = a.servers[alias];
    const after = b.servers[alias];
    const key = `servers.${escapeText(alias)}`;
    if (before === undefined && after !== undefined) lines.push(`${key}: added (${serverSummary(after)})`);
    else if (before !== undefined && after === undefined) lines.push(`${key}: removed (was ${serverSummary(before)})`);
    else if (before !== undefined && after !== undefined) {
      for (const change of serverChanges(before, after)) lines.push(`${key}: ${change}`);
    }
  }
  scalar('channels.elicitation', a.channels.elicitation, b.channels.elicitation);
  scalar('channels.tty', a.channels.tty, b.channels.tty);
  scalar('approvals.handoff', a.approvals.handoff, b.approvals.handoff);
  scalar('approvals.proofTtlSeconds', a.approvals.proofTtlSeconds, b.approvals.proofTtlSeconds);
  scalar('hooks.timeoutSeconds', a.hooks.timeoutSeconds, b.hooks.timeoutSeconds);
  scalar('hooks.claudeNativePrompt', a.hooks.claudeNativePrompt, b.hooks.claudeNativePrompt);
  lines.push(...diffNotifications(a.notifications, b.notifications));
  lines.push(...diffWebConfig(a.web, b.web));
  scalar('auditRetentionDays', a.auditRetentionDays, b.auditRetentionDays);
  lines.push(...diffAuditExport(a.audit, b.audit));
  lines.push(...diffTeamConfig(a, b), ...diffJournalConfig(a, b));
  return lines.map(markFromNextStart);
}
