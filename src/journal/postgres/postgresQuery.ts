// What the team store's statement modules are given: its error-mapping query and
// transaction helpers and this host's id, so each concern's SQL lives in its own file.
import pg from 'pg';
import { bind } from '../sql/prepared.js';
import { runSteps, type Steps } from '../sql/steps.js';

export type PgQuery = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;
export type PgTransaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

export interface PgContext {
  readonly hostId: string;
  readonly query: PgQuery;
  readonly transaction: PgTransaction;
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505';
}

/** BIGINT columns (times, seq) come back as numbers: every value we store fits a double exactly. */
const INT8_OID = 20;
export const PG_TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (value: string) => Number(value) : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format)) as never,
};

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED']);
const CONNECTION_TEXT = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|not queryable|Connection ended|terminating connection|the database system is (shutting down|starting up)/i;

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return error instanceof Error && CONNECTION_TEXT.test(error.message);
}

/** The PostgreSQL engine's step runner (../sql/steps.ts): each step one statement on `query` (the pool, or a transaction's client). */
export function runPgSteps<T>(query: PgQuery, steps: Steps<T>): Promise<T> {
  return runSteps(steps, async (step) => {
    const answer = await query<pg.QueryResultRow>(step.query.sql, bind(step.query, step.values));
    // A raw step wants each row as an array in the query's column order, as SQLite's raw mode gives it.
    const rows = step.raw === true ? answer.rows.map((row) => answer.fields.map((field) => row[field.name] as unknown)) : answer.rows;
    return { rows, changes: answer.rowCount ?? 0 };
  });
}

/** A transaction's client as a PgQuery. */
export function clientQuery(client: pg.PoolClient): PgQuery {
  return (text, values) => client.query(text, values);
}
