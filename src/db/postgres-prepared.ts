import type { PostgresPool, PostgresPoolClient } from 'kysely'
import type pg from 'pg'

/**
 * Named prepared statements on PostgreSQL: every statement with parameters is sent under a name, so
 * each pooled connection parses it once and, after its first few runs, PostgreSQL plans it once
 * (its plan cache's generic plan) instead of at every run.
 *
 * Why: a create's statements are planned far longer than they run. pg_stat_statements over a load of
 * creates (docs/performance.md, "PostgreSQL: a create's statements") found planning at more than half
 * of the database's time for a create, the overlap check alone ~0.5 ms of planning a run against
 * ~0.2 ms of execution: `sessions` has many indexes starting with the same columns, and each is a plan
 * to cost. Kysely sends every query unnamed, which makes PostgreSQL parse and plan it each time.
 *
 * `pg` prepares a named statement on a connection the first time the name is used there and keeps
 * the name's text (a different text under a known name is refused), so names are given per text, for
 * the process. What stays unnamed: statements without parameters (BEGIN, COMMIT, SET: the simple
 * protocol is cheaper for them) and texts beyond MAX_NAMED, so that SQL built with a varying shape
 * (an IN list of n values) cannot grow each connection's prepared statements without bound.
 *
 * A prepared statement whose result columns a migration changed (`select *` from a table that gained
 * a column) fails with `cached plan must not change result type` at every run, until deallocated; a
 * connection then stops using the names it has (its own generation of names starts), so the statement
 * fails once per connection that had it prepared, in the transaction that meets it, and is prepared
 * afresh after. The stale statements stay on the connection until it closes.
 */
const MAX_NAMED = 2000

/** The error PostgreSQL raises when a prepared statement's result shape changed under it. */
function isStaleStatement(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return (
    code === '0A000' &&
    typeof message === 'string' &&
    message.includes('cached plan must not change result type')
  )
}

export function namingPreparedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>()
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text)
    if (known !== undefined || names.size >= MAX_NAMED) return known
    const name = `s${names.size}`
    names.set(text, name)
    return name
  }
  const clients = new WeakMap<pg.PoolClient, NamingClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let naming = clients.get(client)
      if (!naming) {
        naming = new NamingClient(client, nameOf)
        clients.set(client, naming)
      }
      return naming
    },
    end: () => pool.end(),
  }
}

class NamingClient implements PostgresPoolClient {
  /** Bumped when this connection's prepared statements went stale (see above). */
  private generation = 0

  constructor(
    private readonly inner: pg.PoolClient,
    private readonly nameOf: (text: string) => string | undefined,
  ) {}

  // biome-ignore lint/suspicious/noExplicitAny: the signature of Kysely's PostgresPoolClient
  query(textOrCursor: any, values?: readonly unknown[]): any {
    if (typeof textOrCursor !== 'string' || !values || values.length === 0) {
      return this.inner.query(textOrCursor, values as unknown[])
    }
    const name = this.nameOf(textOrCursor)
    if (name === undefined) return this.inner.query(textOrCursor, values as unknown[])
    const generation = this.generation
    return this.inner
      .query({
        name: generation === 0 ? name : `${name}_${generation}`,
        text: textOrCursor,
        values: values as unknown[],
      })
      .catch((error: unknown) => {
        if (isStaleStatement(error) && this.generation === generation) {
          this.generation++
        }
        throw error
      })
  }

  release(): void {
    this.inner.release()
  }
}
