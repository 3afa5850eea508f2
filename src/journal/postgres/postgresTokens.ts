// The team store's bearer tokens (R-WEB-4): metadata and hashes only, shared by every host of the team.
import { AssentError } from '../../core/base/errors.js';
import { rowToToken, type TokenRecord, type TokenRow } from '../journalRecords.js';
import type { TokenStore } from '../store.js';
import { isUniqueViolation, type PgContext } from './postgresQuery.js';

async function insertToken(db: PgContext, token: TokenRecord): Promise<void> {
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

async function findTokenByHash(db: PgContext, tokenSha256: string): Promise<TokenRecord | undefined> {
  const row = (await db.query<TokenRow>('SELECT * FROM tokens WHERE token_sha256 = $1', [tokenSha256])).rows[0];
  return row === undefined ? undefined : rowToToken(row);
}

async function getToken(db: PgContext, id: string): Promise<TokenRecord | undefined> {
  const row = (await db.query<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToToken(row);
}

async function listTokens(db: PgContext): Promise<TokenRecord[]> {
  return (await db.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id')).rows.map(rowToToken);
}

async function revokeToken(db: PgContext, id: string, at: number): Promise<boolean> {
  return (await db.query('UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount === 1;
}

export function postgresTokens(db: PgContext): TokenStore {
  return {
    insertToken: (token) => insertToken(db, token),
    findTokenByHash: (hash) => findTokenByHash(db, hash),
    getToken: (id) => getToken(db, id),
    listTokens: () => listTokens(db),
    revokeToken: (id, at) => revokeToken(db, id, at),
  };
}
