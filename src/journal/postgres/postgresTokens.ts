// The team store's bearer tokens (R-WEB-4): metadata and hashes only, shared by
// every host of the team; the statements are written once for both engines (../tokenRules.ts).
import * as tokenRules from '../tokenRules.js';
import type { TokenStore } from '../store.js';
import { isUniqueViolation, runPgSteps, type PgContext } from './postgresQuery.js';

export function postgresTokens(db: PgContext): TokenStore {
  const ctx: tokenRules.TokenRuleContext = { q: tokenRules.TOKEN_RULE_QUERIES.postgres, isUniqueViolation };
  return {
    insertToken: (token) => runPgSteps(db.query, tokenRules.insertToken(ctx, token)),
    findTokenByHash: (hash) => runPgSteps(db.query, tokenRules.findTokenByHash(ctx, hash)),
    getToken: (id) => runPgSteps(db.query, tokenRules.getToken(ctx, id)),
    listTokens: () => runPgSteps(db.query, tokenRules.listTokens(ctx)),
    revokeToken: (id, at) => runPgSteps(db.query, tokenRules.revokeToken(ctx, id, at)),
  };
}
