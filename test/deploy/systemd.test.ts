import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { DRAIN_MS } from '../../src/server.js'

/**
 * deploy/systemd's units, as systemd reads them (`systemd-analyze verify`), and what they must say
 * for the service: node run directly (so SIGTERM reaches the process that holds the database), a
 * stop timeout above each process's shutdown, a user of its own, a read-only system with the SQLite
 * database's folder writable, and each process's environment. docs/operations.md, "Production install".
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..')
const UNITS = path.join(ROOT, 'deploy', 'systemd')
const API = 'attendance.service'
const WORKER = 'attendance-worker.service'

/** A unit's settings by name, every value of a setting given more than once, in order. */
function readUnit(name: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  for (const line of fs.readFileSync(path.join(UNITS, name), 'utf8').split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (!match) continue
    const [, key = '', value = ''] = match
    settings.set(key, [...(settings.get(key) ?? []), value])
  }
  return settings
}

/** The one value of a setting. */
function one(unit: Map<string, string[]>, key: string): string {
  const values = unit.get(key) ?? []
  expect(values, key).toHaveLength(1)
  return values[0] as string
}

/** The NAME=value lines of an environment file (systemd's EnvironmentFile= syntax, as used here). */
function readEnvironmentFile(file: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
}

/** The environment a unit's process gets: its EnvironmentFile (here, the example) and its Environment=. */
function environmentOf(unit: Map<string, string[]>): Record<string, string> {
  const own = Object.fromEntries(
    (unit.get('Environment') ?? []).map((entry) => [
      entry.slice(0, entry.indexOf('=')),
      entry.slice(entry.indexOf('=') + 1),
    ]),
  )
  const file = readEnvironmentFile(path.join(UNITS, 'attendance.env.example'))
  // systemd: a variable of the EnvironmentFile= wins over the same one of Environment=.
  return { ...own, ...file }
}

const seconds = (value: string) => {
  expect(value, 'a whole number of seconds').toMatch(/^\d+$/)
  return Number(value) * 1000
}

/** Where systemd-analyze is, or undefined. */
function systemdAnalyze(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' })
  const binary = found.stdout.trim()
  if (binary) return binary
  if (process.env.REQUIRE_SYSTEMD === '1')
    throw new Error('REQUIRE_SYSTEMD=1 but systemd-analyze is missing: apt-get install -y systemd')
  return undefined
}

const analyze = systemdAnalyze()

describe.skipIf(analyze === undefined)(
  `systemd-analyze verify${analyze === undefined ? ' (skipped: systemd-analyze is not installed; apt-get install -y systemd)' : ''}`,
  () => {
    it('accepts both units without a warning', () => {
      // verify checks that ExecStart's program exists: /usr/bin/node is Debian's; where node is
      // elsewhere (a node:20 image's /usr/local/bin/node) the copies name this one instead.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'units-'))
      try {
        for (const name of [API, WORKER]) {
          const text = fs.readFileSync(path.join(UNITS, name), 'utf8')
          fs.writeFileSync(
            path.join(dir, name),
            fs.existsSync('/usr/bin/node') ? text : text.replaceAll('/usr/bin/node ', `${process.execPath} `),
          )
        }
        const result = spawnSync(analyze as string, ['verify', path.join(dir, API), path.join(dir, WORKER)], {
          encoding: 'utf8',
        })
        // A value systemd cannot parse is a warning and exit 0: any output is a failure.
        expect(`${result.stdout}${result.stderr}`).toBe('')
        expect(result.status).toBe(0)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  },
)

describe('the units', () => {
  const api = readUnit(API)
  const worker = readUnit(WORKER)
  const defaults = loadConfig({})

  it('run node directly, the server and `cli worker`: no npm or shell between systemd and the process', () => {
    expect(one(api, 'ExecStart')).toBe('/usr/bin/node /opt/attendance/dist/src/server.js')
    expect(one(worker, 'ExecStart')).toBe('/usr/bin/node /opt/attendance/dist/src/cli.js worker')
  })

  it('stop with SIGTERM, within a timeout above each process shutdown, and restart on failure', () => {
    for (const unit of [api, worker]) {
      expect(one(unit, 'KillSignal')).toBe('SIGTERM')
      expect(one(unit, 'Restart')).toBe('on-failure')
    }
    // The API: its grace (SHUTDOWN_GRACE_MS), then the drain (src/server.ts).
    expect(seconds(one(api, 'TimeoutStopSec'))).toBeGreaterThan(defaults.shutdownGraceMs + DRAIN_MS)
    // The worker: the attempts in flight, WEBHOOK_TIMEOUT_MS and 5 s to record them (src/worker.ts).
    expect(seconds(one(worker, 'TimeoutStopSec'))).toBeGreaterThan(defaults.webhookTimeoutMs + 5000)
  })

  it('run as a user of their own, on a read-only system where the database folder is writable', () => {
    const environment = environmentOf(api)
    const database = loadConfig(environment).databaseUrl
    expect(database).toMatch(/^sqlite:\//)
    for (const unit of [api, worker]) {
      expect(one(unit, 'User')).toBe('attendance')
      expect(one(unit, 'ProtectSystem')).toBe('strict')
      // A filtered system call is refused (node falls back), not fatal (SIGSYS).
      expect(one(unit, 'SystemCallErrorNumber')).toBe('EPERM')
      // V8 writes the code it compiles: W^X memory would stop node.
      expect(unit.has('MemoryDenyWriteExecute')).toBe(false)
      expect(one(unit, 'StateDirectory')).toBe('attendance')
      expect(one(unit, 'WorkingDirectory')).toBe('/var/lib/attendance')
      // SQLite writes its -wal and -shm files beside the database: the folder, not just the file.
      const folder = path.dirname(database.slice('sqlite:'.length))
      expect(
        one(unit, 'ReadWritePaths')
          .split(' ')
          .some((writable) => folder === writable || folder.startsWith(`${writable}/`)),
        folder,
      ).toBe(true)
    }
  })

  it('give each process its environment: one file for both, WORKER=off for the API', () => {
    expect(one(api, 'EnvironmentFile')).toBe('/etc/attendance/attendance.env')
    expect(one(worker, 'EnvironmentFile')).toBe('/etc/attendance/attendance.env')
    const file = readEnvironmentFile(path.join(UNITS, 'attendance.env.example'))
    // What the example sets is what both read: the worker delivers by the same WEBHOOK_* the API checked.
    for (const variable of ['DATABASE_URL', 'WEBHOOK_ALLOW_PRIVATE_URLS'])
      expect(file).toHaveProperty(variable)
    // A unit's own settings that the file would override (systemd gives the file precedence).
    for (const variable of ['WORKER', 'METRICS_PORT']) expect(file).not.toHaveProperty(variable)
    const apiConfig = loadConfig(environmentOf(api))
    const workerConfig = loadConfig(environmentOf(worker))
    expect(apiConfig).toMatchObject({ worker: 'off', metricsPort: 9464 })
    expect(workerConfig.metricsPort).toBe(9465)
    expect(workerConfig.databaseUrl).toBe(apiConfig.databaseUrl)
  })
})
