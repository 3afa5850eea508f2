// What an allow did, in words for the operator (R-TEAM-3): approved, one more
// approval of a quorum ("k of N, still pending"), or a repeat that changed nothing.
import { escapeText } from '../../core/base/escape.js';
import type { DecidedView } from '../../service/approvalService.js';

/** The line `assent approve` and the watch view print after an allow; `scopeText` is e.g. " once" or " for the session". */
export function approvalText(id: string, view: Pick<DecidedView, 'decision'>, scopeText = ''): string {
  const { result, principal, approvals, required } = view.decision;
  const who = escapeText(principal);
  if (result === 'partial') return `Approved ${id} as ${who}: ${approvals} of ${required}, still pending.`;
  if (result === 'repeat') return `${who} approved ${id} already; nothing changed: ${approvals} of ${required}, still pending.`;
  return `Approved ${id}${scopeText}${required > 1 ? ` (${approvals} of ${required})` : ''}.`;
}
