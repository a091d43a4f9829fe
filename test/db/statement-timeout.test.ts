import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { SQLite } from '../../src/db/sqlite/addon.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError } from '../helpers/assertions.js'
import { createTestDatabase, dialect, holdDatabase } from '../helpers/database.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

/**
 * A statement the database does not answer in time answers 503 `database_timeout` with the
 * envelope, rather than hanging (PostgreSQL had no statement timeout) or answering 500 (SQLite's
 * busy timeout). The database is frozen for the operators table: on PostgreSQL another connection
 * holds `LOCK TABLE operators IN ACCESS EXCLUSIVE MODE`; on SQLite another connection holds the
 * file's write lock (`BEGIN IMMEDIATE`), as another process would.
 */
describe('a statement past the database timeout', () => {
  let t: TestApp
  let secret = ''

  beforeAll(async () => {
    t = await buildTestApp({ databaseStatementTimeoutMs: 500 })
    secret = (await t.key()).secret
  })
  afterAll(async () => {
    await t?.close()
  })

  /** Runs `request` while another connection holds the lock that freezes creates of operators. */
  async function whileFrozen<T>(request: () => Promise<T>): Promise<T> {
    if (dialect === 'sqlite') {
      const other = new SQLite(t.database.url.slice('sqlite:'.length))
      other.exec('BEGIN IMMEDIATE')
      try {
        return await request()
      } finally {
        other.exec('ROLLBACK')
        other.close()
      }
    }
    const other = openDatabase(t.database.url).db
    const hold = await holdDatabase(other, 'operators')
    try {
      return await request()
    } finally {
      await hold.release()
      await other.destroy()
    }
  }

  it('answers 503 database_timeout with the envelope; the next request, unfrozen, succeeds', async () => {
    const client = t.client(secret)
    const frozen = await whileFrozen(() => client.post('/v1/operators', { ident: 'OP-FROZEN' }))
    const error = expectError(frozen, 503, 'api_error', 'database_timeout')
    expect(error.message).toMatch(/did not answer in time/)

    const created = await client.post('/v1/operators', { ident: 'OP-FROZEN' })
    expect(created.status).toBe(201)
  })
})

/**
 * PostgreSQL that stops answering altogether (a stopped server, a network that drops everything),
 * behind a TCP proxy that stops passing anything on: the server's statement_timeout cannot fire,
 * the client's own bound (the statement timeout + 2 s) does, and drops the connection.
 */
describe.runIf(dialect === 'postgres')('a database that stops answering', () => {
  it('answers 503 database_timeout, not a request that hangs', async () => {
    const database = await createTestDatabase({ migrated: true })
    const target = new URL(database.url)
    const proxy = new TcpProxy(Number(target.port || 5432))
    target.port = String(await proxy.listen())
    const t = await buildTestApp(
      { databaseUrl: target.toString(), databaseStatementTimeoutMs: 500 },
      { database },
    )
    try {
      const client = t.client((await t.key()).secret)
      expect((await client.get('/v1/operators')).status).toBe(200)
      proxy.freeze()
      expectError(await client.get('/v1/operators'), 503, 'api_error', 'database_timeout')
      expectError(
        await client.post('/v1/operators', { ident: 'OP-FROZEN' }),
        503,
        'api_error',
        'database_timeout',
      )
    } finally {
      await proxy.close()
      await t.close()
    }
  })
})
