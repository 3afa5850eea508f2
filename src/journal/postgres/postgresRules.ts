// The team store's auto-approval rules (R-POL-4).
import { AssentError } from '../../core/base/errors.js';
import type { Rule } from '../../core/policy/toolPolicy.js';
import { rowToRule, ruleForm, type RuleRow } from '../journalRecords.js';
import type { RuleStore } from '../store.js';
import { isUniqueViolation, type PgContext } from './postgresQuery.js';

async function insertRule(db: PgContext, rule: Rule): Promise<void> {
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

async function getRule(db: PgContext, id: string): Promise<Rule | undefined> {
  const row = (await db.query<RuleRow>('SELECT * FROM rules WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToRule(row);
}

async function listRules(db: PgContext, options: { includeInactive?: boolean; now?: number }, clock: () => number): Promise<Rule[]> {
  if (options.includeInactive === true) return (await db.query<RuleRow>('SELECT * FROM rules ORDER BY created_at, id')).rows.map(rowToRule);
  const now = options.now ?? clock();
  const result = await db.query<RuleRow>(
    'SELECT * FROM rules WHERE (revoked_at IS NULL OR revoked_at > $1) AND (expires_at IS NULL OR expires_at > $1) ORDER BY created_at, id',
    [now],
  );
  return result.rows.map(rowToRule);
}

async function revokeRule(db: PgContext, id: string, at: number): Promise<boolean> {
  return (await db.query('UPDATE rules SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
}

/** `now` is the service's clock, for "active now". */
export function postgresRules(db: PgContext, now: () => number): RuleStore {
  return {
    insertRule: (rule) => insertRule(db, rule),
    getRule: (id) => getRule(db, id),
    listRules: (options = {}) => listRules(db, options, now),
    revokeRule: (id, at) => revokeRule(db, id, at),
  };
}
