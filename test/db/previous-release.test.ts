import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/connection.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createKey } from '../../src/modules/keys/service.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { killAll, ROOT, run, withFileLock } from '../helpers/process.js'
import { listeningUrl, startServerProcess } from '../helpers/server-process.js'

/**
 * A rolling upgrade's other half (docs/operations.md, "Upgrades and rollbacks"): the release before
 * this one, built from git, serves a database this release migrated. The release before is the
 * parent of the commit that added the newest migration (the newest code without it), but never older
 * than the commit that made a process start beside migrations newer than itself: a release before
 * that one refused to ("corrupted migrations"), which is the bug the contract fixed, not a rule of it.
 * The database also carries a migration newer than both, as a third release would leave it.
 */
const STARTS_BESIDE_NEWER = 'f188a6b'

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()
}

function previousRelease(): string | undefined {
  try {
    const newestMigration = git('log', '-1', '--format=%H', '--diff-filter=A', '--', 'src/db/migrations')
    const before = git('rev-parse', '--verify', `${newestMigration}^`)
    const floor = git('rev-parse', '--verify', STARTS_BESIDE_NEWER)
    const isAncestor = (a: string, b: string) => {
      try {
        git('merge-base', '--is-ancestor', a, b)
        return true
      } catch {
        return false
      }
    }
    return isAncestor(floor, before) ? before : floor
  } catch {
    // A checkout without the history (a shallow clone, an archive): nothing to build the release from.
    return undefined
  }
}

const PREVIOUS = previousRelease()
if (PREVIOUS === undefined)
  console.warn('previous-release.test.ts: skipped, this checkout has no git history')

/**
 * The release's server, compiled with tsc alone (its console is not needed to serve the API) into a
 * folder of the machine's temporary directory named by its commit, kept for the next run; the
 * checkout's node_modules serve it.
 */
async function buildRelease(commit: string): Promise<string> {
  const dir = path.join(os.tmpdir(), `attendance-release-${commit.slice(0, 12)}`)
  const server = path.join(dir, 'dist', 'src', 'server.js')
  return withFileLock(
    `attendance-release-${commit.slice(0, 12)}`,
    async () => {
      if (fs.existsSync(server)) return server
      fs.rmSync(dir, { recursive: true, force: true })
      fs.mkdirSync(dir, { recursive: true })
      execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT })
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'))
      const tsc = await run(
        process.execPath,
        [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
        {
          cwd: dir,
        },
      )
      expect(tsc.code, `${tsc.stdout}\n${tsc.stderr}`).toBe(0)
      return server
    },
    { timeoutMs: 300_000, staleMs: 300_000 },
  )
}

describe.skipIf(PREVIOUS === undefined)(
  'the release before this one, on a database this one migrated',
  () => {
    let database: TestDatabase
    let server: string
    let secret: string

    beforeAll(async () => {
      server = await buildRelease(PREVIOUS ?? '')
      database = await createTestDatabase()
      const { db } = openDatabase(database.url)
      try {
        await migrateToLatest(db)
        await sql`insert into kysely_migration (name, timestamp)
        values (${'999_a_later_release'}, ${new Date(0).toISOString()})`.execute(db)
        secret = (await createKey(db, { account: 'upgrade', mode: 'test' })).secret
      } finally {
        await db.destroy()
      }
    }, 300_000)
    afterAll(async () => {
      await killAll()
      await database?.drop()
    })

    it('starts, is ready, and reads and writes what this release wrote', async () => {
      const started = startServerProcess({ DATABASE_URL: database.url, WORKER: 'off' }, server)
      const base = await listeningUrl(started.child)
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }
      const location = await fetch(`${base}/v1/locations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Gate', timezone: 'Europe/Paris' }),
      })
      expect(location.status, await location.clone().text()).toBe(201)
      const operator = await fetch(`${base}/v1/operators`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ident: 'A-001', name: 'Ada' }),
      })
      expect(operator.status, await operator.clone().text()).toBe(201)
      const listed = (await (await fetch(`${base}/v1/operators`, { headers })).json()) as {
        data: { ident: string }[]
      }
      expect(listed.data.map((row) => row.ident)).toEqual(['A-001'])
    }, 120_000)
  },
)
