// What an operator sees before deciding a pending approval: every argument,
// complete and escaped (R-TTY-3 rules apply to tool calls too).
import { describeRisk, readApprovalRisk } from './approvalRisk.js';
import { escapedJson, escapeText } from '../base/escape.js';

export interface PreviewableApproval {
  id: string;
  sessionId: string;
  kind: 'tool' | 'exec';
  server?: string;
  tool?: string;
  args?: Record<string, unknown>;
  action?: unknown;
  requestedAt: number;
  expiresAt: number;
  caller: Record<string, unknown>;
  /** R-TEAM-3: who owns the session that asked, the rules it is decided under, and who has approved so far. */
  owner?: string;
  fourEyes?: true;
  quorum?: number;
  approvedBy?: readonly string[];
  /** `passkey`: only an enrolled passkey's assertion approves it (R-REM-6). */
  presence?: 'passkey';
}

/**
 * The lines naming who may still decide (R-TEAM-3), shown only when a rule
 * makes it matter: under four-eyes the owner who cannot approve, under a quorum
 * who has approved so far out of how many.
 */
export function renderTeamLines(approval: Pick<PreviewableApproval, 'owner' | 'fourEyes' | 'quorum' | 'approvedBy'>): string[] {
  const lines: string[] = [];
  const approvedBy = approval.approvedBy ?? [];
  if (approval.fourEyes === true) {
    lines.push(`  owner     ${escapeText(approval.owner ?? '(not recorded)')} (four-eyes: may deny, not approve)`);
  }
  if ((approval.quorum ?? 1) > 1 || approvedBy.length > 0) {
    const counted = approval.fourEyes === true ? approvedBy.filter((p) => p !== approval.owner) : approvedBy;
    const who = approvedBy.length === 0 ? 'nobody yet' : approvedBy.map((p) => escapeText(p)).join(', ');
    lines.push(`  approved  by ${who} (${counted.length} of ${approval.quorum ?? 1})`);
  }
  return lines;
}

/** The line that says an approval needs a passkey, so nobody types a code that cannot approve it. */
export const PASSKEY_NEEDED_LINE = '  needs     a passkey: approve it on the paired page with your passkey; a terminal code cannot approve it, only deny it';

function presenceLines(approval: PreviewableApproval): string[] {
  return approval.presence === 'passkey' ? [PASSKEY_NEEDED_LINE] : [];
}

/**
 * The risk line, level first (R-POL-10): `  risk      high: privilege escalation (sudo), shell`.
 * None for an approval that recorded no risk (an exec action, or one filed before risks were recorded).
 */
export function renderRiskLines(approval: Pick<PreviewableApproval, 'caller'>): string[] {
  const risk = readApprovalRisk(approval.caller['risk']);
  return risk === undefined ? [] : [`  risk      ${escapeText(describeRisk(risk))}`];
}

/**
 * The host that filed an approval (R-TEAM-3), as the page shows it: the host
 * name of its owning principal `<os user>@<host name>`. None when no owner was
 * recorded.
 */
export function renderHostLines(approval: Pick<PreviewableApproval, 'owner'>): string[] {
  const owner = approval.owner;
  const at = owner?.lastIndexOf('@') ?? -1;
  if (owner === undefined || at < 0 || at === owner.length - 1) return [];
  return [`  host      ${escapeText(owner.slice(at + 1))}`];
}

export function approvalSubject(approval: PreviewableApproval): string {
  return approval.kind === 'tool' ? escapeText(`${approval.server ?? '?'}/${approval.tool ?? '?'}`) : 'exec action';
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.round(ms / 1000))}s`;
}

/** One-line summary for lists. */
export function renderApprovalLine(approval: PreviewableApproval, now: number): string {
  return `${approval.id}  ${approvalSubject(approval)}  session ${escapeText(approval.sessionId)}  age ${seconds(now - approval.requestedAt)}  expires in ${seconds(approval.expiresAt - now)}`;
}

/** What a preview shows of an agent action (SPEC §17), read from the caller the daemon recorded for it. */
export interface AgentActionView {
  agent: string;
  cwd?: string;
  kind?: string;
  /** A shell action's command text, exactly as the agent would run it. */
  command?: string;
  /** How the policy decided it (R-POL-9): each simple command, path or URL with the rule that decided it. */
  policy?: AgentPolicyView;
  /** What "approve for session" remembers (R-POL-7). */
  sessionGrant?: string;
}

/** One judged part of an agent action, as the daemon recorded it in the approval. */
export interface AgentPolicyPartView {
  kind: string;
  text: string;
  decision: string;
  rule?: string;
  reason?: string;
}

export interface AgentPolicyView {
  decision: string;
  key?: string;
  parts: AgentPolicyPartView[];
}

function policyViewOf(value: unknown): AgentPolicyView | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record['decision'] !== 'string' || !Array.isArray(record['parts'])) return undefined;
  const parts: AgentPolicyPartView[] = [];
  for (const raw of record['parts'] as unknown[]) {
    if (typeof raw !== 'object' || raw === null) continue;
    const part = raw as Record<string, unknown>;
    if (typeof part['kind'] !== 'string' || typeof part['text'] !== 'string' || typeof part['decision'] !== 'string') continue;
    const view: AgentPolicyPartView = { kind: part['kind'], text: part['text'], decision: part['decision'] };
    if (typeof part['rule'] === 'string') view.rule = part['rule'];
    if (typeof part['reason'] === 'string') view.reason = part['reason'];
    parts.push(view);
  }
  const view: AgentPolicyView = { decision: record['decision'], parts };
  if (typeof record['key'] === 'string') view.key = record['key'];
  return view;
}

/** The preview lines of how the policy decided an agent action: one per part, its rule, and why it was not statically known. */
export function renderPolicyLines(policy: AgentPolicyView): string[] {
  const lines = [`  policy    ${escapeText(policy.decision)} (decided by ${escapeText(policy.key ?? 'policy')})`];
  for (const part of policy.parts) {
    lines.push(`    ${escapeText(part.decision).padEnd(6)} ${escapeText(part.kind).padEnd(7)} ${escapeText(part.text)}`);
    lines.push(`           by ${escapeText(part.rule ?? 'policy')}`);
    if (part.reason !== undefined) lines.push(`           why: ${escapeText(part.reason)}`);
  }
  return lines;
}

/** The agent-action part of an approval, when it is one (filed by a hook). */
export function agentActionOf(approval: Pick<PreviewableApproval, 'kind' | 'args' | 'caller'>): AgentActionView | undefined {
  if (approval.kind !== 'tool' || approval.caller['head'] !== 'hook' || typeof approval.caller['agent'] !== 'string') return undefined;
  const view: AgentActionView = { agent: approval.caller['agent'] };
  if (typeof approval.caller['cwd'] === 'string') view.cwd = approval.caller['cwd'];
  if (typeof approval.caller['kind'] === 'string') view.kind = approval.caller['kind'];
  const command = approval.args?.['command'];
  if (view.kind === 'shell' && typeof command === 'string') view.command = command;
  const policy = policyViewOf(approval.caller['policy']);
  if (policy !== undefined) view.policy = policy;
  if (typeof approval.caller['sessionGrant'] === 'string') view.sessionGrant = approval.caller['sessionGrant'];
  return view;
}

/**
 * The complete preview: header lines, then the arguments (or exec action) as
 * escaped JSON. An agent action also names the agent, its cwd and, for a shell
 * action, the command text itself, escaped like everything else (R-TTY-3).
 */
export function renderApprovalPreview(approval: PreviewableApproval, now: number): string {
  const agent = agentActionOf(approval);
  if (agent !== undefined) return renderAgentPreview(approval, agent, now);
  const lines = [
    `Approval ${approval.id}: ${approvalSubject(approval)}`,
    ...presenceLines(approval),
    ...renderRiskLines(approval),
    ...renderHostLines(approval),
    `  session   ${escapeText(approval.sessionId)}`,
    `  caller    ${escapedJson(approval.caller)}`,
    ...renderTeamLines(approval),
    `  expires   in ${seconds(approval.expiresAt - now)}`,
    approval.kind === 'tool' ? '  arguments:' : '  action:',
    ...escapedJson(approval.kind === 'tool' ? (approval.args ?? {}) : approval.action, 2)
      .split('\n')
      .map((line) => `    ${line}`),
  ];
  return `${lines.join('\n')}\n`;
}

function renderAgentPreview(approval: PreviewableApproval, agent: AgentActionView, now: number): string {
  const lines = [
    `Approval ${approval.id}: ${approvalSubject(approval)} (agent action)`,
    ...presenceLines(approval),
    ...renderRiskLines(approval),
    ...renderHostLines(approval),
    `  agent     ${escapeText(agent.agent)}`,
    `  session   ${escapeText(approval.sessionId)}`,
    `  cwd       ${agent.cwd === undefined ? '(not given)' : escapeText(agent.cwd)}`,
    ...(agent.kind === undefined ? [] : [`  kind      ${escapeText(agent.kind)}`]),
    ...(agent.command === undefined ? [] : [`  command   ${escapeText(agent.command)}`]),
    ...(agent.policy === undefined ? [] : renderPolicyLines(agent.policy)),
    `  approving for the session remembers ${agent.sessionGrant === undefined ? 'this exact input' : escapeText(agent.sessionGrant)}`,
    ...renderTeamLines(approval),
    `  expires   in ${seconds(approval.expiresAt - now)}`,
    '  input:',
    ...escapedJson(approval.args ?? {}, 2)
      .split('\n')
      .map((line) => `    ${line}`),
  ];
  return `${lines.join('\n')}\n`;
}
