// Bearer tokens (R-WEB-4) and auto-approval rules (R-POL-4), written once for
// both engines: each query (kysely, in sql/queries.ts, compiled per dialect
// into sql/compiled.ts) and each
// operation as steps (sql/steps.ts), which the embedded journal runs
// synchronously (journal.ts) and the team store asynchronously
// (postgres/postgresTokens.ts, postgres/postgresRules.ts).
import { AssentError } from '../core/base/errors.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import { rowToRule, rowToToken, ruleForm, type RuleRow, type TokenRecord, type TokenRow } from './journalRecords.js';
import { COMPILED } from './sql/compiled.js';
import type { Engine } from './sql/prepared.js';
import { all, changed, insertUnique, one, type Steps } from './sql/steps.js';

export const TOKEN_RULE_QUERIES = COMPILED.tokenRules;

/** One engine's queries and its error for a duplicate key. */
export interface TokenRuleContext {
  q: (typeof TOKEN_RULE_QUERIES)[Engine];
  isUniqueViolation(error: unknown): boolean;
}

// ------------------------------------------------------------ tokens

/** Stores a bearer token's metadata and hash (never the token). Throws `conflict` when the id is taken. */
export function* insertToken(ctx: TokenRuleContext, token: TokenRecord): Steps<void> {
  const values = {
    id: token.id,
    name: token.name,
    token_sha256: token.tokenSha256,
    audience: token.audience,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    revoked_at: token.revokedAt ?? null,
  };
  yield* insertUnique(ctx.q.insertToken, values, ctx.isUniqueViolation, (cause) =>
    new AssentError('conflict', `token id ${token.id} already exists in the journal; draw a new id and retry`, { cause, details: { id: token.id } }),
  );
}

/** The token whose SHA-256 is `tokenSha256`, whatever its state; the caller checks audience, expiry and revocation. */
export function* findTokenByHash(ctx: TokenRuleContext, tokenSha256: string): Steps<TokenRecord | undefined> {
  const row = yield* one<TokenRow>(ctx.q.tokenByHash, { token_sha256: tokenSha256 });
  return row === undefined ? undefined : rowToToken(row);
}

export function* getToken(ctx: TokenRuleContext, id: string): Steps<TokenRecord | undefined> {
  const row = yield* one<TokenRow>(ctx.q.tokenById, { id });
  return row === undefined ? undefined : rowToToken(row);
}

/** Every token, oldest first. */
export function* listTokens(ctx: TokenRuleContext): Steps<TokenRecord[]> {
  return (yield* all<TokenRow>(ctx.q.listTokens)).map(rowToToken);
}

/** Marks a token revoked at `at`; false when it does not exist or was already revoked. */
export function* revokeToken(ctx: TokenRuleContext, id: string, at: number): Steps<boolean> {
  return yield* changed(ctx.q.revokeToken, { at, id });
}

// ------------------------------------------------------------ rules

/** Stores a rule. Throws `conflict` when the id is taken. */
export function* insertRule(ctx: TokenRuleContext, rule: Rule): Steps<void> {
  const { form, pattern } = ruleForm(rule);
  const values = {
    id: rule.id,
    version: rule.version,
    tool: rule.tool ?? '',
    args: JSON.stringify(rule.args),
    created_at: rule.createdAt,
    expires_at: rule.expiresAt ?? null,
    revoked_at: rule.revokedAt ?? null,
    form,
    pattern,
    access: rule.access ?? null,
    agent: rule.agent ?? null,
  };
  yield* insertUnique(ctx.q.insertRule, values, ctx.isUniqueViolation, (cause) =>
    new AssentError('conflict', `rule id ${rule.id} already exists in the journal; draw a new id and retry`, { cause, details: { id: rule.id } }),
  );
}

export function* getRule(ctx: TokenRuleContext, id: string): Steps<Rule | undefined> {
  const row = yield* one<RuleRow>(ctx.q.ruleById, { id });
  return row === undefined ? undefined : rowToRule(row);
}

/** Active rules (not revoked, not expired at `now`) unless includeInactive. Oldest first. */
export function* listRules(ctx: TokenRuleContext, includeInactive: boolean, now: number): Steps<Rule[]> {
  const rows = includeInactive ? yield* all<RuleRow>(ctx.q.listAllRules) : yield* all<RuleRow>(ctx.q.listActiveRules, { now });
  return rows.map(rowToRule);
}

/** Marks a rule revoked at `at`; false when it does not exist or was already revoked. */
export function* revokeRule(ctx: TokenRuleContext, id: string, at: number): Steps<boolean> {
  return yield* changed(ctx.q.revokeRule, { at, id });
}
