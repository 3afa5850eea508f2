// An operation written once for both engines is a sequence of steps: a query
// (compiled once per dialect, prepared.ts) and the call's values. The engine
// runs each step and sends its result back into the operation, or throws its
// error there (so the operation's own try/catch maps a duplicate key). SQLite
// runs them synchronously (sqliteSteps.ts), PostgreSQL asynchronously
// (postgres/postgresQuery.ts `runSteps`).
import type { Prepared } from './prepared.js';

/** One query of an operation, with the call's values. */
export interface Step {
  query: Prepared;
  values?: Record<string, unknown>;
  /** Rows as arrays in the query's column order, not objects (the approval listings: no named-key object per row). */
  raw?: true;
}

/** What the engine answers a step with: the rows (selects, RETURNING) and how many rows changed. */
export interface StepResult {
  rows: readonly unknown[];
  changes: number;
  /** The rowid an insert gave its row, where the engine reports it without RETURNING (SQLite). */
  lastRowId?: number;
}

/** An operation: the engine runs each step it yields and sends back the result (or throws the engine's error into it). */
export type Steps<T> = Generator<Step, T, StepResult>;

/** The first row a query returns, if any. */
export function* one<R>(query: Prepared, values: Record<string, unknown> = {}): Generator<Step, R | undefined, StepResult> {
  return (yield { query, values }).rows[0] as R | undefined;
}

/** Every row a query returns. */
export function* all<R>(query: Prepared, values: Record<string, unknown> = {}): Generator<Step, R[], StepResult> {
  return (yield { query, values }).rows as R[];
}

/** The first row a query returns, as an array in its column order, if any. */
export function* oneRaw<R extends unknown[]>(query: Prepared, values: Record<string, unknown> = {}): Generator<Step, R | undefined, StepResult> {
  return (yield { query, values, raw: true }).rows[0] as R | undefined;
}

/** Every row a query returns, each an array in its column order. */
export function* allRaw<R extends unknown[]>(query: Prepared, values: Record<string, unknown> = {}): Generator<Step, R[], StepResult> {
  return (yield { query, values, raw: true }).rows as R[];
}

/** True when the statement changed exactly one row. */
export function* changed(query: Prepared, values: Record<string, unknown> = {}): Generator<Step, boolean, StepResult> {
  return (yield { query, values }).changes === 1;
}

/** An insert whose duplicate key (the engine's `isUniqueViolation`) becomes the caller's `conflict` error; any other failure is thrown as it is. */
export function* insertUnique(query: Prepared, values: Record<string, unknown>, isUniqueViolation: (error: unknown) => boolean, conflict: (cause: unknown) => Error): Generator<Step, void, StepResult> {
  try {
    yield { query, values };
  } catch (error) {
    throw isUniqueViolation(error) ? conflict(error) : error;
  }
}

/** Drives an operation with a synchronous engine. */
export function runStepsSync<T>(steps: Steps<T>, execute: (step: Step) => StepResult): T {
  let next = steps.next();
  while (next.done !== true) {
    let result: StepResult;
    try {
      result = execute(next.value);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(result);
  }
  return next.value;
}

/** Drives an operation with an asynchronous engine. */
export async function runSteps<T>(steps: Steps<T>, execute: (step: Step) => Promise<StepResult>): Promise<T> {
  let next = steps.next();
  while (next.done !== true) {
    let result: StepResult;
    try {
      result = await execute(next.value);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(result);
  }
  return next.value;
}
