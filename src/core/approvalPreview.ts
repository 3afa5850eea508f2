// What an operator sees before deciding a pending approval: every argument,
// complete and escaped (R-TTY-3 rules apply to tool calls too).
import { escapedJson, escapeText } from './escape.js';

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

/** The complete preview: header lines, then the arguments (or exec action) as escaped JSON. */
export function renderApprovalPreview(approval: PreviewableApproval, now: number): string {
  const lines = [
    `Approval ${approval.id}: ${approvalSubject(approval)}`,
    `  session   ${escapeText(approval.sessionId)}`,
    `  caller    ${escapedJson(approval.caller)}`,
    `  expires   in ${seconds(approval.expiresAt - now)}`,
    approval.kind === 'tool' ? '  arguments:' : '  action:',
    ...escapedJson(approval.kind === 'tool' ? (approval.args ?? {}) : approval.action, 2)
      .split('\n')
      .map((line) => `    ${line}`),
  ];
  return `${lines.join('\n')}\n`;
}
