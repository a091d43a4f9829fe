import fs from 'node:fs'
import { SQLite } from './addon.js'

export interface BackupResult {
  /** The copy's size on disk. */
  bytes: number
  /** Every table of the copy and its rows, by name. */
  tables: Array<{ name: string; rows: number }>
}

/**
 * Pages one step of SQLite's online backup copies: all of them. The backup API restarts when
 * another connection (the running service) writes to the source between two steps, so a backup
 * done in many small steps may never finish under steady writes. In one step it reads one snapshot
 * of the database, as any reader does under WAL: the service's writes go on beside it (only the
 * checkpoints wait past it), and the copy holds every transaction committed before the step began.
 */
const ALL_PAGES = 0x7fffffff

/**
 * Copies the SQLite database `source` (with what its WAL holds) into the new file `target`, which
 * must not exist: the file is created exclusively first, so a backup never overwrites one, even
 * another backup started at the same moment. A failed copy removes the file it made.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  fs.closeSync(fs.openSync(target, 'wx'))
  try {
    const database = new SQLite(source, { fileMustExist: true })
    try {
      database.pragma('busy_timeout = 5000')
      await database.backup(target, { progress: () => ALL_PAGES })
    } finally {
      database.close()
    }
    return { bytes: fs.statSync(target).size, tables: countRows(target) }
  } catch (error) {
    fs.rmSync(target, { force: true })
    throw error
  }
}

/** A database file's tables and their row counts (a backup's, a restored copy's), read from the file. */
export function countRows(file: string): BackupResult['tables'] {
  const copy = new SQLite(file, { fileMustExist: true })
  try {
    const names = copy
      .prepare(
        "select name from sqlite_schema where type = 'table' and name not like 'sqlite_%' order by name",
      )
      .pluck()
      .all() as string[]
    return names.map((name) => ({
      name,
      rows: copy
        .prepare(`select count(*) from "${name.replaceAll('"', '""')}"`)
        .pluck()
        .get() as number,
    }))
  } finally {
    copy.close()
  }
}
