import type { DatabaseConnection, QueryExecutor } from 'kysely'
import type { Trx } from './connection.js'

/**
 * The connection a transaction runs on, asked of Kysely once per transaction and remembered for the
 * rest of it. Kysely hands a transaction's connection over only inside `provideConnection`, a few
 * promises deep, and does so for every statement; hot paths that run a dozen statements in a
 * transaction (a create) ask here instead. Keyed by the transaction's executor, which lives exactly
 * as long as the transaction (a savepoint's transaction has an executor of its own, on the same
 * connection).
 */
const connections = new WeakMap<QueryExecutor, DatabaseConnection>()

export function connectionOf(trx: Trx): DatabaseConnection | Promise<DatabaseConnection> {
  const executor = trx.getExecutor()
  const known = connections.get(executor)
  if (known) return known
  return executor.provideConnection(async (connection) => {
    connections.set(executor, connection)
    return connection
  })
}
