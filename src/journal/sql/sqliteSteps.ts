// The SQLite engine's step runner: each query's statement prepared on first
// use on one better-sqlite3 connection (keyed by the compiled query itself, no
// hashing of its text per call), run synchronously.
import type Database from 'better-sqlite3';
import { bind, type Prepared } from './prepared.js';
import { runStepsSync, type Step, type StepResult, type Steps } from './steps.js';

export function isSqliteConstraint(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

/** A write's rows: none, one shared array for every run. */
const NO_ROWS: readonly unknown[] = Object.freeze([]);

export class SqliteSteps {
  private readonly statements = new Map<Prepared, { statement: Database.Statement; reader: boolean; raw: boolean }>();

  /** One function for every run (not a closure per call). */
  private readonly execute = ({ query, values, raw }: Step): StepResult => {
    let prepared = this.statements.get(query);
    if (prepared === undefined) {
      const statement = this.db.prepare(query.sql);
      // A raw step's statement answers arrays (better-sqlite3's raw mode), set once on the cached statement.
      if (raw === true) statement.raw(true);
      prepared = { statement, reader: statement.reader, raw: raw === true };
      this.statements.set(query, prepared);
    } else if (prepared.raw !== (raw === true)) {
      throw new Error(`query ${query.sql} is read both as arrays and as objects; give each use its own compiled query`);
    }
    const parameters = bind(query, values);
    if (prepared.reader) return { rows: prepared.statement.all(...parameters), changes: 0 };
    // The rowid comes with the run's answer: an insert that needs it (an event's seq) costs no RETURNING here.
    const info = prepared.statement.run(...parameters);
    return { rows: NO_ROWS, changes: info.changes, lastRowId: Number(info.lastInsertRowid) };
  };

  constructor(private readonly db: Database.Database) {}

  /** Runs an operation's steps at once. */
  run<T>(steps: Steps<T>): T {
    return runStepsSync(steps, this.execute);
  }

  /** Runs an operation in one BEGIN IMMEDIATE transaction: the write lock is taken up front, so racing processes serialize. */
  runLocked<T>(steps: () => Steps<T>): T {
    return this.db.transaction(() => this.run(steps())).immediate();
  }
}
