// @ts-check
/**
 * `npm run build`, and the build before `npm start` and `npm run cli`: the server (tsc into
 * dist/src) and the console (vite into dist/console), each only when what it is built from changed
 * since its last successful build.
 *
 * Plain JavaScript run by node, not TypeScript run by tsx: it runs before every start, and tsx's
 * loader costs about 0.3 s (an empty script: 0.39 s against node's 0.07 s) of a start that otherwise
 * takes under 2 s. Typed by JSDoc (checkJs).
 *
 * A target is up to date when the stamp (dist/.build-stamp.json) records, for its last successful
 * build, the same hash of its inputs' contents, and its outputs are still the files that build
 * wrote. Contents, not modification times: `git checkout` back to a commit already built, `touch`,
 * or a copy that keeps old times (`cp -p`, tar, rsync -a) would fool a comparison of times, in both
 * directions; hashing the ~200 input files takes some 30 ms. A fresh clone has no dist/, so no
 * stamp: everything is built.
 *
 * A target's stamp entry is removed before it is built and written only after its build succeeded,
 * so a failed or interrupted build never leaves a stamp that skips the next one. A build that has
 * something to do holds dist/.build-lock meanwhile; another one waits for it (withBuildLock).
 *
 * `--force` (`npm run build -- --force`) builds everything from scratch, tsc's incremental state
 * included. `--quiet` prints nothing when everything is up to date.
 *
 * Building needs the dev dependencies (tsc, vite); a production install builds first, then prunes
 * them (docs/operations.md, "Production install"): everything up to date, this script needs none of
 * them, so `npm start` and `npm run cli` still run there.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * @typedef {object} Target
 * @property {string} name
 * @property {string[]} inputs files and folders (every file under them), relative to the root
 * @property {string[]} outputs files its build writes; recorded by hash, so that a stamp stays
 *   true only while they are the ones its build wrote (none deleted, none rebuilt by another command)
 * @property {string[]} cache the tool's own incremental state: removed when the outputs are not the
 *   ones recorded (the tool would trust it and skip them) and by --force
 * @property {string[]} command run from the root
 *
 * @typedef {{ inputs: string, outputs: Record<string, string | null> }} StampEntry
 * @typedef {{ targets: Record<string, StampEntry> }} Stamp
 * @typedef {'never built' | 'inputs changed' | 'outputs changed'} Staleness
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const STAMP_FILE = 'dist/.build-stamp.json'
const TS_BUILD_INFO = 'dist/tsconfig.build.tsbuildinfo'
/** @param {string} name */
const bin = (name) => path.join('node_modules', '.bin', name)

/** @type {Target[]} */
export const TARGETS = [
  {
    name: 'server',
    // What tsc reads: src/, the client's files that src/ imports, its configuration, and the
    // installed packages' types (package-lock.json says which).
    inputs: [
      'src',
      'packages/client/src',
      'tsconfig.json',
      'tsconfig.build.json',
      'package.json',
      'package-lock.json',
    ],
    outputs: ['dist/src/server.js'],
    cache: [TS_BUILD_INFO],
    // Incremental: after a change tsc checks and emits again only what it affects.
    command: [bin('tsc'), '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', TS_BUILD_INFO],
  },
  {
    name: 'console',
    // What vite bundles: the console and the typed client's source, with the client's own settings.
    inputs: [
      'console',
      'packages/client/src',
      'packages/client/package.json',
      'packages/client/tsconfig.json',
      'package.json',
      'package-lock.json',
    ],
    // Its asset names are hashes of their contents, so the pages name the build; the kiosk's
    // service worker, the one file without a hash, stands for itself.
    outputs: ['dist/console/index.html', 'dist/console/kiosk.html', 'dist/console/kiosk-sw.js'],
    cache: [],
    command: [bin('vite'), 'build', '--config', 'console/vite.config.ts', '--logLevel', 'warn'],
  },
]

/**
 * Every file under `entry` (a file or a folder), relative to `root`, sorted.
 * @param {string} root
 * @param {string} entry
 * @returns {string[]}
 */
function filesOf(root, entry) {
  const full = path.join(root, entry)
  if (!fs.existsSync(full)) return []
  if (!fs.statSync(full).isDirectory()) return [entry]
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => filesOf(root, path.posix.join(entry, name)))
}

/**
 * One hash of the inputs' names and contents. A missing input counts too (as absent), so that
 * removing a file changes the hash.
 * @param {string} root
 * @param {string[]} inputs
 */
export function hashInputs(root, inputs) {
  const hash = createHash('sha256')
  for (const entry of inputs) {
    const files = filesOf(root, entry)
    if (files.length === 0) hash.update(`${entry}\0absent\0`)
    for (const file of files) {
      hash.update(`${file}\0`)
      hash.update(fs.readFileSync(path.join(root, file)))
      hash.update('\0')
    }
  }
  return hash.digest('hex')
}

/**
 * @param {string} root
 * @param {string[]} outputs
 * @returns {Record<string, string | null>} each output's hash, null when it is missing
 */
export function hashOutputs(root, outputs) {
  return Object.fromEntries(
    outputs.map((file) => {
      const full = path.join(root, file)
      return [
        file,
        fs.existsSync(full) ? createHash('sha256').update(fs.readFileSync(full)).digest('hex') : null,
      ]
    }),
  )
}

/**
 * Why `target` must be built, or undefined when its last successful build is still current.
 * @param {string} root
 * @param {Target} target
 * @param {Stamp} stamp
 * @returns {Staleness | undefined}
 */
export function staleness(root, target, stamp) {
  const entry = stamp.targets[target.name]
  if (entry === undefined) return 'never built'
  const outputs = hashOutputs(root, target.outputs)
  if (target.outputs.some((file) => outputs[file] === null || outputs[file] !== entry.outputs[file]))
    return 'outputs changed'
  if (hashInputs(root, target.inputs) !== entry.inputs) return 'inputs changed'
  return undefined
}

/**
 * The stamp, or an empty one when there is none or it cannot be read.
 * @param {string} root
 * @returns {Stamp}
 */
export function readStamp(root) {
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(root, STAMP_FILE), 'utf8'))
    if (typeof stamp?.targets === 'object' && stamp.targets !== null) return stamp
  } catch {
    // No stamp (a fresh clone, dist/ removed) or a damaged one: everything is built.
  }
  return { targets: {} }
}

/**
 * Written whole or not at all (a rename), so that an interrupted write never leaves half a stamp.
 * @param {string} root
 * @param {Stamp} stamp
 */
function writeStamp(root, stamp) {
  const file = path.join(root, STAMP_FILE)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(stamp, null, 2)}\n`)
  fs.renameSync(`${file}.tmp`, file)
}

/**
 * Builds the targets that need it, in order; stops at the first that fails. `quiet`: no line when
 * nothing needed building.
 * @param {{ root?: string, targets?: Target[], force?: boolean, quiet?: boolean, log?: (line: string) => void }} options
 * @returns {{ built: string[], failed?: { name: string, status: number } }}
 */
export function build({ root = ROOT, targets = TARGETS, force = false, quiet = false, log = () => {} } = {}) {
  // Most runs find everything up to date: they take no lock.
  const stamp = readStamp(root)
  const stale = force || targets.some((target) => staleness(root, target, stamp) !== undefined)
  const result = stale ? withBuildLock(root, log, () => buildStale(root, targets, force, log)) : { built: [] }
  if (result.built.length === 0 && !result.failed && !quiet)
    log(`build: up to date (${targets.map((target) => target.name).join(', ')})`)
  return result
}

/**
 * @param {string} root
 * @param {Target[]} targets
 * @param {boolean} force
 * @param {(line: string) => void} log
 * @returns {{ built: string[], failed?: { name: string, status: number } }}
 */
function buildStale(root, targets, force, log) {
  // Read again under the lock: a build that held it before may have done the work.
  const stamp = readStamp(root)
  /** @type {string[]} */
  const built = []
  for (const target of targets) {
    const why = force ? 'forced' : staleness(root, target, stamp)
    if (why === undefined) continue
    // The inputs as they are before the build: a file edited during it makes the next start build again.
    const inputs = hashInputs(root, target.inputs)
    const keepsCache = why === 'inputs changed' || (why === 'never built' && outputsExist(root, target))
    if (!keepsCache) for (const file of target.cache) fs.rmSync(path.join(root, file), { force: true })
    delete stamp.targets[target.name]
    writeStamp(root, stamp)

    const [command, ...args] = /** @type {[string, ...string[]]} */ (target.command)
    log(`build: ${target.name} (${why}): ${[path.basename(command), ...args].join(' ')}`)
    const started = Date.now()
    const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
    if (result.status !== 0) {
      log(`build: ${target.name} failed: ${whyFailed(command, result)}`)
      return { built, failed: { name: target.name, status: result.status ?? 1 } }
    }
    stamp.targets[target.name] = { inputs, outputs: hashOutputs(root, target.outputs) }
    writeStamp(root, stamp)
    built.push(target.name)
    log(`build: ${target.name} built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
  return { built }
}

export const LOCK_FILE = 'dist/.build-lock'
/** How long a build waits for another one of the same checkout before it gives up. */
const LOCK_WAIT_MS = 10 * 60_000

/**
 * Runs `fn` holding the checkout's build lock: two builds at once (two `npm run cli` after an edit,
 * or one beside `npm start`) would have two tsc write the same files. The second waits, then finds
 * the first one's work done. The lock is a file created only if absent, holding its process's id;
 * a lock whose process is gone (a build killed) is taken over.
 * @template T
 * @param {string} root
 * @param {(line: string) => void} log
 * @param {() => T} fn
 * @returns {T}
 */
function withBuildLock(root, log, fn) {
  const file = path.join(root, LOCK_FILE)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const deadline = Date.now() + LOCK_WAIT_MS
  let waiting = false
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' })
      break
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error
    }
    const holder = lockHolder(file)
    if (holder === 'gone') {
      fs.rmSync(file, { force: true })
      continue
    }
    if (!waiting) log(`build: waiting for the build of process ${holder} (${LOCK_FILE})`)
    waiting = true
    if (Date.now() > deadline)
      throw new Error(`build: process ${holder} held ${LOCK_FILE} for ${LOCK_WAIT_MS / 60_000} minutes`)
    // A synchronous wait: the build, like the tools it runs, is synchronous.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100)
  }
  try {
    return fn()
  } finally {
    fs.rmSync(file, { force: true })
  }
}

/**
 * The process that holds the lock file, or 'gone' when there is none. A file just created may not
 * hold its id yet: its process is then taken to be alive.
 * @param {string} file
 * @returns {number | 'unknown' | 'gone'}
 */
function lockHolder(file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch {
    return 'gone'
  }
  const pid = Number(text)
  if (text === '') return 'unknown'
  if (!Number.isInteger(pid) || pid <= 0) return 'gone'
  try {
    process.kill(pid, 0)
    return pid
  } catch (error) {
    // EPERM: alive, someone else's.
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM' ? pid : 'gone'
  }
}

/**
 * Why a build command failed, in one line. A tool that ran has printed its own errors above (tsc's
 * type errors); one that never started (not installed: `npm ci --omit=dev` or `npm prune --omit=dev`
 * removed the dev dependencies) or was killed printed nothing, so this line is all there is.
 * @param {string} command
 * @param {import('node:child_process').SpawnSyncReturns<Buffer>} result
 */
function whyFailed(command, result) {
  const error = /** @type {NodeJS.ErrnoException | undefined} */ (result.error)
  if (error?.code === 'ENOENT')
    return `${command} is not installed: the build needs the dev dependencies (npm ci without --omit=dev)`
  if (error) return `${command} could not run: ${error.message}`
  if (result.signal) return `${path.basename(command)} was killed by ${result.signal}`
  return `${path.basename(command)} exited with status ${result.status} (its errors are above)`
}

/**
 * @param {string} root
 * @param {Target} target
 */
function outputsExist(root, target) {
  return target.outputs.every((file) => fs.existsSync(path.join(root, file)))
}

if (process.argv[1] !== undefined && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { failed } = build({
    force: process.argv.includes('--force'),
    // `npm run cli`'s build (precli): a command's stderr stays its own unless something is built.
    quiet: process.argv.includes('--quiet'),
    // stderr: the server's stdout that follows in `npm start` stays its JSON log lines.
    log: (line) => process.stderr.write(`${line}\n`),
  })
  if (failed) process.exit(failed.status)
}
