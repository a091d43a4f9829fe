import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { expectError, type Location } from './helpers/assertions.js'
import { cliOn, expectFailure, ONE_COMMAND, oneJsonLine, TWO_COMMANDS } from './helpers/cli.js'
import { killAll } from './helpers/process.js'
import { created } from './helpers/world.js'

interface CreatedKey {
  id: string
  secret: string
  account_id: string
  mode: string
  location_ids: string[] | null
}

/**
 * `keys create --locations` (decisions.md, "Sites"): a key held to some of its account's locations,
 * which the CLI checks exist in that account and the key's mode (exit 2 otherwise); and the CLI
 * refusing `users:*` and `keys:*` ("Only people manage people and keys"). The app runs in this
 * process on the CLI's database: it makes the locations and answers the keys' requests.
 */
describe('cli keys create --locations', () => {
  let t: TestApp
  const cli = cliOn(() => t.database.url)
  let north: Location
  let south: Location
  let liveSite: Location

  beforeAll(async () => {
    t = await buildTestApp()
    const test = t.client((await t.key({ account: 'acme', mode: 'test' })).secret)
    const live = t.client((await t.key({ account: 'acme', mode: 'live' })).secret)
    north = await created(test.post<Location>('/v1/locations', { name: 'North', timezone: 'UTC' }))
    south = await created(test.post<Location>('/v1/locations', { name: 'South', timezone: 'UTC' }))
    liveSite = await created(live.post<Location>('/v1/locations', { name: 'Live', timezone: 'UTC' }))
  })
  afterAll(async () => {
    await killAll()
    await t?.close()
  })

  const keysOf = async () =>
    oneJsonLine<Array<{ id: string; location_ids: string[] | null }>>(await cli(['keys', 'list', '--json']))

  it(
    'holds the key to those locations: create and list show location_ids, and the key is refused account-wide routes',
    async () => {
      const key = oneJsonLine<CreatedKey>(
        await cli([
          'keys',
          'create',
          '--account',
          'acme',
          '--mode',
          'test',
          '--locations',
          ` ${north.id},${south.id} `,
          '--json',
        ]),
      )
      expect(key.location_ids).toEqual([north.id, south.id])
      expect((await keysOf()).find((k) => k.id === key.id)?.location_ids).toEqual([north.id, south.id])
      const api = t.client(key.secret)
      expectError(await api.get('/v1/webhook-endpoints'), 403, 'insufficient_scope', 'location_restricted')
      expect((await api.get('/v1/account')).status).toBe(200)
      // A key made without --locations is listed with null: every location.
      expect((await keysOf()).filter((k) => k.id !== key.id).map((k) => k.location_ids)).toEqual([null, null])
    },
    3 * ONE_COMMAND,
  )

  it(
    'exits 2 with a message for a location the account does not have in the key’s mode, and makes no key',
    async () => {
      const before = await keysOf()
      for (const [mode, ids, named] of [
        ['test', `${north.id},loc_nothing`, 'loc_nothing'],
        ['test', liveSite.id, liveSite.id],
        ['live', north.id, north.id],
      ] as const) {
        const result = await cli(['keys', 'create', '--account', 'acme', '--mode', mode, '--locations', ids])
        expectFailure(result, new RegExp(`No such location: '${named}'.*--locations`))
        expect(result.code).toBe(2)
      }
      expect(await keysOf()).toEqual(before)
    },
    5 * ONE_COMMAND,
  )

  it(
    'an account that does not exist has no location: exit 2, and the account is not made',
    async () => {
      const result = await cli([
        'keys',
        'create',
        '--account',
        'nobody',
        '--mode',
        'test',
        '--locations',
        north.id,
      ])
      expectFailure(result, /No such location/)
      expect(result.code).toBe(2)
      const accounts = await t.db.selectFrom('accounts').select('name').where('name', '=', 'nobody').execute()
      expect(accounts).toEqual([])
    },
    ONE_COMMAND,
  )

  it(
    'an empty item in --locations is a usage error (exit 2) before the database is touched',
    async () => {
      const result = await cli([
        'keys',
        'create',
        '--account',
        'acme',
        '--mode',
        'test',
        '--locations',
        `${north.id},,`,
      ])
      expectFailure(result, /--locations is a comma-separated list/)
      expect(result.code).toBe(2)
    },
    ONE_COMMAND,
  )
})

describe('cli keys create refuses people-only scopes', () => {
  let t: TestApp
  const cli = cliOn(() => t.database.url)

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(async () => {
    await killAll()
    await t?.close()
  })

  it(
    'users:* and keys:* are no key’s: exit 2, and no key is made',
    async () => {
      for (const scopes of ['users:read', 'operators:read,keys:write']) {
        const result = await cli([
          'keys',
          'create',
          '--account',
          'acme',
          '--mode',
          'test',
          '--scopes',
          scopes,
        ])
        expectFailure(result, /only people manage people and keys/)
        expect(result.code).toBe(2)
      }
      expect(await t.db.selectFrom('api_keys').select('id').execute()).toEqual([])
    },
    TWO_COMMANDS,
  )
})
