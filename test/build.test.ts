import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { build, LOCK_FILE, readStamp, STAMP_FILE, staleness, TARGETS } from '../scripts/build.mjs'
import { waitUntil } from './helpers/assertions.js'
import { dialect } from './helpers/database.js'
import { killAll, ROOT, run, START_MS, spawnChild, withFileLock } from './helpers/process.js'

type Target = (typeof TARGETS)[number]

// A build that failed a test may still wait for its release file.
afterAll(killAll)

/**
 * A target of a temporary tree, built by a real child process: it records each run (and whether
 * its incremental state was there), copies its input to its output, and fails on an input that
 * says so, as tsc fails on a type error.
 */
function copyTarget(name: string): Target {
  const script = `
    const fs = require('node:fs')
    fs.appendFileSync('runs.log', ${JSON.stringify(name)} + (fs.existsSync('out/${name}.cache') ? ' incremental' : ' full') + '\\n')
    const text = fs.readFileSync('${name}/a.txt', 'utf8')
    if (text.includes('error')) process.exit(2)
    fs.mkdirSync('out', { recursive: true })
    fs.writeFileSync('out/${name}.txt', text)
    fs.writeFileSync('out/${name}.cache', 'state')`
  return {
    name,
    inputs: [name, 'shared.json'],
    outputs: [`out/${name}.txt`],
    cache: [`out/${name}.cache`],
    command: [process.execPath, '-e', script],
  }
}

describe('the build (scripts/build.mjs): only what changed, never a stamp for a failed build', () => {
  let root: string
  const targets = [copyTarget('server'), copyTarget('console')]
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  /** The runs since the last call, e.g. ['server full']. */
  const runs = () => {
    const file = path.join(root, 'runs.log')
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : []
    fs.rmSync(file, { force: true })
    return lines
  }
  const buildNow = (options: { force?: boolean } = {}) => {
    const lines: string[] = []
    const result = build({ root, targets, ...options, log: (line) => lines.push(line) })
    return { ...result, lines }
  }

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-'))
    write('server/a.txt', 'server v1')
    write('console/a.txt', 'console v1')
    write('shared.json', '{}')
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  it('builds every target without a stamp (a fresh clone), then nothing while nothing changed', () => {
    expect(staleness(root, targets[0] as Target, readStamp(root))).toBe('never built')
    expect(buildNow().built).toEqual(['server', 'console'])
    expect(runs()).toEqual(['server full', 'console full'])
    expect(fs.readFileSync(path.join(root, 'out/server.txt'), 'utf8')).toBe('server v1')

    const again = buildNow()
    expect(again.built).toEqual([])
    expect(again.lines).toEqual(['build: up to date (server, console)'])
    expect(runs()).toEqual([])
  })

  it('rebuilds a target whose inputs changed, incrementally, and only that one; an input both share rebuilds both', () => {
    buildNow()
    runs()
    write('console/a.txt', 'console v2')
    expect(staleness(root, targets[1] as Target, readStamp(root))).toBe('inputs changed')
    expect(buildNow().built).toEqual(['console'])
    expect(runs()).toEqual(['console incremental'])
    expect(fs.readFileSync(path.join(root, 'out/console.txt'), 'utf8')).toBe('console v2')

    write('shared.json', '{"dependencies":{}}')
    expect(buildNow().built).toEqual(['server', 'console'])
    // A new file is a change too.
    write('server/b.txt', 'new')
    expect(buildNow().built).toEqual(['server'])
    runs()
  })

  it('goes by contents, not times: a touch rebuilds nothing, a change with an old time (cp -p, tar) rebuilds', () => {
    buildNow()
    runs()
    const input = path.join(root, 'server/a.txt')
    fs.utimesSync(input, new Date(), new Date(Date.now() + 60_000))
    expect(buildNow().built).toEqual([])

    fs.writeFileSync(input, 'server v0')
    fs.utimesSync(input, new Date('2001-01-01'), new Date('2001-01-01'))
    expect(buildNow().built).toEqual(['server'])
    expect(runs()).toEqual(['server incremental'])
  })

  it('a failed build leaves no stamp that skips the next: back at the stamped inputs, it builds again', () => {
    buildNow()
    runs()
    write('server/a.txt', 'a type error')
    const failed = buildNow()
    expect(failed.failed).toEqual({ name: 'server', status: 2 })
    expect(failed.lines).toContain(
      `build: server failed: ${path.basename(process.execPath)} exited with status 2 (its errors are above)`,
    )
    // The console, after it, is not built; its stamp stays.
    expect(runs()).toEqual(['server incremental'])
    expect(Object.keys(readStamp(root).targets)).toEqual(['console'])

    // The inputs its stamp recorded are back, but its outputs may be the failed build's.
    write('server/a.txt', 'server v1')
    expect(staleness(root, targets[0] as Target, readStamp(root))).toBe('never built')
    expect(buildNow().built).toEqual(['server'])
    expect(runs()).toEqual(['server incremental'])
    expect(buildNow().built).toEqual([])
  })

  it('outputs deleted or rebuilt by another command: built again, from scratch (the incremental state goes first)', () => {
    buildNow()
    runs()
    fs.rmSync(path.join(root, 'out/server.txt'))
    expect(staleness(root, targets[0] as Target, readStamp(root))).toBe('outputs changed')
    write('out/console.txt', 'built by another command from other sources')
    expect(buildNow().built).toEqual(['server', 'console'])
    expect(runs()).toEqual(['server full', 'console full'])
    expect(fs.readFileSync(path.join(root, 'out/console.txt'), 'utf8')).toBe('console v1')
  })

  it('--force builds everything from scratch; a damaged stamp counts as none', () => {
    buildNow()
    runs()
    expect(buildNow({ force: true }).built).toEqual(['server', 'console'])
    expect(runs()).toEqual(['server full', 'console full'])
    write(STAMP_FILE, '{"targets":')
    expect(buildNow().built).toEqual(['server', 'console'])
    runs()
  })

  it(
    'two builds at once: the second waits for the first (dist/.build-lock), then finds its work done',
    async () => {
      // The first build's command records its run, then waits for a file the test writes once the
      // second build has said that it waits (two minutes at most: a failed test leaves no build behind).
      const command = `
        const fs = require('node:fs')
        fs.appendFileSync('runs.log', 'server full\\n')
        const until = Date.now() + 120000
        while (!fs.existsSync('release') && Date.now() < until)
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
        fs.mkdirSync('out', { recursive: true })
        fs.writeFileSync('out/server.txt', fs.readFileSync('server/a.txt'))`
      const target = { ...copyTarget('server'), command: [process.execPath, '-e', command] }
      write(
        'build-once.mjs',
        `import { build } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'scripts', 'build.mjs')).href)}
        const { failed } = build({ root: process.cwd(), targets: [${JSON.stringify(target)}], log: (line) => console.log(line) })
        process.exit(failed ? 1 : 0)`,
      )
      const first = spawnChild(process.execPath, ['build-once.mjs'], { cwd: root })
      await waitUntil(
        () => fs.existsSync(path.join(root, 'runs.log')),
        (started) => started,
      )
      const second = spawnChild(process.execPath, ['build-once.mjs'], { cwd: root })
      await second.waitForStdout(new RegExp(`build: waiting for the build of process ${first.proc.pid}`))
      write('release', '')
      expect((await first.waitForExit()).code, first.stdout).toBe(0)
      expect((await second.waitForExit()).code, second.stdout).toBe(0)
      expect(second.stdout).toContain('build: up to date (server)')
      expect(runs()).toEqual(['server full'])
      expect(fs.existsSync(path.join(root, LOCK_FILE))).toBe(false)
    },
    2 * START_MS,
  )

  it("the real targets' inputs exist (a renamed folder would silently leave the build stale)", () => {
    for (const target of TARGETS) {
      for (const input of target.inputs) expect(fs.existsSync(path.join(ROOT, input)), input).toBe(true)
    }
  })
})

// One run: the build does not depend on the database.
describe.runIf(dialect === 'sqlite')('npm run build in this checkout', () => {
  it(
    'a second build on an unchanged tree runs neither tsc nor vite and writes nothing in dist/',
    async () => {
      await withFileLock('attendance-service-npm-start', async () => {
        // The first brings dist/ up to date if it is not (npm start's test may have done so already).
        const first = await run('npm', ['run', '--silent', 'build'], { timeoutMs: 240_000 })
        expect(first.code, first.stdout + first.stderr).toBe(0)
        const before = modificationTimes(path.join(ROOT, 'dist'))

        const second = await run('npm', ['run', '--silent', 'build'], { timeoutMs: START_MS })
        expect(second.code, second.stdout + second.stderr).toBe(0)
        expect(second.stderr).toContain('build: up to date (server, console)')
        expect(second.stderr).not.toMatch(/^build: \w+ \(/m)
        // What makes it quick (measured in docs/operations.md, not timed here): nothing was rebuilt.
        expect(modificationTimes(path.join(ROOT, 'dist'))).toEqual(before)
      })
    },
    240_000 + START_MS + 120_000,
  )
})

/** Every file under `dir` with its modification time. */
function modificationTimes(dir: string): Record<string, number> {
  return Object.fromEntries(
    fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = path.join(entry.parentPath, entry.name)
        return [path.relative(dir, file), fs.statSync(file).mtimeMs]
      }),
  )
}
