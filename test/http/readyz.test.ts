import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { READINESS_TIMEOUT_MS } from '../../src/http/readiness.js'
import { type ApiResponse, buildTestApp, type TestApp } from '../helpers/app.js'
import { expectError } from '../helpers/assertions.js'
import { createTestDatabase, dialect, holdDatabase } from '../helpers/database.js'
import { onServer } from '../helpers/postgres-run.js'

/**
 * GET /readyz through the app itself, not `TestApp.client`: like /healthz the route is operational
 * and hidden from the OpenAPI document, whose conformance check the client applies to every answer.
 */
async function readyz(t: TestApp): Promise<ApiResponse> {
  const raw = await t.app.inject({ method: 'GET', url: '/readyz' })
  return { status: raw.statusCode, headers: raw.headers, body: JSON.parse(raw.body), raw }
}

async function healthz(t: TestApp): Promise<{ status: number; body: unknown }> {
  const raw = await t.app.inject({ method: 'GET', url: '/healthz' })
  return { status: raw.statusCode, body: JSON.parse(raw.body) }
}

function expectNotReady(res: ApiResponse, message: RegExp) {
  const error = expectError(res, 503, 'api_error', 'not_ready')
  expect(error.message).toMatch(message)
  expect(Object.keys(res.body as object)).toEqual(['error'])
}

describe('GET /readyz (and /healthz beside it)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())

  it('is 200 { status: ready } on a database at the latest migration, without a key', async () => {
    const res = await readyz(t)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ready' })
    expect(res.headers['x-request-id']).toMatch(/^req_/)
  })

  it('is 503 not_ready on a database behind on migrations, and ready again once it has them', async () => {
    const newest = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from kysely_migration order by name desc limit 1`.execute(t.db)
    const row = newest.rows[0]
    if (!row) throw new Error('no migration recorded')
    await sql`delete from kysely_migration where name = ${row.name}`.execute(t.db)
    try {
      expectNotReady(await readyz(t), new RegExp(`lacks the migration ${row.name} of this version`))
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${row.name}, ${row.timestamp})`.execute(
        t.db,
      )
    }
    expect((await readyz(t)).status).toBe(200)
  })

  it(`answers 503 within its bound while the database does not answer, and ready once it does`, async () => {
    // SQLite: the process's one connection is held. PostgreSQL: another connection holds a lock on
    // the migrations table that the readiness query must wait for. The hold ends only after both
    // probes have answered, so they cannot have waited for the database: they gave up on it at
    // their bound (real time, an I/O timeout), which their message names.
    const hold = await holdDatabase(t.db, 'kysely_migration')
    try {
      // Two probes at once: both answered, by the one query they share.
      const [first, second] = await Promise.all([readyz(t), readyz(t)])
      expectNotReady(first, new RegExp(`did not answer within ${READINESS_TIMEOUT_MS} ms`))
      expectNotReady(second, /did not answer within/)
    } finally {
      await hold.release()
    }
    expect((await readyz(t)).status).toBe(200)
  })
})

describe('GET /readyz when the database is gone', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({}, { database: await createTestDatabase({ ownPostgresDatabase: true }) })
  })
  afterAll(() => t?.close())

  it.runIf(dialect === 'postgres')(
    'is 503 while PostgreSQL refuses connections to the database, and ready once it accepts them',
    async () => {
      expect((await readyz(t)).status).toBe(200)
      const name = new URL(t.database.url).pathname.slice(1)
      const server = new URL(t.database.url)
      server.pathname = '/postgres'
      // As when the database server restarts: every connection of the app's pool is cut, new ones
      // are refused.
      await onServer(server.toString(), `alter database ${name} allow_connections false`)
      try {
        await onServer(
          server.toString(),
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`,
        )
        expectNotReady(await readyz(t), /^The service is not ready: the database did not answer a query\.$/)
        // Liveness is the process, not its database: a probe that failed here would restart a
        // process that is fine and will be ready again once the database is.
        expect(await healthz(t)).toEqual({ status: 200, body: { status: 'ok' } })
      } finally {
        await onServer(server.toString(), `alter database ${name} allow_connections true`)
      }
      expect((await readyz(t)).status).toBe(200)
    },
  )

  it.runIf(dialect === 'sqlite')('is 503 once the SQLite database is closed', async () => {
    expect((await readyz(t)).status).toBe(200)
    await t.db.destroy()
    expectNotReady(await readyz(t), /^The service is not ready: the database did not answer a query\.$/)
    expect(await healthz(t)).toEqual({ status: 200, body: { status: 'ok' } })
  })
})
