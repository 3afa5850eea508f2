// Ordering of decisions: deny > prompt > allow (R-SH-2, R-PATH-1).
import type { PolicyValue } from './policyValue.js';

const RANK: Readonly<Record<PolicyValue, number>> = Object.freeze({ allow: 0, prompt: 1, deny: 2 });

/** The more restrictive of two decisions. */
export function mostRestrictive(a: PolicyValue, b: PolicyValue): PolicyValue {
  return RANK[b] > RANK[a] ? b : a;
}

/** At least `prompt`: what is not statically known is never allowed (R-SH-3). */
export function atLeastPrompt(decision: PolicyValue): PolicyValue {
  return decision === 'allow' ? 'prompt' : decision;
}
