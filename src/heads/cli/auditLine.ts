// One audit record as a short line for people (`assent audit`, `assent audit
// --follow`): when, the outcome, the tool, the channel that decided it, and the
// digest of the exact input — never the input itself (R-HOOK-10). A call that
// ran in the sandbox (R-SH-14) says "(confined)".
import { escapeText } from '../../core/base/escape.js';

export function auditLineText(record: Record<string, unknown>): string {
  const tool = escapeText(`${String(record['server'] ?? record['kind'] ?? '')}/${String(record['tool'] ?? '')}`);
  const confined = typeof record['confined'] === 'string' ? ' (confined)' : '';
  return `${String(record['ts'])}  ${String(record['outcome'])}  ${tool}  ${escapeText(String(record['channel'] ?? '-'))}${confined}  ${String(record['argsSha256'])}`;
}
