import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A query of fixed shape that runs on every edit, compiled by Kysely once per SQL dialect and
 * then run with each call's values (issue 18 item 5). Kysely builds an immutable tree of
 * operation nodes and compiles it to SQL on every execution; for the queries of the edit
 * path that is a quarter of a millisecond of CPU each (usageOf, measured on the bench
 * machine), against some tens of microseconds for SQLite to run the statement.
 *
 * How: the query is built once with a unique marker string in place of every value the
 * caller passes, compiled, and the compiled parameter list is read back as the order of
 * those values; later calls send the same SQL with the values in that order. A build that
 * binds anything other than the markers (a value computed from one, a constant turned into a
 * parameter) is refused when it is first run, so a parameter can never be filled with the
 * wrong value. Only plain `=`-style comparisons and inserted values belong in `values`:
 * something the builder inspects (`is null` for null, `in` over a list) changes the SQL.
 */
export interface PreparedQuery<P extends Record<string, unknown>, R> {
  /** The rows of the query with these values, on `db` (a transaction works too). */
  rows(db: Kysely<Database>, values: P): Promise<R[]>;
  /** Affected rows of an insert, update or delete (0 when the driver does not say). */
  run(db: Kysely<Database>, values: P): Promise<number>;
}

const MARK = '\u0000prepared-value:';

export function prepared<P extends Record<string, unknown>, R = unknown>(
  names: readonly (keyof P & string)[],
  build: (db: Kysely<Database>, values: P) => Compilable<R>,
): PreparedQuery<P, R> {
  // By adapter class: SQLite and PostgreSQL write different SQL for the same tree.
  const compiled = new Map<unknown, { sql: string; order: (keyof P & string)[] }>();
  const compile = (db: Kysely<Database>) => {
    const dialect = db.getExecutor().adapter.constructor;
    let c = compiled.get(dialect);
    if (!c) {
      const marks = Object.fromEntries(names.map((n) => [n, `${MARK}${n}\u0000`])) as unknown as P;
      const q = build(db, marks).compile();
      const order = q.parameters.map((v) => {
        const name = typeof v === 'string' && v.startsWith(MARK) ? v.slice(MARK.length, -1) : undefined;
        if (name === undefined || !names.includes(name)) {
          throw new Error(`prepared query binds a value that is not one of its named values: ${q.sql}`);
        }
        return name;
      });
      c = { sql: q.sql, order };
      compiled.set(dialect, c);
    }
    return c;
  };
  const execute = (db: Kysely<Database>, values: P) => {
    const c = compile(db);
    return db.executeQuery<R>(
      CompiledQuery.raw(
        c.sql,
        c.order.map((n) => values[n]),
      ),
    );
  };
  return {
    async rows(db, values) {
      return (await execute(db, values)).rows;
    },
    async run(db, values) {
      const r = await execute(db, values);
      return Number(r.numAffectedRows ?? 0n);
    },
  };
}
