// Each query written once, for both engines (issue 21): built with kysely's typed
// builder (queries.ts), compiled per dialect ahead of time into compiled.ts, so
// that nothing at run time loads kysely or compiles anything. A value that
// varies is a named `param`; the compiled text keeps its place, and `bind` puts
// the call's values there in order. The engines run the text with their own
// drivers: better-sqlite3 synchronously (the daemon's hot path stays one
// in-process call), pg asynchronously.

export type Engine = 'sqlite' | 'postgres';

/** A named placeholder in a query built once; `bind` fills it from the call's values. */
export class Param {
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

/** The parameter values of one call, in the order the compiled text wants them; a missing named value fails loudly. */
export function bind(query: Prepared, values: Readonly<Record<string, unknown>> = {}): unknown[] {
  const { slots } = query;
  const parameters = new Array<unknown>(slots.length);
  for (let i = 0; i < slots.length; i += 1) {
    const slot = slots[i]!;
    if ('value' in slot) {
      parameters[i] = slot.value;
      continue;
    }
    const value = values[slot.name];
    if (value === undefined) throw new Error(`query ${query.sql} needs a value for ${slot.name} (null, not undefined, for none)`);
    parameters[i] = value;
  }
  return parameters;
}
