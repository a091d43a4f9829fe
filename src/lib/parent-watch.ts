import fs from 'node:fs'

/**
 * How often the chain of parents is read: a stop of npm is seen within this. A read is a few small
 * files of /proc. Real time, not the process clock: this is about the machine (lib/clock.ts).
 */
const EVERY_MS = 1000

/** What npm (and pnpm, yarn) put in the environment of a script they run. */
const SCRIPT_VARIABLE = 'npm_lifecycle_event'

/**
 * Sends this process SIGTERM, its graceful stop, when the npm that started it has exited.
 *
 * `npm start` runs `sh -c "node dist/src/server.js"`, `npm run cli -- worker` runs `sh -c "node
 * dist/src/cli.js worker"`. npm passes a SIGTERM on to its child, the shell, which dies of it
 * without passing it on: the service ran on, orphaned, holding the database (issue 35). So a process started by a package manager's script records its
 * ancestors up to that package manager (the first whose environment is not the same script's) and
 * reads them again every second: when one has a parent other than the one recorded, it has been
 * orphaned, so something between this process and npm has exited, and the service stops as a
 * supervisor's SIGTERM would stop it.
 *
 * Nothing is watched outside a script (node run directly, as a supervisor should: a parent's exit
 * then means nothing, e.g. `nohup`), nor where there is no /proc (not Linux): there, run node
 * directly (docs/operations.md, "Starting").
 */
export function stopWhenLauncherExits(log: { warn(message: string): void }): void {
  const chain = scriptAncestors()
  if (!chain) return
  const timer = setInterval(() => {
    if (chain.every((pid, i) => i === chain.length - 1 || parentOf(pid) === chain[i + 1])) return
    clearInterval(timer)
    log.warn(`the npm script that started this process has ended (npm: pid ${chain.at(-1)}): stopping`)
    process.kill(process.pid, 'SIGTERM')
  }, EVERY_MS)
  // A chore beside the service: it never keeps the process alive by itself.
  timer.unref()
}

/**
 * This process, the processes its package manager's script runs it through, and that package
 * manager; undefined outside a script or without /proc.
 */
function scriptAncestors(): number[] | undefined {
  const script = scriptOf(process.pid)
  if (script === undefined) return undefined
  const chain = [process.pid]
  for (;;) {
    const parent = parentOf(chain.at(-1) as number)
    if (parent === undefined || parent === 0) return chain.length > 1 ? chain : undefined
    chain.push(parent)
    if (scriptOf(parent) !== script) return chain
  }
}

/** The parent of `pid` (the fourth field of /proc/<pid>/stat, after the name in parentheses). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const parent = Number(
      stat
        .slice(stat.lastIndexOf(')') + 1)
        .trim()
        .split(' ')[1],
    )
    return Number.isInteger(parent) ? parent : undefined
  } catch {
    return undefined
  }
}

/** The script `pid` was started for, from the environment it was started with (its own to read). */
function scriptOf(pid: number): string | undefined {
  try {
    const prefix = `${SCRIPT_VARIABLE}=`
    const entry = fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((variable) => variable.startsWith(prefix))
    return entry?.slice(prefix.length)
  } catch {
    return undefined
  }
}
