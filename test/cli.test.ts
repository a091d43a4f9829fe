import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/db/connection.js'
import { cliOn, expectFailure, ONE_COMMAND, oneJsonLine, TWO_COMMANDS } from './helpers/cli.js'
import { createTestDatabase, dialect, type TestDatabase } from './helpers/database.js'
import { killAll, run } from './helpers/process.js'

/**
 * The scopes a key made without `--scopes` holds ("Keys, modes, scopes" and "People and access"):
 * every one but `users:*` and `keys:*`, written out independently of the code.
 */
const ALL_SCOPES = [
  ...[
    'operators',
    'sessions',
    'devices',
    'locations',
    'scans',
    'webhooks',
    'events',
    'timesheets',
    'schedules',
    'leave',
  ].flatMap((r) => [`${r}:read`, `${r}:write`]),
  'sessions:approve',
]
const CREATED_KEY_FIELDS = [
  'account_id',
  'expires_at',
  'id',
  'label',
  'location_ids',
  'mode',
  'scopes',
  'secret',
]

interface CreatedKey {
  id: string
  secret: string
  account_id: string
  mode: string
  scopes: string[]
  expires_at: string | null
  label: string | null
}

interface ListedKey {
  id: string
  account_id: string
  mode: string
  scopes: string[]
  expires_at: string | null
  revoked_at: string | null
  label: string | null
  [field: string]: unknown
}

let database: TestDatabase
/** The keys the create tests made, in order: acme test, acme live, acme scoped, globex expiring. */
const keys: CreatedKey[] = []

/**
 * The CLI on this file's database (test/helpers/cli.ts). The first create test runs the documented
 * `npm run cli` itself.
 */
const cli = cliOn(() => database.url)

/** `keys create --account … --mode … [options…] --json`: the key of its one JSON line. */
async function createdKey(account: string, mode: 'test' | 'live', ...options: string[]): Promise<CreatedKey> {
  return oneJsonLine<CreatedKey>(
    await cli(['keys', 'create', '--account', account, '--mode', mode, ...options, '--json']),
  )
}

/** Checks a secret's shape and that it carries at least 128 bits of randomness. */
function expectSecret(secret: string, mode: 'test' | 'live'): void {
  expect(secret).toMatch(new RegExp(`^sk_${mode}_[A-Za-z0-9_-]+$`))
  const random = secret.slice(`sk_${mode}_`.length)
  const bitsPerChar = /^[0-9a-f]+$/.test(random) ? 4 : 6
  expect(random.length * bitsPerChar).toBeGreaterThanOrEqual(128)
}

beforeAll(async () => {
  database = await createTestDatabase()
})

afterAll(async () => {
  await killAll()
  await database.drop()
})

describe('cli migrate', () => {
  it(
    'creates the schema on an empty database and is idempotent',
    async () => {
      const first = await cli(['migrate'])
      expect(first.code, first.stderr).toBe(0)
      const second = await cli(['migrate'])
      expect(second.code, second.stderr).toBe(0)
      expect(second.stdout).toMatch(/up to date/i)
    },
    TWO_COMMANDS,
  )
})

describe('cli keys create', { timeout: ONE_COMMAND }, () => {
  it('prints exactly one JSON line with the key, all scopes by default (documented npm command)', async () => {
    const result = await run(
      'npm',
      ['run', '--silent', 'cli', '--', 'keys', 'create', '--account', 'acme', '--mode', 'test', '--json'],
      { env: { DATABASE_URL: database.url } },
    )
    const key = oneJsonLine<CreatedKey>(result)
    expect(Object.keys(key).sort()).toEqual(CREATED_KEY_FIELDS)
    expectSecret(key.secret, 'test')
    expect(key.id).toEqual(expect.any(String))
    expect(key.account_id).toEqual(expect.any(String))
    expect(key.mode).toBe('test')
    expect([...key.scopes].sort()).toEqual([...ALL_SCOPES].sort())
    expect(key.expires_at).toBeNull()
    expect(key.label).toBeNull()
    keys.push(key)
  })

  it('gives sk_live_ keys in live mode and reuses an existing account', async () => {
    const key = await createdKey('acme', 'live')
    expect(Object.keys(key).sort()).toEqual(CREATED_KEY_FIELDS)
    expectSecret(key.secret, 'live')
    expect(key.mode).toBe('live')
    expect(key.account_id).toBe(keys[0]?.account_id)
    expect(key.id).not.toBe(keys[0]?.id)
    expect(key.secret).not.toBe(keys[0]?.secret)
    keys.push(key)
  })

  it('honours --scopes', async () => {
    const key = await createdKey('acme', 'test', '--scopes', 'operators:read,sessions:write')
    expect(key.scopes).toEqual(['operators:read', 'sessions:write'])
    expect(key.account_id).toBe(keys[0]?.account_id)
    keys.push(key)
  })

  it('echoes --expires-at as ISO-8601 and creates a new account for a new name', async () => {
    const key = await createdKey('globex', 'test', '--expires-at', '2030-01-01T00:00:00Z')
    expect(key.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    expect(Date.parse(key.expires_at ?? '')).toBe(Date.parse('2030-01-01T00:00:00Z'))
    expect(key.account_id).not.toBe(keys[0]?.account_id)
    keys.push(key)
  })
})

// One command at a time: eight starts at once beside the other test files on 2 cores took over 20 s
// each in a slow CI run (through tsx then, ~2 s of CPU each), and four of them timed out.
describe('cli keys create rejects bad input', { timeout: ONE_COMMAND }, () => {
  const base = ['keys', 'create', '--json']
  it.each([
    [
      'an unknown scope',
      [...base, '--account', 'acme', '--mode', 'test', '--scopes', 'operators:read,payroll:write'],
      /scope.*payroll:write/i,
    ],
    ['a bad --mode', [...base, '--account', 'acme', '--mode', 'prod'], /--mode/],
    ['a missing --account', [...base, '--mode', 'test'], /--account/],
    [
      'a bad --expires-at',
      [...base, '--account', 'acme', '--mode', 'test', '--expires-at', 'next tuesday'],
      /--expires-at/,
    ],
    ['an --account without a value', [...base, '--mode', 'test', '--account'], /--account/],
    [
      'a --label over 100 characters',
      [...base, '--account', 'acme', '--mode', 'test', '--label', 'x'.repeat(101)],
      /label.*100 characters/,
    ],
  ])('%s: non-zero exit, a message on stderr, nothing on stdout', async (_name, args, message) => {
    expectFailure(await cli(args), message)
  })

  it('an unreachable database: non-zero exit with a one-line message', async () => {
    expectFailure(
      await cli(['keys', 'list', '--json'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }),
      /ECONNREFUSED|connect/i,
    )
  })

  it('a usage error needs no database: exit 2 before connecting', async () => {
    const result = await cli(['keys', 'create', '--account', 'acme', '--mode', 'prod'], {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    })
    expectFailure(result, /--mode must be test or live/)
    expect(result.code).toBe(2)
  })

  it('an unsupported DATABASE_URL: non-zero exit with a one-line message', async () => {
    expectFailure(await cli(['migrate'], { DATABASE_URL: 'mysql://x' }), /DATABASE_URL/)
  })
})

describe('cli keys list and revoke', { timeout: ONE_COMMAND }, () => {
  it('lists every key (and no key from the rejected commands) without ever showing a secret', async () => {
    expect(keys).toHaveLength(4)
    const result = await cli(['keys', 'list', '--json'])
    const listed = oneJsonLine<ListedKey[]>(result)
    expect(listed.map((k) => k.id).sort()).toEqual(keys.map((k) => k.id).sort())
    for (const key of keys) {
      expect(result.stdout).not.toContain(key.secret)
      expect(result.stdout).not.toContain(key.secret.slice(-16))
      const entry = listed.find((k) => k.id === key.id)
      expect(entry).toMatchObject({
        account_id: key.account_id,
        mode: key.mode,
        scopes: key.scopes,
        expires_at: key.expires_at,
        revoked_at: null,
      })
      expect(entry).not.toHaveProperty('secret')
    }
  })

  it(
    'revokes a key: keys list then shows revoked_at on it only',
    async () => {
      const target = keys[1]
      if (!target) throw new Error('no key to revoke')
      const result = await cli(['keys', 'revoke', target.id])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain(target.id)
      const listed = oneJsonLine<ListedKey[]>(await cli(['keys', 'list', '--json']))
      for (const entry of listed) {
        if (entry.id === target.id) expect(Date.parse(entry.revoked_at ?? '')).not.toBeNaN()
        else expect(entry.revoked_at).toBeNull()
      }
    },
    TWO_COMMANDS,
  )

  it('revoking an unknown id fails', async () => {
    expectFailure(await cli(['keys', 'revoke', 'key_does_not_exist']), /key_does_not_exist/)
  })
})

describe('stored keys', () => {
  it('hold only the SHA-256 of each secret, never the secret itself', async () => {
    expect(keys).toHaveLength(4)
    const { db } = openDatabase(database.url)
    try {
      const rows = await db.selectFrom('api_keys').selectAll().execute()
      expect(rows).toHaveLength(keys.length)
      for (const key of keys) {
        const row = rows.find((r) => r.id === key.id)
        expect(row?.secret_hash).toBe(createHash('sha256').update(key.secret).digest('hex'))
      }
      // No column of any table holds a secret, nor its random part.
      // On PostgreSQL, only the tables of this database's own schema (the search_path one).
      const schema =
        dialect === 'postgres'
          ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
          : undefined
      const tables = (await db.introspection.getTables()).filter((t) => t.schema === schema)
      expect(tables.map((t) => t.name)).toContain('api_keys')
      for (const table of tables) {
        const name = schema ? `${schema}.${table.name}` : table.name
        const all = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)
        const dump = JSON.stringify(all.rows)
        for (const key of keys) expect(dump).not.toContain(key.secret.slice(-16))
      }
    } finally {
      await db.destroy()
    }
  })
})

describe('cli keys labels', () => {
  /** Three or four commands in one test, each up to `run`'s 20 s on a loaded machine. */
  const FOUR_COMMANDS = 2 * TWO_COMMANDS
  let labelled: CreatedKey

  const listed = async (id: string) =>
    oneJsonLine<ListedKey[]>(await cli(['keys', 'list', '--json'])).find((k) => k.id === id)

  it(
    'create --label stores it (trimmed): the JSON line and keys list show it',
    async () => {
      labelled = await createdKey('acme', 'test', '--label', ' Payroll export ')
      expect(Object.keys(labelled).sort()).toEqual(CREATED_KEY_FIELDS)
      expect(labelled.label).toBe('Payroll export')
      expect(await listed(labelled.id)).toMatchObject({ label: 'Payroll export', revoked_at: null })
    },
    TWO_COMMANDS,
  )

  it(
    'keys label sets and changes a label (the text list shows it last) and "" clears it',
    async () => {
      const set = await cli(['keys', 'label', labelled.id, "Dana's console"])
      expect(set.code, set.stderr).toBe(0)
      expect(set.stdout).toContain(labelled.id)
      const text = await cli(['keys', 'list'])
      expect(text.code, text.stderr).toBe(0)
      const line = text.stdout.split('\n').find((l) => l.startsWith(`${labelled.id}\t`))
      expect(line?.split('\t')).toEqual([
        labelled.id,
        'acme',
        'test',
        expect.stringMatching(/…$/),
        'active',
        "Dana's console",
      ])
      const cleared = await cli(['keys', 'label', labelled.id, '', '--json'])
      expect(oneJsonLine(cleared)).toEqual({ id: labelled.id, label: null })
      expect((await listed(labelled.id))?.label).toBeNull()
    },
    FOUR_COMMANDS,
  )

  it(
    'keys label refuses an unknown key, a missing text (exit 2) and a label over 100 characters (exit 2)',
    async () => {
      expectFailure(
        await cli(['keys', 'label', 'key_does_not_exist', 'x']),
        /No such key: key_does_not_exist/,
      )
      const missing = await cli(['keys', 'label', labelled.id])
      expectFailure(missing, /Missing the label/)
      expect(missing.code).toBe(2)
      const long = await cli(['keys', 'label', labelled.id, 'é'.repeat(101)])
      expectFailure(long, /at most 100 characters/)
      expect(long.code).toBe(2)
      // 100 characters (not bytes) are fine.
      expect((await cli(['keys', 'label', labelled.id, 'é'.repeat(100)])).code).toBe(0)
    },
    FOUR_COMMANDS,
  )
})
