import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { SQLite } from '../src/db/sqlite/addon.js'
import { createKey } from '../src/modules/keys/service.js'
import { buildTestApp } from './helpers/app.js'
import { uniq, waitUntil } from './helpers/assertions.js'
import { startApiProcess } from './helpers/cluster.js'
import { createTestDatabase, dialect } from './helpers/database.js'
import { builtScript, killAll, type RunResult, run, START_MS } from './helpers/process.js'
import { REDIS_URL } from './helpers/redis.js'

afterAll(killAll)

/** `node dist/src/cli.js backup <file>` (what `npm run cli -- backup <file>` runs, built) on `databaseUrl`. */
const backup = (databaseUrl: string, file: string): Promise<RunResult> =>
  run(process.execPath, [builtScript('cli'), 'backup', file], {
    env: { DATABASE_URL: databaseUrl },
  })

/** The row counts `cli backup` printed, by table. */
function printedCounts(stdout: string): Record<string, number> {
  return Object.fromEntries(
    [...stdout.matchAll(/^ {2}(\w+) +(\d+)$/gm)].map((m) => [m[1] as string, Number(m[2])]),
  )
}

describe.runIf(dialect === 'sqlite')('cli backup on SQLite', () => {
  it('copies the database while the service writes: the copy is intact, opens as the service database and holds every write acknowledged before it began', {
    timeout: 3 * START_MS,
  }, async () => {
    const database = await createTestDatabase()
    const { db } = openServiceDatabase({ databaseUrl: database.url })
    await migrateToLatest(db)
    const key = await createKey(db, { account: 'backup', mode: 'test' })
    await db.destroy()
    const api = await startApiProcess({
      databaseUrl: database.url,
      redisUrl: REDIS_URL,
      // One process: its own rate limit, and one that never throttles the writers.
      env: { REDIS_URL: undefined, RATE_LIMIT_MAX: '1000000' },
    })

    /** Operators whose create was answered 201, in the order of their answers. */
    const acknowledged: Array<{ id: string }> = []
    let writing = true
    const writer = async () => {
      while (writing) {
        const res = await fetch(`${api.base}/v1/operators`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ident: uniq('op') }),
        })
        const body = (await res.json()) as { id: string }
        expect(res.status, JSON.stringify(body)).toBe(201)
        acknowledged.push({ id: body.id })
      }
    }
    const writers = [writer(), writer()]
    // Beside the database, in the folder that createTestDatabase made and drop() removes.
    const target = path.join(path.dirname(database.url.slice('sqlite:'.length)), 'copy.db')
    let result: RunResult
    /** The writes acknowledged when the backup began. */
    let before: Array<{ id: string }>
    try {
      await waitUntil(
        () => acknowledged.length,
        (n) => n >= 20,
        { timeoutMs: 60_000 },
      )
      before = [...acknowledged]
      result = await backup(database.url, target)
    } finally {
      writing = false
      await Promise.all(writers)
      api.child.kill('SIGTERM')
    }
    expect(result.code, result.stderr).toBe(0)
    // The writes went on while the backup ran (its start alone takes a second or more).
    expect(acknowledged.length).toBeGreaterThan(before.length)
    expect(result.stdout).toMatch(new RegExp(`^Backed up .+ to ${target}: \\d+ bytes\\.$`, 'm'))
    expect(Number(result.stdout.match(/: (\d+) bytes\./)?.[1])).toBe(fs.statSync(target).size)

    const copy = new SQLite(target, { readonly: true })
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
      const counts = printedCounts(result.stdout)
      for (const table of ['operators', 'events', 'api_keys', 'kysely_migration'])
        expect(counts[table], table).toBe(copy.prepare(`select count(*) from ${table}`).pluck().get())
      // Each acknowledged create is an operator and its event; none after the backup's end.
      expect(counts.operators).toBeGreaterThanOrEqual(before.length)
      expect(counts.operators).toBeLessThanOrEqual(acknowledged.length)
    } finally {
      copy.close()
    }

    // The copy as the service's database, as is: ready, and every write acknowledged before the
    // backup began readable over HTTP with the key that made it.
    const restored = await buildTestApp({}, { database: { url: `sqlite:${target}`, drop: async () => {} } })
    try {
      const client = restored.client(key.secret)
      expect((await restored.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
      for (const { id } of before) expect((await client.get(`/v1/operators/${id}`)).status, id).toBe(200)
    } finally {
      await restored.close()
    }

    // A second backup to the same file is refused, and leaves the copy as it was.
    const size = fs.statSync(target).size
    const again = await backup(database.url, target)
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/exists: cli backup never overwrites a file/)
    expect(fs.statSync(target).size).toBe(size)
    await database.drop()
  })
})

describe.runIf(dialect === 'postgres')('cli backup on PostgreSQL', () => {
  it('exits 2 saying to use pg_dump, and writes no file', { timeout: START_MS + 10_000 }, async () => {
    const database = await createTestDatabase()
    const target = path.join(os.tmpdir(), `${uniq('attendance-backup')}.db`)
    const result = await backup(database.url, target)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/pg_dump/)
    expect(fs.existsSync(target)).toBe(false)
  })
})
