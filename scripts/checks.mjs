// @ts-check
/**
 * `npm test`'s steps before the tests: the type checks, the lint, the client's build and the
 * service's (scripts/build.mjs). None needs another's output, and each is one single-threaded
 * process for most of its time, so they run side by side, as many at once as the machine has cores,
 * longest first: on 2 cores one after another took about 100 s of a fresh clone's `npm test`.
 *
 * Each step's output is printed whole when it ends (never interleaved with another's); the command
 * fails, after every step has ended, when any step failed, and says which.
 */
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** @param {string} name */
const bin = (name) => path.join('node_modules', '.bin', name)

/** @type {{ name: string, command: string[] }[]} */
const STEPS = [
  { name: 'type check (src, test, bench)', command: [bin('tsc'), '-p', 'tsconfig.json', '--noEmit'] },
  { name: 'build (server, console)', command: [process.execPath, 'scripts/build.mjs'] },
  { name: 'type check (console)', command: [bin('tsc'), '-p', 'console/tsconfig.json', '--noEmit'] },
  { name: 'build (client package)', command: [bin('tsc'), '-p', 'packages/client/tsconfig.json'] },
  { name: 'lint', command: [bin('biome'), 'check', '.'] },
]

/**
 * @param {{ name: string, command: string[] }} step
 * @returns {Promise<{ name: string, status: number, output: string }>}
 */
function run(step) {
  return new Promise((resolve) => {
    const [command, ...args] = /** @type {[string, ...string[]]} */ (step.command)
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    /** @type {Buffer[]} */
    const output = []
    child.stdout.on('data', (chunk) => output.push(chunk))
    child.stderr.on('data', (chunk) => output.push(chunk))
    child.on('error', (error) => resolve({ name: step.name, status: 1, output: String(error) }))
    child.on('close', (status) =>
      resolve({ name: step.name, status: status ?? 1, output: Buffer.concat(output).toString() }),
    )
  })
}

const queue = [...STEPS]
/** @type {string[]} */
const failed = []
async function worker() {
  for (let step = queue.shift(); step; step = queue.shift()) {
    const result = await run(step)
    const text = result.output.trim()
    process.stdout.write(
      `${result.status === 0 ? 'ok' : 'FAILED'}: ${result.name}${text ? `\n${text}` : ''}\n`,
    )
    if (result.status !== 0) failed.push(result.name)
  }
}
await Promise.all(Array.from({ length: Math.max(1, os.availableParallelism()) }, worker))
if (failed.length > 0) {
  process.stderr.write(`checks failed: ${failed.join(', ')}\n`)
  process.exit(1)
}
