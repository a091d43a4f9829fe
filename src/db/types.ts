import type { DatabaseConnection, Kysely, Transaction } from 'kysely'
import type { Database } from './schema.js'

/**
 * The types every layer above names the database by. They run nothing, so the files that open the
 * database (connection.ts, the signals, the drivers) and the ones that use it all import them from
 * here, below themselves, and none has to import another to name a transaction.
 */
export type Dialect = 'sqlite' | 'postgres'
export type Db = Kysely<Database>
export type Trx = Transaction<Database>
/** What repositories take: the database or a transaction the caller owns. */
export type Executor = Db | Trx

/**
 * A connection that refuses every statement once it is released (the SQLite driver's lease), so a
 * caller that keeps a transaction's connection past the transaction fails instead of writing
 * outside it. Only such a connection is handed statements directly (transaction-connection.ts).
 */
export interface GuardedConnection extends DatabaseConnection {
  readonly refusesAfterRelease: true
}
