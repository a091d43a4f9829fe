import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

/**
 * The better-sqlite3 package this Node.js runs, and the one place that loads it.
 *
 * The service is built on better-sqlite3 12, which supports Node.js 20. On Node.js 24 and later,
 * better-sqlite3 12 aborts the whole process (`Assertion failed: (env) != nullptr` in
 * `RemoveEnvironmentCleanupHook`, from `Statement::~Statement`) when a statement it freed is
 * collected at certain moments: Node.js 24 changed the `node::ObjectWrap` it is built on. Measured
 * here on Node.js 24.21: opening, migrating and closing an in-memory database three times aborted
 * every run; the SQLite half of the test suite lost 46 of its 85 files. better-sqlite3 13 (Node-API)
 * does not have the bug, but needs Node.js 22. So both are installed (13 under the name
 * `better-sqlite3-node24`) and each Node.js loads the one that works on it: the same API, the
 * same SQLite file format. docs/operations.md, "Node.js versions".
 */
export const FIRST_NODE_MAJOR_WITH_BETTER_SQLITE3_13 = 24

export function sqlitePackageFor(nodeVersion: string): 'better-sqlite3' | 'better-sqlite3-node24' {
  const major = Number(nodeVersion.replace(/^v/, '').split('.')[0])
  return major >= FIRST_NODE_MAJOR_WITH_BETTER_SQLITE3_13 ? 'better-sqlite3-node24' : 'better-sqlite3'
}

const require = createRequire(import.meta.url)

export const SQLITE_PACKAGE = sqlitePackageFor(process.versions.node)

/** The package's entry file: what a worker thread (the checkpointer) loads the same driver from. */
export const SQLITE_PACKAGE_ENTRY = require.resolve(SQLITE_PACKAGE)

export const SQLite: typeof BetterSqlite3 = require(SQLITE_PACKAGE)
