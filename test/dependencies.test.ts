import { readFileSync } from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

/**
 * The service runs on the oldest Node.js its `engines` admits (20.19), so every package it installs
 * must say it supports that version too. A package whose `engines` asks for a newer Node.js may
 * still load there today, but its authors no longer test it there and any release may stop
 * working; `overrides` in package.json keeps such packages at versions that support it.
 *
 * npm 12 skips the install script of every dependency that package.json's `allowScripts` does not
 * name, silently: better-sqlite3 would then have no compiled driver. Every package with an install
 * script is named there, allowed or denied, so that a new one is a decision, not a surprise.
 */
const ROOT = path.resolve(import.meta.dirname, '..')
const readJson = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'))

describe('dependencies', () => {
  const required = (readJson('package.json') as { engines: { node: string } }).engines.node
  const oldest = semver.minVersion(required)

  it('requires a Node.js of the 20 line or newer', () => {
    expect(oldest?.version).toBe('20.19.0')
  })

  it('installs only packages that support the oldest Node.js the service runs on', () => {
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>
    }
    const unsupported = Object.entries(lock.packages).flatMap(([name, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
      if (range === undefined || oldest === null) return []
      return semver.satisfies(oldest, range) ? [] : [`${name}@${entry.version}: node ${range}`]
    })
    expect(unsupported).toEqual([])
  })

  it('names every package with an install script in allowScripts, and allows better-sqlite3', () => {
    const pkg = readJson('package.json') as { allowScripts?: Record<string, boolean> }
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { hasInstallScript?: boolean }>
    }
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length))
    const reviewed = Object.keys(pkg.allowScripts ?? {}).map((key) => key.replace(/(?<=.)@[^@]*$/, ''))
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([])
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true)
  })
})
