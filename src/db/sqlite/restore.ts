import fs from 'node:fs'
import path from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { SQLite } from './addon.js'
import { type BackupResult, countRows } from './backup.js'

/**
 * The files SQLite keeps beside a database, by suffix. They belong to the file they were made for:
 * left beside another one put in its place, SQLite would apply that WAL (or roll back that journal)
 * to it, and the restored database would be corrupt (issue 35).
 */
const COMPANIONS = ['-wal', '-shm', '-journal']

/** A restore that was not done, for a reason the operator can act on; nothing was changed. */
export class RestoreRefused extends Error {}

export interface RestoreResult extends BackupResult {
  /** The companion files of the replaced database that were deleted. */
  removed: string[]
}

/**
 * Puts the backup `backup` in place of the SQLite database `database`, refusing while any other
 * process has it open. In order, each step before the rename leaving the database as it was:
 * 1. the backup is copied beside the database (same directory, same file system, so that the
 *    rename below is atomic) and the copy is checked: `integrity_check`, and the service's
 *    migrations table; then written to disk (fsync);
 * 2. the database is taken for this process alone (`holdAlone`), or the restore is refused;
 * 3. the companion files are deleted, the copy renamed over the database and the directory synced.
 * A crash anywhere leaves either the old database or the restored one, whole, under its name (and
 * at worst a stray `.restore-*` file beside it). Nothing is migrated: the service does that at its start.
 */
export function restoreSqlite(database: string, backup: string): RestoreResult {
  if (!fs.existsSync(backup)) throw new RestoreRefused(`No backup at ${backup}.`)
  if (fs.existsSync(database) && fs.realpathSync(database) === fs.realpathSync(backup))
    throw new RestoreRefused(`${backup} is the database itself.`)
  const copy = path.join(path.dirname(database), `.${path.basename(database)}.restore-${process.pid}`)
  fs.copyFileSync(backup, copy, fs.constants.COPYFILE_EXCL)
  try {
    const tables = checkedTables(copy, backup)
    syncFile(copy)
    const alone = fs.existsSync(database) ? holdAlone(database) : undefined
    try {
      const removed = COMPANIONS.map((suffix) => database + suffix).filter((file) => fs.existsSync(file))
      for (const file of removed) fs.rmSync(file)
      fs.renameSync(copy, database)
      syncFile(path.dirname(database))
      return { bytes: fs.statSync(database).size, tables, removed }
    } finally {
      alone?.close()
    }
  } finally {
    for (const file of [copy, ...COMPANIONS.map((suffix) => copy + suffix)]) fs.rmSync(file, { force: true })
  }
}

/** The tables of the copy, once SQLite has found it sound and it is a database of this service. */
function checkedTables(copy: string, backup: string): BackupResult['tables'] {
  let problem: string
  try {
    const file = new SQLite(copy, { fileMustExist: true })
    try {
      problem = (file.pragma('integrity_check') as Array<{ integrity_check: string }>)
        .map((row) => row.integrity_check)
        .join('; ')
    } finally {
      file.close()
    }
  } catch (error) {
    if (!String((error as { code?: unknown }).code).startsWith('SQLITE_')) throw error
    problem = (error as Error).message
  }
  if (problem !== 'ok')
    throw new RestoreRefused(`${backup} is not a sound SQLite database (${problem}): nothing was restored.`)
  const tables = countRows(copy)
  if (!tables.some((table) => table.name === 'kysely_migration'))
    throw new RestoreRefused(`${backup} is not a database of this service (no kysely_migration table).`)
  return tables
}

/**
 * A connection that holds `database` for this process alone until it is closed, or RestoreRefused
 * naming the processes that have it open.
 *
 * SQLite's own locks, first: every connection to a database in WAL mode (the service's) holds a
 * SHARED lock on the database file for as long as it is open, between transactions too (it reads
 * the WAL index in `-shm` under it), and leaving WAL mode needs the EXCLUSIVE lock: so the switch
 * below succeeds only for a connection that is alone, on any system. In locking_mode EXCLUSIVE the
 * lock is then kept until this connection closes, and a process that opens the database meanwhile
 * waits for it. Journal mode MEMORY, not DELETE: a connection with a journal file deletes
 * `<database>-journal` by name when it closes, which by then would be the restored database's.
 *
 * Then, on Linux, what holds the file without a lock: a process that has opened it and not read it
 * yet, or another program (`sqlite3`, a copy) is found among the open files in /proc.
 */
function holdAlone(database: string): BetterSqlite3.Database {
  const connection = new SQLite(database, { fileMustExist: true })
  try {
    connection.pragma('busy_timeout = 0')
    connection.pragma('locking_mode = EXCLUSIVE')
    connection.pragma('journal_mode = MEMORY')
    connection.exec('BEGIN EXCLUSIVE; COMMIT')
  } catch (error) {
    connection.close()
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error
    throw inUse(database, processesWithOpen(database))
  }
  const others = processesWithOpen(database)
  if (others.length === 0) return connection
  connection.close()
  throw inUse(database, others)
}

function inUse(database: string, processes: string[]): RestoreRefused {
  const which = processes.length ? ` (${processes.join('; ')})` : ''
  return new RestoreRefused(
    `${database} is open in another process${which}: stop every API process and cli worker first. Nothing was restored.`,
  )
}

/**
 * The other processes that have the database or its companion files open, as `pid <n>: <command>`,
 * found by the files each process has open (/proc/<pid>/fd, the same file by device and inode).
 * Processes of other users cannot be read, and are found by SQLite's locks alone; no /proc (not
 * Linux): none found.
 */
function processesWithOpen(database: string): string[] {
  const files = new Set(
    [database, ...COMPANIONS.map((suffix) => database + suffix)]
      .filter((file) => fs.existsSync(file))
      .map((file) => identity(fs.statSync(file))),
  )
  const pids = readable('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
  return pids
    .filter((pid) =>
      readable(`/proc/${pid}/fd`).some((fd) => {
        try {
          return files.has(identity(fs.statSync(`/proc/${pid}/fd/${fd}`)))
        } catch {
          return false
        }
      }),
    )
    .map((pid) => `pid ${pid}: ${commandOf(pid)}`)
}

const identity = (stats: fs.Stats) => `${stats.dev}:${stats.ino}`

/** The names in a directory, or none when it cannot be read (gone, another user's, no /proc). */
function readable(directory: string): string[] {
  try {
    return fs.readdirSync(directory)
  } catch {
    return []
  }
}

function commandOf(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return '?'
  }
}

/** Writes a file's (or a directory's entries') data to disk before the next step relies on it. */
function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}
