import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, uniq } from '../../helpers/assertions.js'
import { freshAccount, pairedDevice } from '../../helpers/fixtures.js'

describe('GET /v1/account: the calling key’s account', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('answers the key’s own account by name, in the key’s mode, and never another account', async () => {
    const acme = await freshAccount(t, 'test', uniq('acme'))
    const other = await freshAccount(t, 'live', uniq('globex'))
    const test = await acme.api.get('/v1/account')
    expect(test.status).toBe(200)
    expect(test.body).toEqual({
      object: 'account',
      id: acme.key.account_id,
      name: acme.name,
      livemode: false,
    })
    const live = await t.key({ account: acme.name, mode: 'live' })
    expect((await t.client(live.secret).get('/v1/account')).body).toEqual({
      object: 'account',
      id: acme.key.account_id,
      name: acme.name,
      livemode: true,
    })
    expect((await other.api.get('/v1/account')).body).toEqual({
      object: 'account',
      id: other.key.account_id,
      name: other.name,
      livemode: true,
    })
  })

  it('needs no scope: a key with the fewest, and a paired device’s key, read it too', async () => {
    const acme = await freshAccount(t)
    const narrow = await t.key({ account: acme.name, scopes: ['events:read'] })
    expect((await t.client(narrow.secret).get('/v1/account')).body).toMatchObject({ name: acme.name })
    const device = await pairedDevice(t, acme.api)
    expect((await device.api.get('/v1/account')).body).toMatchObject({ name: acme.name, livemode: false })
  })

  it('refuses a request without a valid key with the error envelope', async () => {
    expectError(await t.client(undefined).get('/v1/account'), 401, 'authentication_error')
    expectError(await t.client(`sk_test_${'x'.repeat(24)}`).get('/v1/account'), 401, 'authentication_error')
    const expired = await t.key({ account: uniq('acme'), expiresAt: new Date(Date.now() - 1000) })
    expectError(await t.client(expired.secret).get('/v1/account'), 401, 'authentication_error')
  })
})
