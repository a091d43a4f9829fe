import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { dialect } from '../helpers/database.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * SQLite's temporary files this process holds open (Linux): they are unlinked at once, named
 * `etilqs_…`. Only those: other descriptors come and go with whatever else the process runs (the
 * checkpoint threads of other test files' databases).
 */
const openDescriptors = () =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).includes('etilqs_')
    } catch {
      return false // closed since it was listed
    }
  }).length

describe.skipIf(dialect !== 'sqlite' || process.platform !== 'linux')('the SQLite connection', () => {
  it('journals savepoints in memory: a large savepoint opens no temporary file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-connection-'))
    dirs.push(dir)
    const { db } = openDatabase(`sqlite:${path.join(dir, 'db.sqlite')}`, { groupCommit: true })
    try {
      await sql`create table pages (id integer primary key, body text not null)`.execute(db)
      const body = 'x'.repeat(3000)
      const counts = await db.transaction().execute(async (trx) => {
        // ~40 pages changed in the transaction, then changed again inside a savepoint: the
        // savepoint journals their originals (~160 KB), past SQLite's 64 KiB in-memory buffer.
        for (let id = 0; id < 40; id++) await sql`insert into pages values (${id}, ${body})`.execute(trx)
        const before = openDescriptors()
        await sql`savepoint big`.execute(trx)
        await sql`update pages set body = ${`${body}y`}`.execute(trx)
        const inside = openDescriptors()
        await sql`release big`.execute(trx)
        return { before, inside }
      })
      expect(counts.inside).toBe(counts.before)
      const rows = await sql<{ n: number }>`select count(*) as n from pages where body like '%y'`.execute(db)
      expect(rows.rows[0]?.n).toBe(40)
    } finally {
      await db.destroy()
    }
  })
})
