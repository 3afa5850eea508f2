// Part of the team store (postgresStore.ts): rules, this host's calls in progress and tokens.
import { AssentError } from '../../core/base/errors.js';
import type { Rule } from '../../core/policy/toolPolicy.js';
import {
  rowToCallInProgress,
  rowToRule,
  rowToToken,
  ruleForm,
  type CallInProgressRecord,
  type CallInProgressRow,
  type RuleRow,
  type TokenRecord,
  type TokenRow,
} from '../journalRecords.js';
import { isUniqueViolation, type PgContext } from './postgresQuery.js';

// ------------------------------------------------------------ rules

export async function insertRule(db: PgContext, rule: Rule): Promise<void> {
  try {
    const { form, pattern } = ruleForm(rule);
    await db.query(
      'INSERT INTO rules (id, version, tool, args, created_at, expires_at, revoked_at, form, pattern, access, agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [rule.id, rule.version, rule.tool ?? '', JSON.stringify(rule.args), rule.createdAt, rule.expiresAt ?? null, rule.revokedAt ?? null, form, pattern, rule.access ?? null, rule.agent ?? null],
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw new AssentError('conflict', `rule id ${rule.id} already exists in the journal; draw a new id and retry`, { details: { id: rule.id } });
    throw error;
  }
}

export async function getRule(db: PgContext, id: string): Promise<Rule | undefined> {
  const row = (await db.query<RuleRow>('SELECT * FROM rules WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToRule(row);
}

export async function listRules(db: PgContext, options: { includeInactive?: boolean; now?: number }, clock: () => number): Promise<Rule[]> {
  if (options.includeInactive === true) return (await db.query<RuleRow>('SELECT * FROM rules ORDER BY created_at, id')).rows.map(rowToRule);
  const now = options.now ?? clock();
  const result = await db.query<RuleRow>(
    'SELECT * FROM rules WHERE (revoked_at IS NULL OR revoked_at > $1) AND (expires_at IS NULL OR expires_at > $1) ORDER BY created_at, id',
    [now],
  );
  return result.rows.map(rowToRule);
}

export async function revokeRule(db: PgContext, id: string, at: number): Promise<boolean> {
  return (await db.query('UPDATE rules SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
}

// ------------------------------------------------------------ calls in progress (this host's)

export async function recordCallInProgress(db: PgContext, record: CallInProgressRecord): Promise<void> {
  await db.query(
    `INSERT INTO calls_in_progress (host_id, call_id, session_id, server, tool, args_sha256, caller, channel, approval_id, rule_id, waited_ms, authorized_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      db.hostId,
      record.callId,
      record.sessionId,
      record.server,
      record.tool,
      record.argsSha256,
      JSON.stringify(record.caller),
      record.channel ?? null,
      record.approvalId ?? null,
      record.ruleId ?? null,
      Math.round(record.waitedForConsentMs),
      record.authorizedAt,
    ],
  );
}

export async function endCallInProgress(db: PgContext, callId: string): Promise<boolean> {
  return (await db.query('DELETE FROM calls_in_progress WHERE host_id = $1 AND call_id = $2', [db.hostId, callId])).rowCount === 1;
}

export async function listCallsInProgress(db: PgContext): Promise<CallInProgressRecord[]> {
  const result = await db.query<CallInProgressRow>('SELECT * FROM calls_in_progress WHERE host_id = $1 ORDER BY authorized_at, call_id', [db.hostId]);
  return result.rows.map(rowToCallInProgress);
}

// ------------------------------------------------------------ tokens

export async function insertToken(db: PgContext, token: TokenRecord): Promise<void> {
  try {
    await db.query('INSERT INTO tokens (id, name, token_sha256, audience, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      token.id,
      token.name,
      token.tokenSha256,
      token.audience,
      token.createdAt,
      token.expiresAt,
      token.revokedAt ?? null,
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AssentError('conflict', `token id ${token.id} already exists in the journal; draw a new id and retry`, { details: { id: token.id } });
    throw error;
  }
}

export async function findTokenByHash(db: PgContext, tokenSha256: string): Promise<TokenRecord | undefined> {
  const row = (await db.query<TokenRow>('SELECT * FROM tokens WHERE token_sha256 = $1', [tokenSha256])).rows[0];
  return row === undefined ? undefined : rowToToken(row);
}

export async function getToken(db: PgContext, id: string): Promise<TokenRecord | undefined> {
  const row = (await db.query<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToToken(row);
}

export async function listTokens(db: PgContext): Promise<TokenRecord[]> {
  return (await db.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id')).rows.map(rowToToken);
}

export async function revokeToken(db: PgContext, id: string, at: number): Promise<boolean> {
  return (await db.query('UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
}
