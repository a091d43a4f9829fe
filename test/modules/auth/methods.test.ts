import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'

interface AuthMethods {
  object: 'auth_methods'
  password: true
  sso: boolean
}

/** GET /v1/auth/methods: what the console's sign-in page offers, asked before anyone signs in. */
describe('GET /v1/auth/methods', () => {
  let plain: TestApp
  let withSso: TestApp
  beforeAll(async () => {
    plain = await buildTestApp()
    // Discovery waits for the first sign-in with SSO: an issuer nobody answers at is enough here.
    withSso = await buildTestApp({
      oidc: { issuer: 'http://127.0.0.1:9/oidc', clientId: 'console', clientSecret: 'not-a-secret' },
    })
  })
  afterAll(async () => {
    await plain?.close()
    await withSso?.close()
  })

  it('says e-mail and password only, without a key or a cookie, when SSO is not set up', async () => {
    const res = await plain.client(undefined).get<AuthMethods>('/v1/auth/methods')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ object: 'auth_methods', password: true, sso: false })
    // And SSO's start is not there.
    expect((await plain.client(undefined).get('/v1/auth/sso/start')).status).toBe(404)
  })

  it('offers SSO once OIDC_* are set', async () => {
    const res = await withSso.client(undefined).get<AuthMethods>('/v1/auth/methods')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ object: 'auth_methods', password: true, sso: true })
  })

  it('answers a key alike: the page asks before anyone is anybody', async () => {
    const key = await plain.key({ mode: 'test' })
    const res = await plain.client(key.secret).get<AuthMethods>('/v1/auth/methods')
    expect(res.body.sso).toBe(false)
  })
})
