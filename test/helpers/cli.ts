import { expect } from 'vitest'
import { builtScript, type RunResult, run, START_MS } from './process.js'

/**
 * The CLI built from src/cli.ts (`node dist/src/cli.js …`) on the database at `databaseUrl`: what
 * `npm run cli` runs after its build step (`precli`), without npm and that check each time.
 */
export function cliOn(databaseUrl: () => string) {
  return (args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> =>
    run(process.execPath, [builtScript('cli'), ...args], { env: { DATABASE_URL: databaseUrl(), ...env } })
}

/**
 * The timeouts of tests that run one or two commands: each command may take up to `run`'s
 * START_MS (`migrate` through tsx took over 20 s beside other test files and two busy loops on 2
 * cores), so the default 30 s is not enough even for one.
 */
export const ONE_COMMAND = START_MS + 10_000
export const TWO_COMMANDS = 2 * START_MS + 10_000

/** Parses stdout that must be exactly one line of JSON. */
export function oneJsonLine<T>(result: RunResult): T {
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout.endsWith('\n')).toBe(true)
  const lines = result.stdout.slice(0, -1).split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0] ?? '') as T
}

/** A failed command: non-zero exit, nothing on stdout, one clear line on stderr without a stack. */
export function expectFailure(result: RunResult, message: RegExp): void {
  expect(result.code).not.toBe(0)
  expect(result.code).not.toBeNull()
  expect(result.stdout).toBe('')
  expect(result.stderr).toMatch(message)
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at /m)
}
