import { readFileSync } from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'
import { FIRST_NODE_MAJOR_WITH_BETTER_SQLITE3_13 } from '../src/db/sqlite/addon.js'

/**
 * The service runs on the oldest Node.js its `engines` admits (20.19), so every package it installs
 * must say it supports that version too. A package whose `engines` asks for a newer Node.js may
 * still load there today, but its authors no longer test it there and any release may stop
 * working; `overrides` in package.json keeps such packages at versions that support it. One
 * exception: better-sqlite3 13, installed beside 12 and loaded only on Node.js 24 and later, where
 * 12 aborts (src/db/sqlite/addon.ts).
 *
 * npm 12 skips the install script of every dependency that package.json's `allowScripts` does not
 * name, silently: better-sqlite3 would then have no compiled driver. Every package with an install
 * script is named there, allowed or denied, so that a new one is a decision, not a surprise.
 */
const ROOT = path.resolve(import.meta.dirname, '..')
const BETTER_SQLITE3_13 = 'node_modules/better-sqlite3-node24'
const readJson = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'))

describe('dependencies', () => {
  const required = (readJson('package.json') as { engines: { node: string } }).engines.node
  const oldest = semver.minVersion(required)

  it('requires a Node.js of the 20 line or newer', () => {
    expect(oldest?.version).toBe('20.19.0')
  })

  const lock = readJson('package-lock.json') as {
    packages: Record<
      string,
      {
        name?: string
        version?: string
        engines?: { node?: string } | string[]
        hasInstallScript?: boolean
        optional?: boolean
      }
    >
  }
  const nodeRange = (location: string) => {
    const engines = lock.packages[location]?.engines
    return Array.isArray(engines) ? undefined : engines?.node
  }

  it('installs only packages that support the oldest Node.js the service runs on', () => {
    const unsupported = Object.entries(lock.packages).flatMap(([location, entry]) => {
      const range = nodeRange(location)
      // Loaded only from Node.js 24 on (src/db/sqlite/addon.ts): checked against that below.
      if (range === undefined || oldest === null || location === BETTER_SQLITE3_13) return []
      return semver.satisfies(oldest, range) ? [] : [`${location}@${entry.version}: node ${range}`]
    })
    expect(unsupported).toEqual([])
  })

  it('installs better-sqlite3 13, loaded from Node.js 24 on, for a Node.js that it supports', () => {
    const range = nodeRange(BETTER_SQLITE3_13)
    expect(lock.packages[BETTER_SQLITE3_13]?.version).toMatch(/^13\./)
    expect(range && semver.satisfies(`${FIRST_NODE_MAJOR_WITH_BETTER_SQLITE3_13}.0.0`, range)).toBe(true)
  })

  it('installs better-sqlite3 13 only where it can run: an optional dependency that Node.js 20 and 22 skip', () => {
    // npm skips an optional package whose engines do not match, without the EBADENGINE warning a
    // newcomer would read as a broken install; as a plain dependency it was installed and warned.
    const pkg = readJson('package.json') as {
      dependencies: Record<string, string>
      optionalDependencies?: Record<string, string>
    }
    expect(pkg.optionalDependencies?.['better-sqlite3-node24']).toMatch(/^npm:better-sqlite3@/)
    expect(pkg.dependencies['better-sqlite3-node24']).toBeUndefined()
    expect(lock.packages[BETTER_SQLITE3_13]?.optional).toBe(true)
  })

  it('names every package with an install script in allowScripts, and allows better-sqlite3', () => {
    const pkg = readJson('package.json') as { allowScripts?: Record<string, boolean> }
    // allowScripts names packages, not install folders: an alias (better-sqlite3-node24) is the
    // package its lock entry names. npm install adds hasInstallScript to 13 (it ships binding.gyp).
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(
        ([location, entry]) =>
          entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length),
      )
    const reviewed = Object.keys(pkg.allowScripts ?? {}).map((key) => key.replace(/(?<=.)@[^@]*$/, ''))
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([])
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true)
  })
})
