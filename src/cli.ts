import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { type Config, ConfigError, loadConfig } from './config.js'
import { ApiError } from './core/errors.js'
import { openServiceDatabase } from './db/connection.js'
import { migrateToLatest } from './db/migrate.js'
import { type BackupResult, backupSqlite } from './db/sqlite/backup.js'
import { RestoreRefused, restoreSqlite } from './db/sqlite/restore.js'
import type { Db } from './db/types.js'
import { isPeopleOnlyScope, isScope, type Scope } from './modules/keys/scopes.js'
import {
  createKey,
  keyLabel,
  listKeys,
  MAX_KEY_LABEL_LENGTH,
  revokeKey,
  setKeyLabel,
} from './modules/keys/service.js'
import { createMailer } from './modules/users/mailer.js'
import { isRole, ROLES, type Role } from './modules/users/roles.js'
import {
  CLI_CHANGE,
  inviteFromCommandLine,
  mailInvitation,
  resetLinkFromCommandLine,
} from './modules/users/service.js'

const USAGE = `Usage: npm run --silent cli -- <command>

Commands:
  migrate                          bring the database schema up to date
  keys create --account <name> --mode test|live [--scopes a,b] [--locations loc_a,loc_b]
              [--expires-at <ISO>] [--label <text>] [--json]
                                   create a key (and the account if new); the secret is shown only here;
                                   --locations holds it to those locations of the account (in its mode)
  keys list [--json]               list keys (never their secrets)
  keys label <id> <text>           set a key's label (at most ${MAX_KEY_LABEL_LENGTH} characters; "" clears it)
  keys revoke <id>                 revoke a key (effective within 5 s in running servers)
  users invite --account <name> --email <e> --role ${ROLES.join('|')} [--locations loc_a,loc_b]
               [--name <text>] [--json]
                                   invite a person to the account (made if new); the link is shown
                                   only here (and e-mailed with SMTP_URL); --locations holds them to
                                   those locations (of either mode)
  users reset-password --email <e> [--json]
                                   a link that sets the person's password (valid 1 hour), to hand
                                   to them when the service sends no e-mail
  serve                            serve the API (same as npm start)
  worker                           deliver webhooks in this process (run the API with WORKER=off)
  backup <file>                    SQLite: copy the database into a new file while the service runs
                                   (PostgreSQL: use pg_dump)
  restore <file>                   SQLite: put a backup in place of the database; refused while any
                                   process has it open (PostgreSQL: use pg_restore)

The database is DATABASE_URL (default sqlite:data/attendance.db).`

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      mode: { type: 'string' },
      scopes: { type: 'string' },
      locations: { type: 'string' },
      'expires-at': { type: 'string' },
      label: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  const [command, sub, arg] = positionals
  if (values.help || !command) {
    console.log(USAGE)
    return
  }
  // Loaded only when needed: the HTTP app doubles the start-up time of every other command.
  if (command === 'serve') return (await import('./server.js')).serve()
  if (command === 'worker') return (await import('./worker.js')).runWorker()
  if (command === 'backup') return backup(required(sub, 'the backup file'))
  if (command === 'restore') return restore(required(sub, 'the backup file'))

  // Arguments are checked before the database is touched: a usage error needs no database.
  const task = databaseTask(command, sub, arg, values, positionals)
  const config = loadConfig()
  const { db } = openServiceDatabase(config)
  try {
    await migrateToLatest(db)
    await task(db, config)
  } finally {
    await db.destroy()
  }
}

type Options = {
  account?: string
  mode?: string
  scopes?: string
  locations?: string
  'expires-at'?: string
  label?: string
  email?: string
  role?: string
  name?: string
  json?: boolean
}

function databaseTask(
  command: string,
  sub: string | undefined,
  arg: string | undefined,
  values: Options,
  positionals: string[],
): (db: Db, config: Config) => Promise<void> {
  if (command === 'migrate') return async () => console.log('Database is up to date.')
  if (command === 'keys' && sub === 'create') {
    const input = {
      account: required(values.account, '--account'),
      mode: parseMode(values.mode),
      scopes: values.scopes === undefined ? undefined : parseScopes(values.scopes),
      locationIds: values.locations === undefined ? undefined : parseLocations(values.locations),
      expiresAt: values['expires-at'] === undefined ? undefined : parseInstant(values['expires-at']),
      label: values.label === undefined ? null : parseLabel(values.label),
    }
    return async (db) => {
      const key = await createKey(db, input).catch((error: unknown) => {
        // A location that is not the account's is the caller's mistake, told as a usage error.
        if (error instanceof ApiError && error.code === 'unknown_location')
          throw new UsageError(
            `${error.message} --locations names the account's locations in the key's mode.`,
          )
        throw error
      })
      console.log(
        values.json
          ? JSON.stringify(key)
          : `Created ${key.id} (${key.mode}${key.label === null ? '' : `, "${key.label}"`}) for ${key.account_id}:\n${key.secret}`,
      )
    }
  }
  if (command === 'keys' && sub === 'list') {
    return async (db) => {
      const keys = await listKeys(db)
      if (values.json) console.log(JSON.stringify(keys))
      else
        for (const k of keys)
          console.log(
            [
              k.id,
              k.account,
              k.mode,
              `${k.prefix}…`,
              k.revoked_at ? 'revoked' : 'active',
              k.label ?? '',
            ].join('\t'),
          )
    }
  }
  if (command === 'keys' && sub === 'label') {
    const id = required(arg, 'the key id')
    const text = positionals[3]
    if (text === undefined) throw new UsageError('Missing the label (an empty one, "", clears it).')
    const label = parseLabel(text)
    return async (db) => {
      if (!(await setKeyLabel(db, id, label))) throw new UsageError(`No such key: ${id}`)
      console.log(values.json ? JSON.stringify({ id, label }) : `Labelled ${id}: ${label ?? '(no label)'}.`)
    }
  }
  if (command === 'keys' && sub === 'revoke') {
    const id = required(arg, 'the key id')
    return async (db) => {
      if (!(await revokeKey(db, id))) throw new UsageError(`No such key: ${id}`)
      console.log(values.json ? JSON.stringify({ id, revoked: true }) : `Revoked ${id}.`)
    }
  }
  if (command === 'users' && sub === 'invite') {
    const email = parseEmail(values.email)
    const input = {
      account: required(values.account, '--account'),
      email,
      role: parseRole(values.role),
      name: values.name === undefined ? email.slice(0, email.indexOf('@')) : parseName(values.name),
      locationIds: values.locations === undefined ? null : parseLocations(values.locations),
    }
    return async (db, config) => {
      const { user, accountId } = await inviteFromCommandLine(db, config.publicUrl, input).catch(asUsageError)
      const mailer = createMailer(config)
      if (mailer) {
        // The invitation stands and its link is printed whatever the mail server does.
        await mailInvitation(db, mailer, accountId, user, CLI_CHANGE.actor)
          .catch((error: unknown) =>
            console.error(
              `The invitation could not be e-mailed (${errorText(error)}); hand over the link below.`,
            ),
          )
          .finally(() => mailer.close())
      }
      const { invite_url, ...shown } = user
      console.log(
        values.json
          ? JSON.stringify({ user: shown, invite_url })
          : `Invited ${user.email} to ${input.account} as ${user.role} (${user.id}). Their link (valid 7 days, shown once):\n${invite_url}`,
      )
    }
  }
  if (command === 'users' && sub === 'reset-password') {
    const email = parseEmail(values.email)
    return async (db, config) => {
      const url = await resetLinkFromCommandLine(db, config.publicUrl, email)
      if (url === undefined) throw new UsageError(`No person has the e-mail ${email}.`)
      console.log(
        values.json
          ? JSON.stringify({ reset_url: url })
          : `A link that sets the password of ${email} (valid 1 hour, shown once; it voids earlier ones):\n${url}`,
      )
    }
  }
  throw new UsageError(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`)
}

/** A refusal of the service (an e-mail in use, an unknown location) is the caller's mistake: a usage error. */
function asUsageError(error: unknown): never {
  if (error instanceof ApiError && error.status < 500) throw new UsageError(error.message)
  throw error
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * `cli backup <file>`: SQLite's online backup of the service's database (db/sqlite/backup.ts), no
 * migration run; then the copy's size and row counts. docs/operations.md, "Backups".
 */
async function backup(target: string): Promise<void> {
  const source = sqliteFile(
    'cli backup copies a SQLite database. On PostgreSQL use pg_dump (e.g. pg_dump --format=custom --file=<file> "$DATABASE_URL")',
    'back up',
  )
  if (!fs.existsSync(source))
    throw new UsageError(`No database at ${source} (DATABASE_URL): nothing to back up.`)
  const { bytes, tables } = await backupSqlite(source, target).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error
    throw new UsageError(`${target} exists: cli backup never overwrites a file. Name a new one.`)
  })
  console.log(`Backed up ${source} to ${target}: ${bytes} bytes.`)
  printTables(tables)
}

/**
 * `cli restore <file>`: the backup in place of the service's database (db/sqlite/restore.ts),
 * refused while any process has the database open; no migration run (the service's start does it).
 * docs/operations.md, "Backups".
 */
async function restore(backupFile: string): Promise<void> {
  const database = sqliteFile(
    'cli restore replaces a SQLite database. On PostgreSQL use pg_restore (e.g. pg_restore --clean --if-exists --dbname="$DATABASE_URL" <file>)',
    'restore',
  )
  let restored: ReturnType<typeof restoreSqlite>
  try {
    restored = restoreSqlite(database, backupFile)
  } catch (error) {
    throw error instanceof RestoreRefused ? new UsageError(error.message) : error
  }
  const removed = restored.removed.length ? `; deleted ${restored.removed.join(', ')}` : ''
  console.log(`Restored ${database} from ${backupFile}: ${restored.bytes} bytes${removed}.`)
  printTables(restored.tables)
}

/** The SQLite file DATABASE_URL names; `onPostgres` says what to use instead (a sentence). */
function sqliteFile(onPostgres: string, verb: string): string {
  const { databaseUrl } = loadConfig()
  if (!databaseUrl.startsWith('sqlite:'))
    throw new UsageError(`${onPostgres}; see docs/operations.md, "Backups".`)
  const file = databaseUrl.slice('sqlite:'.length)
  if (file === ':memory:')
    throw new UsageError(`An in-memory database (sqlite::memory:) has no file to ${verb}.`)
  return file
}

/** A database's tables and their rows, one a line, as `cli backup` and `cli restore` print them. */
function printTables(tables: BackupResult['tables']): void {
  const width = Math.max(...tables.map((t) => t.name.length))
  for (const table of tables) console.log(`  ${table.name.padEnd(width)}  ${table.rows}`)
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new UsageError(`Missing ${name}.`)
  return value
}

function parseMode(value: string | undefined): 'test' | 'live' {
  if (value === 'test' || value === 'live') return value
  throw new UsageError('--mode must be test or live.')
}

function parseScopes(value: string): Scope[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const bad = scopes.filter((s) => !isScope(s))
  if (bad.length || scopes.length === 0)
    throw new UsageError(`Unknown scope(s): ${bad.join(', ') || '(none given)'}.`)
  const peopleOnly = (scopes as Scope[]).filter(isPeopleOnlyScope)
  if (peopleOnly.length)
    throw new UsageError(`No key holds ${peopleOnly.join(', ')}: only people manage people and keys.`)
  return scopes as Scope[]
}

function parseLocations(value: string): string[] {
  const ids = [...new Set(value.split(',').map((id) => id.trim()))]
  if (ids.some((id) => id === ''))
    throw new UsageError('--locations is a comma-separated list of location ids (loc_…), none empty.')
  return ids
}

function parseEmail(value: string | undefined): string {
  const email = required(value, '--email')
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
    throw new UsageError(`--email must be an e-mail address, e.g. ada@example.com.`)
  return email
}

function parseRole(value: string | undefined): Role {
  const role = required(value, '--role')
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}.`)
  return role
}

function parseName(value: string): string {
  const name = value.trim()
  if (name === '' || [...name].length > 200) throw new UsageError('--name has 1 to 200 characters.')
  return name
}

function parseLabel(value: string): string | null {
  const label = keyLabel(value)
  if (label === undefined) throw new UsageError(`A label has at most ${MAX_KEY_LABEL_LENGTH} characters.`)
  return label
}

function parseInstant(value: string): Date {
  const date = new Date(value)
  if (!/[zZ]|[+-]\d\d:?\d\d$/.test(value) || Number.isNaN(date.getTime())) {
    throw new UsageError('--expires-at must be an ISO-8601 time with a zone, e.g. 2027-01-01T00:00:00Z.')
  }
  return date
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const code = (error as { code?: unknown })?.code
  const usage =
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
  // An error with a code (ECONNREFUSED, a PostgreSQL SQLSTATE, SQLITE_*, EADDRINUSE…) is about the
  // environment, not a bug: one line, no stack. Anything else is unexpected and keeps its stack.
  const operational = usage || typeof code === 'string'
  console.error(
    operational && error instanceof Error ? error.message || `${error.name}: ${String(code)}` : error,
  )
  process.exit(usage ? 2 : 1)
})
