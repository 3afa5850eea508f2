// The team store's auto-approval rules (R-POL-4); the statements are written once for both engines (../tokenRules.ts).
import * as tokenRules from '../tokenRules.js';
import type { RuleStore } from '../store.js';
import { isUniqueViolation, runPgSteps, type PgContext } from './postgresQuery.js';

/** `now` is the service's clock, for "active now". */
export function postgresRules(db: PgContext, now: () => number): RuleStore {
  const ctx: tokenRules.TokenRuleContext = { q: tokenRules.TOKEN_RULE_QUERIES.postgres, isUniqueViolation };
  return {
    insertRule: (rule) => runPgSteps(db.query, tokenRules.insertRule(ctx, rule)),
    getRule: (id) => runPgSteps(db.query, tokenRules.getRule(ctx, id)),
    listRules: (options = {}) => runPgSteps(db.query, tokenRules.listRules(ctx, options.includeInactive === true, options.now ?? now())),
    revokeRule: (id, at) => runPgSteps(db.query, tokenRules.revokeRule(ctx, id, at)),
  };
}
