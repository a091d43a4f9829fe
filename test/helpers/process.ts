import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project root: commands run from here, as a developer would run them. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface SpawnOptions {
  /** Added to the environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>
  /** Own process group, so a wrapper (npm → sh → node) and its children are signalled together. */
  group?: boolean
  /** Where it runs; the project root by default. */
  cwd?: string
}

/**
 * How long a child may take to reach the event a test waits for: a line printed (the server
 * listening), or its exit after a short command. A start is loading the service (~0.5 s from
 * dist/, ~1.5 s through tsx), then for the server and the worker connecting and migrating: past
 * the former 20 and 30 s bounds beside other test files and two busy loops on a 2-core machine.
 * It only bounds a failure, so it is generous; a test's own timeout must cover the sum of its waits.
 */
export const START_MS = 60_000

/**
 * The script `node` runs to start the service's server or CLI as `npm start` does: the build in
 * dist/src, brought up to date before any test file by the global setup (build-setup.ts). A start
 * from it is ~0.5 s of CPU against ~1.5 s through tsx, which compiles the sources first; the tests
 * that are about `npm start` and `npm run cli` themselves run those commands.
 */
export function builtScript(name: 'server' | 'cli'): string {
  return path.join('dist', 'src', `${name}.js`)
}

/** Every child still running; `killAll` ends them (call it in `afterAll`). */
const running = new Set<Child>()

/**
 * A child process whose stdout and stderr are collected, with helpers that wait for a line or
 * for the exit, each with a timeout so that a test never hangs.
 */
export class Child {
  readonly proc: ChildProcess
  readonly exited: Promise<Exit>
  private out = ''
  private err = ''
  private exit: Exit | undefined
  private readonly waiters = new Set<() => void>()

  constructor(
    readonly command: string,
    readonly args: string[],
    private readonly options: SpawnOptions = {},
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[name]
      else env[name] = value
    }
    this.proc = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.group ?? false,
    })
    running.add(this)
    this.proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.out += chunk
      this.notify()
    })
    this.proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.err += chunk
      this.notify()
    })
    this.exited = new Promise((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit) return
        this.exit = exit
        running.delete(this)
        this.notify()
        resolve(exit)
      }
      // 'close' fires once the pipes are drained, so the output is complete when it resolves.
      this.proc.on('close', (code, signal) => done({ code, signal }))
      this.proc.on('error', (error) => {
        this.err += `spawn error: ${error.message}\n`
        done({ code: null, signal: null })
      })
    })
  }

  get stdout(): string {
    return this.out
  }

  get stderr(): string {
    return this.err
  }

  get hasExited(): boolean {
    return this.exit !== undefined
  }

  /** Sends a signal to the child (to its whole group when spawned with `group`). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.exit || this.proc.pid === undefined) return
    try {
      if (this.options.group) process.kill(-this.proc.pid, signal)
      else this.proc.kill(signal)
    } catch {
      // Already gone.
    }
  }

  /** Resolves with the first match of `pattern` in stdout; rejects on exit or timeout. */
  waitForStdout(pattern: RegExp, timeoutMs = START_MS): Promise<RegExpMatchArray> {
    return this.waitFor(() => this.out.match(pattern), `${pattern} on stdout`, timeoutMs)
  }

  /** Resolves with the exit; rejects (leaving the child running for `killAll`) after `timeoutMs`. */
  waitForExit(timeoutMs = START_MS): Promise<Exit> {
    return this.waitFor(() => this.exit ?? null, 'the exit', timeoutMs, false)
  }

  private waitFor<T>(probe: () => T | null, what: string, timeoutMs: number, failOnExit = true): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = probe()
        if (value !== null) finish(() => resolve(value))
        else if (failOnExit && this.exit) finish(() => reject(this.failure(`exited before ${what}`)))
      }
      const timer = setTimeout(
        () => finish(() => reject(this.failure(`no ${what} within ${timeoutMs} ms`))),
        timeoutMs,
      )
      const finish = (settle: () => void) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        settle()
      }
      this.waiters.add(check)
      check()
    })
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter()
  }

  private failure(message: string): Error {
    return new Error(
      `${[this.command, ...this.args].join(' ')}: ${message} (exit ${JSON.stringify(this.exit)})\n` +
        `--- stdout ---\n${this.out}\n--- stderr ---\n${this.err}`,
    )
  }
}

export function spawnChild(command: string, args: string[], options: SpawnOptions = {}): Child {
  return new Child(command, args, options)
}

export interface RunResult extends Exit {
  stdout: string
  stderr: string
}

/** Runs a command to its end (killed after `timeoutMs`) and returns its exit and output. */
export async function run(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<RunResult> {
  const child = spawnChild(command, args, options)
  try {
    const exit = await child.waitForExit(options.timeoutMs ?? START_MS)
    return { ...exit, stdout: child.stdout, stderr: child.stderr }
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
}

/** Ends every child still running: SIGTERM, then SIGKILL for any that is still there 3 s later. */
export async function killAll(): Promise<void> {
  const children = [...running]
  for (const child of children) child.kill('SIGTERM')
  await Promise.all(
    children.map((child) =>
      child.waitForExit(3000).catch(() => {
        child.kill('SIGKILL')
        return child.waitForExit(2000).catch(() => undefined)
      }),
    ),
  )
}

/**
 * A TCP port that was free a moment ago, for a child process that must be told its port before it
 * starts. It is drawn below the kernel's ephemeral range: a port the kernel handed out for
 * `listen(0)` is handed out again, and outgoing connections (to PostgreSQL, Redis, Chromium) take
 * local ports from that range too, so between our check and the child's `listen` another test could
 * hold it (`EADDRINUSE`, seen in CI). Below the range only another explicit choice can collide, and
 * the draw is random and checked on the wildcard address the child listens on.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralPortRange()
  const floor = 10_000
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = floor + Math.floor(Math.random() * (low - floor))
    if (await canListen(port)) return port
  }
  throw new Error('no free port below the ephemeral range after 50 tries')
}

function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number)
    if (low !== undefined && high !== undefined && low > 10_000) return [low, high]
  } catch {
    // not Linux: the IANA dynamic range
  }
  return [49_152, 65_535]
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    // No host: the wildcard address (dual-stack), the one a child that is given only a port binds.
    server.listen(port, () => server.close(() => resolve(true)))
  })
}

/**
 * Runs `fn` while holding a lock shared by every process of this machine (a file created with
 * O_EXCL), e.g. so that two test runs do not compile into `dist/` at the same time. A lock older
 * than `staleMs` is taken to be abandoned by a crashed run.
 */
export async function withFileLock<T>(
  name: string,
  fn: () => Promise<T>,
  { timeoutMs = 120_000, staleMs = 120_000 } = {},
): Promise<T> {
  const file = path.join(os.tmpdir(), `${name}.lock`)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      try {
        if (Date.now() - fs.statSync(file).mtimeMs > staleMs) fs.rmSync(file, { force: true })
      } catch {
        // Removed meanwhile by its owner.
      }
      if (Date.now() > deadline) throw new Error(`Could not take the lock ${file} within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  try {
    return await fn()
  } finally {
    fs.rmSync(file, { force: true })
  }
}
