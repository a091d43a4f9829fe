import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

/** The exit codes every command of the package shares. */
export const EXIT = { ok: 0, failed: 1, badInput: 2, interrupted: 130 } as const

export interface Output {
  write(text: string): unknown
  isTTY?: boolean
}

/** What a command gets from the process it runs in. */
interface ProcessIo {
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
  env: NodeJS.ProcessEnv
  signal: AbortSignal
}

/** Whether the module at `moduleUrl` is the script node was started with (through links too). */
export function isEntryPoint(moduleUrl: string): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href
  } catch {
    return false
  }
}

/**
 * Runs a command in this process: SIGINT/SIGTERM abort its signal, its answer becomes the exit
 * code, and an unexpected failure is printed with the command's name. With `interruptNotice`, the
 * first signal prints it and a second one exits at once; without, further signals change nothing.
 */
export function runCommand(
  name: string,
  main: (argv: string[], io: ProcessIo) => Promise<number>,
  options: { interruptNotice?: string } = {},
): void {
  const controller = new AbortController()
  const stop = () => {
    if (options.interruptNotice !== undefined) {
      if (controller.signal.aborted) process.exit(EXIT.interrupted)
      process.stderr.write(`\n${name}: ${options.interruptNotice}\n`)
    }
    controller.abort()
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  }).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      process.stderr.write(
        `${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      )
      process.exitCode = EXIT.failed
    },
  )
}
