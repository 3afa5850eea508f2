// Each query written once, for both engines (issue 21): built with kysely's typed
// builder and compiled once per dialect at load, never per call. A value that
// varies is a named `param`; the compiled text keeps its place, and `bind` puts
// the call's values there in order. The engines run the text with their own
// drivers: better-sqlite3 synchronously (the daemon's hot path stays one
// in-process call), pg asynchronously.
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
} from 'kysely';

export type Engine = 'sqlite' | 'postgres';

/** A named placeholder in a query built once; `bind` fills it from the call's values. */
class Param {
  constructor(readonly name: string) {}
}

/** A placeholder typed as the value it stands for, so the builder checks the column it goes in. */
export function param<T = string>(name: string): T {
  return new Param(name) as unknown as T;
}

/** A query compiled for one engine: its text, and where each of its parameters comes from. */
export interface Prepared {
  readonly sql: string;
  /** Per parameter, the name of the call's value, or the constant the query was built with. */
  readonly slots: readonly ({ name: string } | { value: unknown })[];
}

export function prepared(query: CompiledQuery): Prepared {
  return { sql: query.sql, slots: query.parameters.map((value) => (value instanceof Param ? { name: value.name } : { value })) };
}

/** The parameter values of one call, in the order the compiled text wants them; a missing named value fails loudly. */
export function bind(query: Prepared, values: Readonly<Record<string, unknown>> = {}): unknown[] {
  return query.slots.map((slot) => {
    if ('value' in slot) return slot.value;
    const value = values[slot.name];
    if (value === undefined) throw new Error(`query ${query.sql} needs a value for ${slot.name} (null, not undefined, for none)`);
    return value;
  });
}

/** A kysely instance that only compiles (it has no connection): for DDL and the queries below. */
export function compileOnly<DB>(engine: Engine): Kysely<DB> {
  return new Kysely<DB>({
    dialect:
      engine === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => new PostgresAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new PostgresIntrospector(db),
            createQueryCompiler: () => new PostgresQueryCompiler(),
          },
  });
}

/**
 * Compiles a set of queries, written once against the typed builder, for both
 * engines; `build` learns which engine it builds for only where the engines
 * truly differ (a row lock).
 */
export function prepareForEngines<DB, Q extends Record<string, CompiledQuery>>(build: (db: Kysely<DB>, engine: Engine) => Q): Record<Engine, { [K in keyof Q]: Prepared }> {
  const forEngine = (engine: Engine): { [K in keyof Q]: Prepared } => {
    const compiled = build(compileOnly<DB>(engine), engine);
    return Object.fromEntries(Object.entries(compiled).map(([name, query]) => [name, prepared(query)])) as { [K in keyof Q]: Prepared };
  };
  return { sqlite: forEngine('sqlite'), postgres: forEngine('postgres') };
}
