import fs from 'node:fs'

/** A whole number from the environment, at least `min`; `fallback` when unset. */
export function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}`)
  return value
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** /proc reports CPU time in clock ticks of 10 ms (USER_HZ = 100 on Linux). */
export const MS_PER_TICK = 10

/** CPU time of a process so far (all its threads), in ticks; NaN without /proc. */
export function cpuTicks(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return Number.NaN
  }
}
