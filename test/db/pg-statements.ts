import pg from 'pg'
import { vi } from 'vitest'

/** A statement sent to PostgreSQL; `behind`: sent before the one before it was answered (pipelined). */
export interface Sent {
  sql: string
  behind: boolean
}

/**
 * The statements the process sends to PostgreSQL while `run` runs, in order. Watched on `pg`'s
 * client, below Kysely and the service, and passed on unchanged. A statement sent while another one
 * of its connection awaits its answer is `behind` it: the two cost one round trip (the pool's
 * `pipeline`, src/db/connection.ts). The commit's NOTIFY (src/db/postgres-signals.ts) is left out:
 * it is sent after the commit on a pooled connection of its own, not awaited by the request, and
 * shared by the commits made while one is in flight.
 */
export async function statementsDuring(run: () => Promise<unknown>): Promise<Sent[]> {
  const send = pg.Client.prototype.query
  const awaiting = new Map<pg.Client, number>()
  const sent: Sent[] = []
  const query = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    // Kysely's statements come as text and values, or as a named statement (postgres-prepared.ts).
    const sql =
      typeof args[0] === 'object' && args[0] !== null
        ? String((args[0] as { text: unknown }).text)
        : String(args[0])
    const before = awaiting.get(this) ?? 0
    if (!sql.includes('pg_notify(')) sent.push({ sql, behind: before > 0 })
    const answer = (send as (...a: unknown[]) => Promise<unknown> | undefined).apply(this, args)
    // Kysely awaits a promise; the pool's own `query` (the NOTIFY) passes a callback instead.
    if (answer instanceof Promise) {
      awaiting.set(this, before + 1)
      const answered = () => awaiting.set(this, (awaiting.get(this) ?? 1) - 1)
      answer.then(answered, answered)
    }
    return answer
  } as typeof send)
  try {
    await run()
    return sent
  } finally {
    query.mockRestore()
  }
}

/** Round trips: statements that waited for the answer to the one before. */
export const roundTripsOf = (sent: Sent[]) => sent.filter((statement) => !statement.behind).length
