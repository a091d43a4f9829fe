import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL database of this run: every test schema lives in it until the run ends. */
    postgresRunUrl: string
  }
}

/**
 * Global setup of the PostgreSQL project: one database per run, dropped (with every test schema in
 * it) only once all test files have finished.
 *
 * Why not drop each schema when its test file is done: Kysely's migrator lists the tables of every
 * schema of the database, then asks about each by name; a schema dropped between the two by a test
 * file finishing in parallel fails another file's migration (3F000, 42P01, 42703). No schema or
 * table of this database is dropped while tests run (a test that drops a table works in a database of
 * its own: test/helpers/database.ts), and a database of its own keeps other runs on the same server
 * (other worktrees, CI jobs) from dropping schemas beside this one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = project.config.env.TEST_POSTGRES_URL
  if (!server) throw new Error('The postgres project sets TEST_POSTGRES_URL in vitest.config.ts')
  const name = `test_run_${randomBytes(6).toString('hex')}`
  await onServer(server, `create database ${name}`)
  const runUrl = new URL(server)
  runUrl.pathname = `/${name}`
  project.provide('postgresRunUrl', runUrl.toString())
  return () => onServer(server, `drop database if exists ${name} with (force)`)
}

/** Runs one statement on a connection of its own (database and schema management). */
export async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
