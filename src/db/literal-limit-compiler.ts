import { type LimitNode, PostgresQueryCompiler, SqliteQueryCompiler, ValueNode } from 'kysely'

/**
 * Writes an integer LIMIT into the SQL (`limit 51`) instead of binding it (`limit ?`, `limit $4`), on
 * both dialects. A literal costs one statement text per distinct limit (a page size plus one: at most
 * a few hundred), which SQLite's statement cache and PostgreSQL's named statements hold.
 *
 * SQLite (3.46 and later) reads a bound LIMIT's value while planning, and so marks the statement to
 * be prepared again whenever that parameter is bound, even to the same value: every run of a
 * cached statement with `limit ?` re-parsed and re-planned it. Measured on the service's own
 * statements inside a transaction: the pay-period check 8.8 µs with `limit ?`, 1.1 µs with
 * `limit 1`; the overlap check 11.1 µs against 1.5 µs.
 *
 * PostgreSQL plans a prepared statement's generic plan without its parameters' values, and for
 * `limit $4` assumes a tenth of the rows: the generic plan of the list's page then looks far dearer
 * than a plan for `limit 51`, so PostgreSQL planned every run afresh (its custom plan), 310–320 µs of
 * planning against ~200 µs of execution for each `GET /v1/sessions` (pg_stat_statements under
 * `BENCH_PG_STATEMENTS=1 npm run bench:http`). With the LIMIT written, it keeps the generic plan after
 * its first five runs (docs/performance.md).
 */
function appendLiteralLimit(node: LimitNode, append: (sql: string) => void): boolean {
  const limit = node.limit
  if (!ValueNode.is(limit) || !Number.isSafeInteger(limit.value)) return false
  append(`limit ${limit.value as number}`)
  return true
}

export class SqliteLiteralLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    if (!appendLiteralLimit(node, (sql) => this.append(sql))) super.visitLimit(node)
  }
}

export class PostgresLiteralLimitCompiler extends PostgresQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    if (!appendLiteralLimit(node, (sql) => this.append(sql))) super.visitLimit(node)
  }
}
