// Which policy key decided a call, as its audit record names it (R-AUD-1
// `ruleId`, R-AUD-4): the key `policy explain` names, and nothing it quotes.
import type { ToolPolicyResult } from './toolPolicy.js';

/**
 * The policy key a record names as the rule that decided: the key `policy
 * explain` names, without the pattern a rule key carries after it
 * (`policy.commands.rules.35 "curl *"` is `policy.commands.rules.35`), which
 * may quote a command or a path. Undefined when an auto-approval rule decided
 * (its own id is then the record's ruleId).
 */
export function decidingPolicyKey(result: Pick<ToolPolicyResult, 'source' | 'key'>): string | undefined {
  if (result.source === 'rule') return undefined;
  // A tool's own entry names the tool id whole, whatever it holds.
  if (result.source === 'tool' && result.key !== undefined) return result.key;
  const key = result.key?.split(' ', 1)[0];
  if (key !== undefined && key.startsWith('policy.')) return key;
  // A part judged outside any key (`assignment`, `parse`): the kind's section decided.
  return result.source === 'commands' || result.source === 'paths' || result.source === 'urls' ? `policy.${result.source}` : undefined;
}
