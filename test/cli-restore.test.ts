import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { SQLite } from '../src/db/sqlite/addon.js'
import { backupSqlite, countRows } from '../src/db/sqlite/backup.js'
import { createKey } from '../src/modules/keys/service.js'
import { uniq, waitUntil } from './helpers/assertions.js'
import { startApiProcess } from './helpers/cluster.js'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { builtScript, killAll, type RunResult, run, START_MS, spawnChild } from './helpers/process.js'
import { REDIS_URL } from './helpers/redis.js'

afterAll(killAll)

/** `node dist/src/cli.js <args>` (what `npm run cli -- <args>` runs) on `databaseUrl`. */
const cli = (databaseUrl: string, ...args: string[]): Promise<RunResult> =>
  run(process.execPath, [builtScript('cli'), ...args], { env: { DATABASE_URL: databaseUrl } })

const fileOf = (database: TestDatabase) => database.url.slice('sqlite:'.length)

/** A file's tables and their rows, by name. */
const rows = (file: string) => Object.fromEntries(countRows(file).map((table) => [table.name, table.rows]))

/** The ids of a database file's operators, in order. */
function operatorIds(file: string): string[] {
  const db = new SQLite(file, { fileMustExist: true })
  try {
    return db.prepare('select id from operators order by id').pluck().all() as string[]
  } finally {
    db.close()
  }
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex')

/** A migrated database with a key, closed. */
async function serviceDatabase(): Promise<{ database: TestDatabase; secret: string }> {
  const database = await createTestDatabase()
  const { db } = openServiceDatabase({ databaseUrl: database.url })
  await migrateToLatest(db)
  const key = await createKey(db, { account: 'restore', mode: 'test' })
  await db.destroy()
  return { database, secret: key.secret }
}

describe.runIf(dialect === 'sqlite')('cli restore on SQLite', () => {
  it('refuses while the server writes to the database, which goes on as it was; once the server has stopped, puts the backup in place: integrity_check ok, exactly the backup rows', {
    timeout: 6 * START_MS,
  }, async () => {
    const { database, secret } = await serviceDatabase()
    const file = fileOf(database)
    const backup = path.join(path.dirname(file), 'backup.db')
    const api = await startApiProcess({
      databaseUrl: database.url,
      redisUrl: REDIS_URL,
      env: { REDIS_URL: undefined, RATE_LIMIT_MAX: '1000000' },
    })
    /** How many operator creates were answered 201. */
    let acknowledged = 0
    let writing = true
    const writer = async () => {
      while (writing) {
        const res = await fetch(`${api.base}/v1/operators`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ident: uniq('op') }),
        })
        expect(res.status, await res.text()).toBe(201)
        acknowledged++
      }
    }
    const writers = [writer(), writer()]
    const atLeast = (n: number) =>
      waitUntil(
        () => acknowledged,
        (count) => count >= n,
        { timeoutMs: START_MS },
      )
    let refused: RunResult
    try {
      await atLeast(10)
      expect((await cli(database.url, 'backup', backup)).code).toBe(0)
      const afterBackup = acknowledged
      await atLeast(afterBackup + 10)
      refused = await cli(database.url, 'restore', backup)
      // The server writes on, untouched.
      await atLeast(acknowledged + 10)
    } finally {
      writing = false
      await Promise.all(writers)
      api.child.kill('SIGTERM')
      await api.child.waitForExit()
    }
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(
      new RegExp(
        `is open in another process \\(pid ${api.child.proc.pid}: .*server\\.js.*Nothing was restored`,
      ),
    )
    // Nothing restored: the database holds every write acknowledged, before and after the refusal.
    expect(rows(file).operators).toBe(acknowledged)
    const backupRows = rows(backup)
    expect(backupRows.operators).toBeLessThan(acknowledged)

    const restored = await cli(database.url, 'restore', backup)
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toMatch(
      new RegExp(`^Restored ${file} from ${backup}: ${fs.statSync(file).size} bytes[;.]`, 'm'),
    )
    // The old database's WAL and index went with it; no temporary copy is left.
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual([path.basename(file), 'backup.db'].sort())
    const db = new SQLite(file, { readonly: true })
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    } finally {
      db.close()
    }
    expect(rows(file)).toEqual(backupRows)
    expect(operatorIds(file)).toEqual(operatorIds(backup))
    await database.drop()
  })

  it.runIf(process.platform === 'linux')(
    'refuses while a process has the file open without a SQLite lock, naming it; restores once it has closed it',
    { timeout: 4 * START_MS },
    async () => {
      const { database } = await serviceDatabase()
      const file = fileOf(database)
      const backup = path.join(path.dirname(file), 'backup.db')
      await backupSqlite(file, backup)
      const before = rows(file)
      // A program reading the file (a copy, the sqlite3 shell that has not read yet): no lock held.
      const reader = spawnChild(process.execPath, [
        '-e',
        "require('fs').openSync(process.argv[1], 'r'); console.log('open'); setInterval(() => {}, 1000)",
        file,
      ])
      await reader.waitForStdout(/open/)
      const refused = await cli(database.url, 'restore', backup)
      reader.kill('SIGTERM')
      await reader.waitForExit()
      expect(refused.code).toBe(2)
      expect(refused.stderr).toMatch(new RegExp(`is open in another process \\(pid ${reader.proc.pid}: `))
      expect(rows(file)).toEqual(before)

      const restored = await cli(database.url, 'restore', backup)
      expect(restored.code, restored.stderr).toBe(0)
      await database.drop()
    },
  )

  it('refuses a backup that is not a SQLite database, a corrupt one or another program database: the database stays byte for byte', {
    timeout: 4 * START_MS,
  }, async () => {
    const { database } = await serviceDatabase()
    const file = fileOf(database)
    const folder = path.dirname(file)
    const valid = path.join(folder, 'valid.db')
    await backupSqlite(file, valid)

    const text = path.join(folder, 'text.db')
    fs.writeFileSync(text, 'not a database\n'.repeat(500))
    const corrupt = path.join(folder, 'corrupt.db')
    const bytes = fs.readFileSync(valid)
    // Pages past the schema overwritten: the tables' b-trees no longer hold together.
    bytes.fill(0xa5, 4 * 4096, 8 * 4096)
    fs.writeFileSync(corrupt, bytes)
    const other = path.join(folder, 'other.db')
    const otherDb = new SQLite(other)
    otherDb.exec('create table notes (body text)')
    otherDb.close()
    const files = fs.readdirSync(folder).sort()
    const digest = sha256(file)

    for (const [backup, message] of [
      [text, /text\.db is not a sound SQLite database \(file is not a database\)/],
      [corrupt, /corrupt\.db is not a sound SQLite database \(.+\)/],
      [other, /other\.db is not a database of this service/],
      [path.join(folder, 'missing.db'), /No backup at .*missing\.db/],
    ] as const) {
      const result = await cli(database.url, 'restore', backup)
      expect(result.code, backup).toBe(2)
      expect(result.stderr, backup).toMatch(message)
      expect(result.stdout).toBe('')
      expect(sha256(file)).toBe(digest)
      expect(fs.readdirSync(folder).sort()).toEqual(files)
    }
    await database.drop()
  })
})

describe.runIf(dialect === 'postgres')('cli restore on PostgreSQL', () => {
  it('exits 2 saying to use pg_restore', { timeout: START_MS + 10_000 }, async () => {
    const database = await createTestDatabase()
    const result = await cli(database.url, 'restore', 'attendance.dump')
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/pg_restore/)
  })
})
