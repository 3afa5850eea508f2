// Exact-match evaluation of an exec action against a schema-2 policy (SPEC §6).
import type { ExecAction } from './action.js';
import { canonicalJson } from '../base/canonical.js';
import type { ExecDecision, ExecPolicy } from './execFiles.js';

/**
 * Whole-action structural equality through canonical JSON, so key order is
 * ignored while argument order, types and extra fields matter. No wildcards or
 * prefixes: a rule names exactly one action. First match wins, else the default.
 */
export function evaluateExecPolicy(policy: ExecPolicy, action: ExecAction): ExecDecision {
  const wanted = canonicalJson(action);
  for (const rule of policy.rules) {
    if (canonicalJson(rule.action) === wanted) return rule.decision;
  }
  return policy.defaultDecision;
}
