// Bearer tokens (R-WEB-4) and auto-approval rules (R-POL-4), written once for
// both engines: each query (kysely, compiled once per dialect) and each
// operation as steps (sql/steps.ts), which the embedded journal runs
// synchronously (journal.ts) and the team store asynchronously
// (postgres/postgresTokens.ts, postgres/postgresRules.ts).
import type { Kysely } from 'kysely';
import { AssentError } from '../core/base/errors.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import { rowToRule, rowToToken, ruleForm, type RuleRow, type TokenRecord, type TokenRow } from './journalRecords.js';
import { param, prepareForEngines, type Engine } from './sql/prepared.js';
import { all, changed, one, type Steps } from './sql/steps.js';

interface Tables {
  tokens: TokenRow;
  rules: RuleRow;
}

function buildQueries(db: Kysely<Tables>) {
  return {
    insertToken: db
      .insertInto('tokens')
      .values({
        id: param('id'),
        name: param('name'),
        token_sha256: param('token_sha256'),
        audience: param('audience'),
        created_at: param<number>('created_at'),
        expires_at: param<number>('expires_at'),
        revoked_at: param<number | null>('revoked_at'),
      })
      .compile(),
    tokenByHash: db.selectFrom('tokens').selectAll().where('token_sha256', '=', param('token_sha256')).compile(),
    tokenById: db.selectFrom('tokens').selectAll().where('id', '=', param('id')).compile(),
    listTokens: db.selectFrom('tokens').selectAll().orderBy('created_at').orderBy('id').compile(),
    revokeToken: db.updateTable('tokens').set({ revoked_at: param<number>('at') }).where('id', '=', param('id')).where('revoked_at', 'is', null).compile(),
    insertRule: db
      .insertInto('rules')
      .values({
        id: param('id'),
        version: param<number>('version'),
        tool: param('tool'),
        args: param('args'),
        created_at: param<number>('created_at'),
        expires_at: param<number | null>('expires_at'),
        revoked_at: param<number | null>('revoked_at'),
        form: param('form'),
        pattern: param<string | null>('pattern'),
        access: param<string | null>('access'),
        agent: param<string | null>('agent'),
      })
      .compile(),
    ruleById: db.selectFrom('rules').selectAll().where('id', '=', param('id')).compile(),
    listAllRules: db.selectFrom('rules').selectAll().orderBy('created_at').orderBy('id').compile(),
    listActiveRules: db
      .selectFrom('rules')
      .selectAll()
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', param<number>('now'))]))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', param<number>('now'))]))
      .orderBy('created_at')
      .orderBy('id')
      .compile(),
    revokeRule: db.updateTable('rules').set({ revoked_at: param<number>('at') }).where('id', '=', param('id')).where('revoked_at', 'is', null).compile(),
  };
}

export const TOKEN_RULE_QUERIES = prepareForEngines<Tables, ReturnType<typeof buildQueries>>(buildQueries);

/** One engine's queries and its error for a duplicate key. */
export interface TokenRuleContext {
  q: (typeof TOKEN_RULE_QUERIES)[Engine];
  isUniqueViolation(error: unknown): boolean;
}

// ------------------------------------------------------------ tokens

/** Stores a bearer token's metadata and hash (never the token). Throws `conflict` when the id is taken. */
export function* insertToken(ctx: TokenRuleContext, token: TokenRecord): Steps<void> {
  try {
    yield {
      query: ctx.q.insertToken,
      values: {
        id: token.id,
        name: token.name,
        token_sha256: token.tokenSha256,
        audience: token.audience,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        revoked_at: token.revokedAt ?? null,
      },
    };
  } catch (error) {
    if (ctx.isUniqueViolation(error)) {
      throw new AssentError('conflict', `token id ${token.id} already exists in the journal; draw a new id and retry`, { cause: error, details: { id: token.id } });
    }
    throw error;
  }
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
  try {
    yield {
      query: ctx.q.insertRule,
      values: {
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
      },
    };
  } catch (error) {
    if (ctx.isUniqueViolation(error)) {
      throw new AssentError('conflict', `rule id ${rule.id} already exists in the journal; draw a new id and retry`, { cause: error, details: { id: rule.id } });
    }
    throw error;
  }
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
