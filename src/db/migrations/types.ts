import { type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely'

/**
 * Column types that differ by dialect. Ids compare byte-wise ("C" collation on PostgreSQL, the
 * default on SQLite) so keyset pagination orders them the same way everywhere.
 */
export interface ColumnTypes {
  id: RawBuilder<unknown>
  instant: 'bigint' | 'integer'
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not the current type
export function columnTypes(db: Kysely<any>): ColumnTypes {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  return postgres ? { id: sql`text collate "C"`, instant: 'bigint' } : { id: sql`text`, instant: 'integer' }
}
