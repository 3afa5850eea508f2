// Compiling the queries of queries.ts with kysely, for each engine: used when
// compiled.ts is written (scripts/writeQueries.mjs) and by the test that checks
// it is current; never at run time.
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
import { Param, type Engine, type Prepared } from './prepared.js';

export function prepared(query: CompiledQuery): Prepared {
  return { sql: query.sql, slots: query.parameters.map((value) => (value instanceof Param ? { name: value.name } : { value })) };
}

/** A kysely instance that only compiles (it has no connection). */
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

/** Compiles a set of queries, written once, for both engines; `build` learns the engine only where they truly differ (a row lock). */
export function prepareForEngines<DB>(build: (db: Kysely<DB>, engine: Engine) => Record<string, CompiledQuery>): Record<Engine, Record<string, Prepared>> {
  const forEngine = (engine: Engine): Record<string, Prepared> =>
    Object.fromEntries(Object.entries(build(compileOnly<DB>(engine), engine)).map(([name, query]) => [name, prepared(query)]));
  return { sqlite: forEngine('sqlite'), postgres: forEngine('postgres') };
}
