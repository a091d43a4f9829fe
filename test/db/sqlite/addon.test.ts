import { createRequire } from 'node:module'
import semver from 'semver'
import { describe, expect, it } from 'vitest'
import {
  SQLITE_PACKAGE,
  SQLITE_PACKAGE_ENTRY,
  SQLite,
  sqlitePackageFor,
} from '../../../src/db/sqlite/addon.js'

const require = createRequire(import.meta.url)

describe('the better-sqlite3 package each Node.js loads', () => {
  it('is better-sqlite3 12 before Node.js 24 and 13 from Node.js 24 on', () => {
    expect(sqlitePackageFor('20.19.0')).toBe('better-sqlite3')
    expect(sqlitePackageFor('22.23.3')).toBe('better-sqlite3')
    expect(sqlitePackageFor('23.11.1')).toBe('better-sqlite3')
    expect(sqlitePackageFor('24.0.0')).toBe('better-sqlite3-node24')
    expect(sqlitePackageFor('v26.10.0')).toBe('better-sqlite3-node24')
  })

  it('is, on this Node.js, a release that supports it, loaded from its own entry file', () => {
    const manifest = require(`${SQLITE_PACKAGE}/package.json`) as {
      version: string
      engines: { node: string }
    }
    const major = Number(process.versions.node.split('.')[0])
    expect(manifest.version.split('.')[0]).toBe(major >= 24 ? '13' : '12')
    expect(semver.satisfies(process.versions.node, manifest.engines.node)).toBe(true)
    expect(SQLITE_PACKAGE_ENTRY).toBe(require.resolve(SQLITE_PACKAGE))
    const db = new SQLite(':memory:')
    expect(db.prepare('select sqlite_version() as v').get()).toEqual({ v: expect.stringMatching(/^3\./) })
    db.close()
  })
})
