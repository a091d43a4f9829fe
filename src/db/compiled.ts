import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type Kysely,
  type QueryResult,
  type RootOperationNode,
} from 'kysely'
import type { Executor } from './connection.js'
import type { Database } from './schema.js'

/**
 * Queries on the hot paths, built with Kysely once and run many times.
 *
 * Building a Kysely query and compiling it to SQL cost about 15 % of the CPU of a create
 * (docs/performance.md), and the result is the same SQL text every time: only the parameters
 * change. `compiled()` takes a function that builds the query from named parameters; it is called
 * once per dialect with stand-ins for the parameters, and the SQL and the places of the stand-ins
 * among the query's parameters are kept. Running the query then only puts the values in those
 * places and hands SQL and values to the driver (on SQLite, to a statement prepared once).
 *
 * The builder must make the same SQL whatever the values: a parameter may appear anywhere Kysely
 * takes a value (`where`, `values`, `set`, `limit`), but not as a list (`in`), and must not decide
 * the query's shape (`$if`); queries whose shape depends on the request stay ordinary Kysely.
 */
export interface CompiledStatement<P, R> {
  /** All rows. */
  rows(db: Executor, params: P): Promise<R[]>
  /** The first row, if any. */
  first(db: Executor, params: P): Promise<R | undefined>
  /** Rows and the number of rows changed (insert, update, delete). */
  run(db: Executor, params: P): Promise<QueryResult<R>>
}

class Parameter {
  constructor(readonly name: string) {}
}

interface Template {
  sql: string
  query: RootOperationNode
  /** Per parameter of the SQL: the name of a `P` field, or a constant the builder wrote. */
  slots: Array<{ name: string } | { value: unknown }>
}

export function compiled<P extends Record<string, unknown>, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): CompiledStatement<P, R> {
  // One template per dialect: SQLite and PostgreSQL write placeholders and quotes differently.
  const templates = new Map<unknown, Template>()

  const template = (db: Executor): Template => {
    const adapter = db.getExecutor().adapter.constructor
    const known = templates.get(adapter)
    if (known) return known
    const standIns = new Proxy({} as P, {
      get: (_target, name) => (typeof name === 'string' ? new Parameter(name) : undefined),
    })
    const query = build(db, standIns).compile()
    const made: Template = {
      sql: query.sql,
      query: query.query,
      slots: query.parameters.map((value) => (value instanceof Parameter ? { name: value.name } : { value })),
    }
    templates.set(adapter, made)
    return made
  }

  const run = (db: Executor, params: P): Promise<QueryResult<R>> => {
    const { sql, query, slots } = template(db)
    const parameters = slots.map((slot) => {
      if (!('name' in slot)) return slot.value
      const value = params[slot.name]
      // Kysely leaves out a column whose value is undefined; here the SQL is fixed, so refuse it.
      if (value === undefined) throw new Error(`compiled query: parameter ${slot.name} is undefined`)
      return value
    })
    const compiledQuery: CompiledQuery<R> = { sql, query, parameters, queryId: createQueryId() }
    return db.executeQuery(compiledQuery)
  }

  return {
    run,
    rows: async (db, params) => (await run(db, params)).rows,
    first: async (db, params) => (await run(db, params)).rows[0],
  }
}
