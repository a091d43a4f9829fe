import { type Compilable, type Kysely, type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import type { AuthContext } from '../core/identity.js'
import { type CompiledStatement, compiled } from './compiled.js'
import { supportsRowLocks } from './connection.js'
import { type Database, type Flag, toFlag } from './schema.js'
import type { Executor } from './types.js'

/** An account and mode: what every owned row belongs to. */
export interface Owner {
  account_id: string
  livemode: Flag
}

/**
 * The account-and-mode predicate every owned row is read with: `.where((eb) => eb.and(ownedBy(auth)))`.
 * No query of an owned table goes without it.
 */
export function ownedBy(auth: AuthContext): Owner {
  return { account_id: auth.accountId, livemode: toFlag(auth.livemode) }
}

/**
 * The sites predicate (decisions.md, "Sites"): for a principal held to some locations, only the rows
 * whose `column` (a location id: a session's `location_id`, a location's `id`) is one of them, a row
 * without one left out; for any other principal, the query as it is. In the query itself, never
 * after it, so a keyset page stays full: `.$call(atSites(auth, 'location_id'))`.
 */
export function atSites(auth: Pick<AuthContext, 'locationIds'>, column: string) {
  // biome-ignore lint/suspicious/noExplicitAny: any query of any table that has the column
  return <Q extends SelectQueryBuilder<any, any, any>>(query: Q): Q =>
    auth.locationIds === null ? query : (query.where(sql.ref(column), 'in', auth.locationIds) as Q)
}

/** The same account in the other mode: where a `cross_mode_reference` is looked for. */
export function otherModeOf(auth: AuthContext): Owner {
  return { account_id: auth.accountId, livemode: toFlag(!auth.livemode) }
}

/** The tables whose rows belong to an account and mode. */
export type OwnedTable = {
  [T in keyof Database]: Database[T] extends Owner & { id: string } ? T : never
}[keyof Database]

/** A text column of an owned table that names one row (or a few): `id`, `ident`, `code`, `name`. */
type NamingColumn<T extends OwnedTable> = {
  [C in keyof Database[T]]: Database[T][C] extends string ? C : never
}[keyof Database[T]] &
  string

export interface OwnedLookup {
  /** Only rows not soft-deleted (`deleted_at` is null): for tables that have the column. */
  undeleted?: boolean
  /** Locks the rows for the transaction (FOR UPDATE on PostgreSQL; SQLite's write lock is enough). */
  lock?: boolean
  limit?: number
}

/** Where an owned row is looked up by a column: the owner's account and mode, and the value. */
export type OwnedKey = Owner & { value: string }

/**
 * The owner's rows of `table` whose `column` equals a value: a look-up by id, ident, code or name,
 * built once and run as a compiled query (db/compiled.ts), as every request resolves a few of them.
 */
export function ownedRowsBy<T extends OwnedTable>(
  table: T,
  column: NamingColumn<T>,
  options: OwnedLookup = {},
): CompiledStatement<OwnedKey, Selectable<Database[T]>> {
  return compiled((kysely, p: OwnedKey) => {
    // Kysely types a query by its table's columns, which a table chosen by a type parameter does
    // not pin down; every table here has the columns named below.
    const db = kysely as unknown as Kysely<Record<string, Owner & { deleted_at: number | null }>>
    let query = db
      .selectFrom(table as string)
      .selectAll()
      .where('account_id', '=', p.account_id)
      .where('livemode', '=', p.livemode)
      .where(column as 'account_id', '=', p.value)
    if (options.undeleted) query = query.where('deleted_at', 'is', null)
    if (options.limit !== undefined) query = query.limit(options.limit)
    // The dialect decides this, not a value: each dialect's template is built once.
    if (options.lock && supportsRowLocks(kysely)) query = query.forUpdate()
    return query as unknown as Compilable<Selectable<Database[T]>>
  })
}

/**
 * The caller's row of `table` with this id; with `lock`, locked for a change until the transaction
 * ends. What every repository's `find` is.
 */
export function ownedRowFinder<T extends OwnedTable>(table: T, options: Pick<OwnedLookup, 'undeleted'> = {}) {
  const read = ownedRowsBy(table, 'id' as NamingColumn<T>, options)
  const locked = ownedRowsBy(table, 'id' as NamingColumn<T>, { ...options, lock: true })
  return (db: Executor, auth: AuthContext, id: string, lock = false) =>
    (lock ? locked : read).first(db, { ...ownedBy(auth), value: id })
}
