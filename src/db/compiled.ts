import { isDeepStrictEqual } from 'node:util'
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
import { writeOrHold } from './held-writes.js'
import type { Database } from './schema.js'
import { executeInTransaction } from './transaction-connection.js'
import type { Dialect, Executor, Trx } from './types.js'

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
 * the query's shape (`$if`); queries whose shape depends on the request stay ordinary Kysely. The
 * first run of each template checks this (`StatementCheck`).
 * Parameters may also be a list of rows of a fixed length (`p[0].id`: see `compiledInsertRows`).
 *
 * One exception, made here: a LIMIT is written into the SQL text (literal-limit-compiler.ts), so a
 * query whose LIMIT is a parameter is built once per distinct limit (a page size plus one), each kept
 * like any other template.
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

const dialectOf = (db: Executor) =>
  db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres'

/** A property name that is a row's index: parameters given as a list of rows. */
const ROW_INDEX = /^\d+$/

/** Limits remembered per query; a limit beyond them is built again at each run. */
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
  /** True once a run's own query, built from its values, was found to be this template filled in. */
  confirmed: boolean
}

/**
 * A statement's first real query, compared with its template. The stand-ins cannot tell the builder
 * which way to go where the query depends on a value: a stand-in is always truthy, so
 * `$if(p.active, …)` would freeze on its `true` side, and arithmetic makes a constant of one
 * (`p.at + 1` is `'[object Object]1'`). So the first run of each template also builds the query
 * from its real values, as Kysely alone would, and refuses to run a template whose SQL or values
 * differ from that (once per template: the cost of one more build). Kept for
 * test/db/compiled-statements.test.ts, which runs every statement of src/.
 */
export interface StatementCheck {
  /** Where the statement was made: the `file:line`s (relative to src/) of the calls that made it. */
  readonly madeAt: readonly string[]
  /** The dialects whose first run matched the template. */
  readonly confirmed: Set<Dialect>
  /** What differed, if a first run did not match. */
  mismatch?: string
}

const checks: StatementCheck[] = []

/** Every statement made so far in this process, and what its first runs showed. */
export function statementChecks(): readonly StatementCheck[] {
  return checks
}

/**
 * The `file:line`s of src/ on the stack of a statement being made, outside this file: where a
 * statement whose first run fails its check was made. What the check costs, measured 2026-11-28: a
 * stack trace and its parse ~50 µs a statement, 31 statements made when the app is imported, so
 * ~1.5 ms once a process; the first run of each template builds its query once more; nothing per
 * request after. What it earns: a template whose SQL depends on a value would otherwise run the
 * first value's SQL for every value, silently.
 */
function callersInSrc(): string[] {
  const frames = (new Error().stack ?? '').split('\n').slice(1)
  return frames.flatMap((frame) => {
    const at = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(frame.trim())
    const file = at?.[1]?.replace(/^file:\/\//, '')
    if (!file || file.includes('/node_modules/') || !file.includes('/src/')) return []
    const inSrc = file.slice(file.lastIndexOf('/src/') + '/src/'.length).replace(/\.js$/, '.ts')
    return inSrc === 'db/compiled.ts' ? [] : [`${inSrc}:${at?.[2]}`]
  })
}

export function compiled<P extends object, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): CompiledStatement<P, R> {
  const check: StatementCheck = { madeAt: callersInSrc(), confirmed: new Set() }
  checks.push(check)
  // One template per dialect: SQLite and PostgreSQL write placeholders and quotes differently.
  const templates = new Map<unknown, Template>()
  // When the LIMIT is a parameter: its name, and one template per dialect and limit value.
  let literalLimit: { name: string; templates: Map<string, Template> } | undefined

  /** Built with stand-ins for the parameters, except `literal` (the LIMIT), given its value. */
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
      confirmed: false,
    }
  }

  /** The first run of a template: the query Kysely builds from the real values must be the same. */
  const confirm = (db: Executor, made: Template, params: P, parameters: unknown[]): void => {
    const real = build(db, params).compile()
    const dialect = dialectOf(db)
    if (real.sql !== made.sql || !isDeepStrictEqual(real.parameters, parameters)) {
      check.mismatch =
        `${dialect}: the template ran ${made.sql} with ${JSON.stringify(parameters)}, ` +
        `but its values build ${real.sql} with ${JSON.stringify(real.parameters)}`
      throw new Error(
        `compiled query made at ${check.madeAt.join(' < ')}: its shape depends on a value (${check.mismatch})`,
      )
    }
    made.confirmed = true
    check.confirmed.add(dialect)
  }

  const template = (db: Executor, params: P): Template => {
    const adapter = db.getExecutor().adapter.constructor
    if (literalLimit) {
      const value = (params as Record<string, unknown>)[literalLimit.name]
      const key = `${dialectOf(db)}:${String(value)}`
      const known = literalLimit.templates.get(key)
      if (known) return known
      const made = make(db, { name: literalLimit.name, value })
      if (literalLimit.templates.size < MAX_LIMIT_VARIANTS) literalLimit.templates.set(key, made)
      return made
    }
    const known = templates.get(adapter)
    if (known) return known
    const made = make(db)
    const limitName = limitParameter(made.query)
    if (limitName !== undefined) {
      literalLimit = { name: limitName, templates: new Map() }
      return template(db, params)
    }
    templates.set(adapter, made)
    return made
  }

  const compile = (db: Executor, params: P): CompiledQuery<R> => {
    const made = template(db, params)
    const { sql, query, slots } = made
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
    if (!made.confirmed) confirm(db, made, params, parameters)
    return { sql, query, parameters, queryId: createQueryId() }
  }
  const run = async (db: Executor, params: P): Promise<QueryResult<R>> => {
    const query = compile(db, params)
    return db.isTransaction ? executeInTransaction(db as Trx, query) : db.executeQuery(query)
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
 * compiled once; it takes exactly `count` rows. In a transaction that holds writes (held-writes.ts)
 * it is held, and sent with the transaction's next statement.
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
  type Rows = ReadonlyArray<Selectable<Database[T]>>
  const insert = withParams(statement, (rows: Rows) => {
    if (rows.length !== count) throw new Error(`compiled insert: ${rows.length} rows given for ${count}`)
    return rows
  })
  const run = (db: Executor, rows: Rows) =>
    db.isTransaction ? writeOrHold<never>(db as Trx, insert.compile(db, rows)) : insert.run(db, rows)
  return {
    run,
    rows: async (db, rows) => (await run(db, rows)).rows,
    first: async (db, rows) => (await run(db, rows)).rows[0],
    compile: insert.compile,
  }
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
