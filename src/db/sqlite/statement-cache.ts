import type SQLite from 'better-sqlite3'
import { LRUCache } from 'lru-cache'

/**
 * Prepared statements kept, for the SQLite driver. Kysely's `SqliteDriver` calls `db.prepare(sql)`
 * for every query and throws the statement away: preparing (parsing and planning the SQL) was 10.8 %
 * of the service's CPU on `POST /v1/sessions` and 5.1 % on `GET /v1/sessions` (docs/performance.md).
 * The service runs a few dozen distinct statements, so a small cache keyed by SQL text prepares each
 * once. It is bounded (least recently used out) because SQL built from optional filters or lists of
 * values (`in (?, ?, …)`) makes new texts; SQLite re-prepares a cached statement by itself if the
 * schema changed (a migration) since it was prepared. An evicted statement is only dropped:
 * better-sqlite3 finalizes it when it is collected.
 */
export class StatementCache {
  private readonly statements: LRUCache<string, SQLite.Statement>
  hits = 0
  misses = 0

  constructor(
    private readonly database: SQLite.Database,
    readonly capacity: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer')
    this.statements = new LRUCache({ max: capacity })
  }

  get size(): number {
    return this.statements.size
  }

  /** The prepared statement for `sql`, prepared now if it is not cached. */
  get(sql: string): SQLite.Statement {
    const cached = this.statements.get(sql)
    if (cached !== undefined) {
      this.hits++
      return cached
    }
    this.misses++
    // Prepared before anything is evicted: SQL that fails to prepare changes nothing.
    const statement = this.database.prepare(sql)
    this.statements.set(sql, statement)
    return statement
  }

  /** A statement of its own, not cached (for a caller that keeps it busy, such as an iteration). */
  uncached(sql: string): SQLite.Statement {
    return this.database.prepare(sql)
  }

  /** Whether `sql` is cached; asking does not count as a use. */
  has(sql: string): boolean {
    return this.statements.has(sql)
  }

  clear(): void {
    this.statements.clear()
  }
}

export const DEFAULT_STATEMENT_CACHE_SIZE = 500
