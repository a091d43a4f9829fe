import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type Kysely,
  type QueryResult,
  type RootOperationNode,
  type Selectable,
  SelectQueryNode,
  SqliteAdapter,
  ValueNode,
} from 'kysely'
import type { Executor, Trx } from './connection.js'
import type { Database } from './schema.js'
import { Lease } from './sqlite-driver.js'
import { connectionOf } from './transaction-connection.js'

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
 * Parameters may also be a list of rows of a fixed length (`p[0].id`: see `compiledInsertRows`).
 *
 * One exception, made here: on SQLite a LIMIT is written into the SQL text (see
 * `LiteralLimitCompiler` in sqlite-driver.ts), so a query whose LIMIT is a parameter is built once
 * per distinct limit there (a page size plus one), each kept like any other template.
 */
export interface CompiledStatement<P, R> {
  /** All rows. */
  rows(db: Executor, params: P): Promise<R[]>
  /** The first row, if any. */
  first(db: Executor, params: P): Promise<R | undefined>
  /** Rows and the number of rows changed (insert, update, delete). */
  run(db: Executor, params: P): Promise<QueryResult<R>>
  /** The SQL and parameters a run would execute (to EXPLAIN it). */
  compile(db: Executor, params: P): CompiledQuery<R>
}

/** A stand-in for a parameter: a field of `P`, or with `row`, a field of the row `P[row]`. */
class Parameter {
  constructor(
    readonly name: string,
    readonly row?: number,
  ) {}
}

/** The stand-ins of row `row` of parameters that are a list of rows (a multi-row INSERT). */
function rowStandIns(row: number): Record<string, Parameter> {
  return new Proxy({} as Record<string, Parameter>, {
    get: (_target, name) => (typeof name === 'string' ? new Parameter(name, row) : undefined),
  })
}

/** A property name that is a row's index: parameters given as a list of rows. */
const ROW_INDEX = /^\d+$/

/** Limits remembered per query on SQLite; a limit beyond them is built again at each run. */
const MAX_LIMIT_VARIANTS = 512

/** The parameter a SELECT's LIMIT is bound to, if it is one. */
function limitParameter(node: RootOperationNode): string | undefined {
  if (!SelectQueryNode.is(node)) return undefined
  const limit = node.limit?.limit
  return limit !== undefined && ValueNode.is(limit) && limit.value instanceof Parameter
    ? limit.value.name
    : undefined
}

interface Template {
  sql: string
  query: RootOperationNode
  /** Per parameter of the SQL: a field of `P` (of one of its rows), or a constant the builder wrote. */
  slots: Array<{ name: string; row?: number } | { value: unknown }>
}

export function compiled<P extends object, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): CompiledStatement<P, R> {
  // One template per dialect: SQLite and PostgreSQL write placeholders and quotes differently.
  const templates = new Map<unknown, Template>()
  // On SQLite, when the LIMIT is a parameter: its name, and one template per limit value.
  let sqliteLimit: { name: string; templates: Map<unknown, Template> } | undefined

  /** Built with stand-ins for the parameters, except `literal` (SQLite's LIMIT), given its value. */
  const make = (db: Executor, literal?: { name: string; value: unknown }): Template => {
    const standIns = new Proxy({} as P, {
      get: (_target, name) => {
        if (typeof name !== 'string') return undefined
        if (name === literal?.name) return literal.value
        // `P` a list of rows: `p[0].id` is the field `id` of the first row.
        return ROW_INDEX.test(name) ? rowStandIns(Number(name)) : new Parameter(name)
      },
    })
    const query = build(db, standIns).compile()
    return {
      sql: query.sql,
      query: query.query,
      slots: query.parameters.map((value) =>
        value instanceof Parameter ? { name: value.name, row: value.row } : { value },
      ),
    }
  }

  const template = (db: Executor, params: P): Template => {
    const adapter = db.getExecutor().adapter
    if (sqliteLimit && adapter instanceof SqliteAdapter) {
      const value = (params as Record<string, unknown>)[sqliteLimit.name]
      const known = sqliteLimit.templates.get(value)
      if (known) return known
      const made = make(db, { name: sqliteLimit.name, value })
      if (sqliteLimit.templates.size < MAX_LIMIT_VARIANTS) sqliteLimit.templates.set(value, made)
      return made
    }
    const known = templates.get(adapter.constructor)
    if (known) return known
    const made = make(db)
    const limitName = limitParameter(made.query)
    if (limitName !== undefined && adapter instanceof SqliteAdapter) {
      sqliteLimit = { name: limitName, templates: new Map() }
      return template(db, params)
    }
    templates.set(adapter.constructor, made)
    return made
  }

  const compile = (db: Executor, params: P): CompiledQuery<R> => {
    const { sql, query, slots } = template(db, params)
    const parameters = slots.map((slot) => {
      if (!('name' in slot)) return slot.value
      const fields = (slot.row === undefined ? params : (params as unknown[])[slot.row]) as
        | Record<string, unknown>
        | undefined
      const value = fields?.[slot.name]
      // Kysely leaves out a column whose value is undefined; here the SQL is fixed, so refuse it.
      if (value === undefined) {
        const name = slot.row === undefined ? slot.name : `${slot.row}.${slot.name}`
        throw new Error(`compiled query: parameter ${name} is undefined`)
      }
      return value
    })
    return { sql, query, parameters, queryId: createQueryId() }
  }
  const run = async (db: Executor, params: P): Promise<QueryResult<R>> => {
    const query = compile(db, params)
    // In a SQLite transaction, straight to the connection: the statement is the same, and the
    // connection itself refuses to run once its transaction is over (see `Lease`).
    if (db.isTransaction && db.getExecutor().plugins.length === 0) {
      const connection = await connectionOf(db as Trx)
      if (connection instanceof Lease) return connection.executeQuery(query)
    }
    return db.executeQuery(query)
  }

  return {
    run,
    compile,
    rows: async (db, params) => (await run(db, params)).rows,
    first: async (db, params) => (await run(db, params)).rows[0],
  }
}

/** Every column of a table, named (the type requires each). */
type AllColumns<T extends keyof Database> = { [C in keyof Database[T]]-?: true }

/**
 * The INSERT of one whole row of `table`, compiled once: for rows written on hot paths. `columns`
 * names every column of the table, as a stand-in row has no keys for `values(row)` to read.
 */
export function compiledInsert<T extends keyof Database>(
  table: T,
  columns: AllColumns<T>,
): CompiledStatement<Selectable<Database[T]>, never> {
  return withParams(compiledInsertRows(table, columns, 1), (row) => [row])
}

/**
 * The INSERT of `count` whole rows of `table` in one statement (one round trip on PostgreSQL),
 * compiled once; it takes exactly `count` rows.
 */
export function compiledInsertRows<T extends keyof Database>(
  table: T,
  columns: AllColumns<T>,
  count: number,
): CompiledStatement<ReadonlyArray<Selectable<Database[T]>>, never> {
  const names = Object.keys(columns)
  const statement = compiled((kysely, rows: ReadonlyArray<Selectable<Database[T]>>) => {
    // Kysely types `values` by the table's columns, which a table chosen by a type parameter does
    // not pin down; the names come from that table's own type.
    const db = kysely as unknown as Kysely<Record<string, Record<string, unknown>>>
    const values = Array.from({ length: count }, (_, i) =>
      Object.fromEntries(names.map((name) => [name, (rows[i] as Record<string, unknown>)[name]])),
    )
    return db.insertInto(table as string).values(values) as unknown as Compilable<never>
  })
  return withParams(statement, (rows) => {
    if (rows.length !== count) throw new Error(`compiled insert: ${rows.length} rows given for ${count}`)
    return rows
  })
}

/** `statement`, taking parameters that `toParams` turns into its own (or refuses, by throwing). */
function withParams<P, Q, R>(
  statement: CompiledStatement<Q, R>,
  toParams: (params: P) => Q,
): CompiledStatement<P, R> {
  return {
    run: async (db, params) => statement.run(db, toParams(params)),
    rows: async (db, params) => statement.rows(db, toParams(params)),
    first: async (db, params) => statement.first(db, toParams(params)),
    compile: (db, params) => statement.compile(db, toParams(params)),
  }
}
