import { CompiledQuery, type DatabaseConnection, type QueryExecutor, type QueryResult } from 'kysely'
import type { GuardedConnection, Trx } from './types.js'

/**
 * The connection a transaction runs on, asked of Kysely once per transaction and remembered for the
 * rest of it. Kysely hands a transaction's connection over only inside `provideConnection`, a few
 * promises deep, and does so for every statement; hot paths that run a dozen statements in a
 * transaction (a create) ask here instead. Keyed by the transaction's executor, which lives exactly
 * as long as the transaction (a savepoint's transaction has an executor of its own, on the same
 * connection).
 *
 * What it earns, measured in-process in alternating runs when it was made (docs/performance-log.md,
 * "What was done", item 1): creates on SQLite 3,776–3,989/s before, 4,065–4,218/s after, 0.282–0.295 →
 * 0.268–0.281 ms of CPU a create. Held writes (held-writes.ts) and savepoints need the connection too.
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

/**
 * Runs `query` in `trx`: straight on the transaction's connection when that connection refuses to
 * run once released (a `GuardedConnection`, as SQLite's), which skips Kysely's few promises per
 * statement; otherwise (PostgreSQL's pooled connection, which would run a late statement in
 * whatever transaction holds it next, or a transaction with plugins to apply) through Kysely.
 */
export async function executeInTransaction<R>(trx: Trx, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (trx.getExecutor().plugins.length === 0) {
    const connection = await connectionOf(trx)
    if ((connection as Partial<GuardedConnection>).refusesAfterRelease === true)
      return connection.executeQuery(query)
  }
  return trx.executeQuery(query)
}

const SAVEPOINT_NAME = /^[a-z_]+$/

/**
 * A savepoint in a transaction of `db.transaction()`, on its connection (Kysely gives savepoints
 * only to a controlled transaction). `rollback()` undoes what the transaction did since, and keeps
 * the rest; the savepoint ends with the transaction, or at `release()` (keeping what was done since:
 * a loop that takes one per step releases each, so they do not pile up).
 */
export async function savepoint(
  trx: Trx,
  name: string,
): Promise<{ rollback(): Promise<void>; release(): Promise<void> }> {
  if (!SAVEPOINT_NAME.test(name)) throw new Error(`savepoint name: ${name}`)
  const connection = await connectionOf(trx)
  await connection.executeQuery(CompiledQuery.raw(`savepoint ${name}`))
  return {
    rollback: async () => {
      await connection.executeQuery(CompiledQuery.raw(`rollback to ${name}`))
    },
    release: async () => {
      await connection.executeQuery(CompiledQuery.raw(`release ${name}`))
    },
  }
}
