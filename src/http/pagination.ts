import { createHmac, timingSafeEqual } from 'node:crypto'
import { errors } from '../core/errors.js'
import type { AuthContext } from '../core/identity.js'
import { DEFAULT_LIMIT } from '../core/schemas.js'

export interface Page<T> {
  object: 'list'
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/** A keyset query: rows with id below `beforeId` (all when undefined), newest first, at most `take`. */
export type KeysetFetch<Row> = (beforeId: string | undefined, take: number) => Promise<Row[]>

/**
 * The one keyset pagination of the service. Lists are ordered by id, newest first; ids sort by
 * creation time, so a cursor is just "the last id seen". Rows inserted while a client pages have
 * newer ids and land before the cursor: they never shift, repeat or hide the rows being paged.
 * Cursors are signed (HMAC) and bound to the list and the caller, so a tampered cursor or one of
 * another list is refused with `invalid_cursor` instead of silently paging something else.
 */
export class Paginator {
  constructor(private readonly secret: Buffer) {}

  async page<Row extends { id: string }, Out>(
    list: string,
    auth: AuthContext,
    query: PaginationQuery,
    fetch: KeysetFetch<Row>,
    toApi: (row: Row) => Out,
  ): Promise<Page<Out>> {
    return this.pageByKey(list, auth, query, fetch, (row) => row.id, isString, toApi)
  }

  /**
   * The same for a list ordered by another key (a timesheet: operator ident, then date). `keyOf`
   * gives a row's key, which the cursor carries (signed, so it needs no more checking than its
   * shape, `isKey`); `fetch` answers the rows after that key in the list's order.
   */
  async pageByKey<Row, Key, Out>(
    list: string,
    auth: AuthContext,
    query: PaginationQuery,
    fetch: (after: Key | undefined, take: number) => Promise<Row[]>,
    keyOf: (row: Row) => Key,
    isKey: (value: unknown) => value is Key,
    toApi: (row: Row) => Out,
  ): Promise<Page<Out>> {
    const limit = query.limit ?? DEFAULT_LIMIT
    const scope = `${list}|${auth.accountId}|${auth.livemode ? 'live' : 'test'}`
    const after = query.cursor === undefined ? undefined : this.decode(query.cursor, scope, isKey)
    const rows = await fetch(after, limit + 1)
    const hasMore = rows.length > limit
    const data = hasMore ? rows.slice(0, limit) : rows
    const last = data[data.length - 1]
    return {
      object: 'list',
      data: data.map(toApi),
      has_more: hasMore,
      next_cursor: hasMore && last !== undefined ? this.encode(keyOf(last), scope) : null,
    }
  }

  private encode(key: unknown, scope: string): string {
    const payload = Buffer.from(JSON.stringify({ k: key })).toString('base64url')
    return `${payload}.${this.sign(payload, scope).toString('base64url')}`
  }

  private decode<Key>(cursor: string, scope: string, isKey: (value: unknown) => value is Key): Key {
    const [payload, signature, extra] = cursor.split('.')
    if (!payload || !signature || extra !== undefined) throw errors.invalidCursor()
    // Compare the text, not the decoded bytes: base64 decoding ignores stray characters and the
    // spare low bits of the last one, so a changed character could decode to the same signature.
    const expected = Buffer.from(this.sign(payload, scope).toString('base64url'))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw errors.invalidCursor()
    try {
      const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k?: unknown }
      if (isKey(parsed.k)) return parsed.k
    } catch {
      // A signed payload that does not parse can only come from a bug; refuse it all the same.
    }
    throw errors.invalidCursor()
  }

  private sign(payload: string, scope: string): Buffer {
    return createHmac('sha256', this.secret).update(`${scope}\n${payload}`).digest()
  }
}

const isString = (value: unknown): value is string => typeof value === 'string'

export interface PaginationQuery {
  limit?: number
  cursor?: string
}
