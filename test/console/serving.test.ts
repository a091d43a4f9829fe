import fs from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../src/http/console.js'
import type { TestApp } from '../helpers/app.js'
import { buildConsoleTestApp, CONSOLE_BUILD } from '../helpers/console.js'

const BUNDLE_LIMIT_BYTES = 200 * 1024
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

describe('the console is served at /console', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildConsoleTestApp()
  })
  afterAll(() => t.close())

  const anonymous = () => t.client(undefined)

  it('answers index.html without a key, never cached without revalidation, under a strict CSP', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await anonymous().get(url)
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['cache-control']).toBe('no-cache')
      expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['set-cookie']).toBeUndefined()
      expect(res.raw.body).toContain('<div id="app"></div>')
    }
    expect(CONSOLE_CSP).toBe(EXPECTED_CSP)
  })

  it('answers index.html for every page path (the app routes in the browser)', async () => {
    for (const url of ['/console/sessions', '/console/sessions/ses_123', '/console/no/such/page?x=1']) {
      const res = await anonymous().get(url)
      expect(res.status, url).toBe(200)
      expect(res.headers['cache-control']).toBe('no-cache')
      expect(res.raw.body).toContain('<div id="app"></div>')
    }
  })

  it('serves the hashed assets index.html names for a year, immutable; nothing from elsewhere', async () => {
    const index = (await anonymous().get('/console')).raw.body
    const urls = [...index.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
    expect(urls.filter((url) => url !== 'data:,').every((url) => url.startsWith('/console/assets/'))).toBe(
      true,
    )
    const assets = urls.filter((url) => url.startsWith('/console/assets/'))
    expect(assets.some((url) => url.endsWith('.js'))).toBe(true)
    expect(assets.some((url) => url.endsWith('.css'))).toBe(true)
    for (const url of assets) {
      expect(url).toMatch(/-[A-Za-z0-9_-]{8}\.(js|css)$/)
      const res = await anonymous().get(url)
      expect(res.status, url).toBe(200)
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(res.headers['content-type']).toMatch(/^(text\/javascript|text\/css); charset=utf-8$/)
      expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP)
    }
  })

  it('answers an unknown asset with the 404 error envelope, not index.html', async () => {
    const res = await anonymous().get<{ error: { code: string } }>('/console/assets/missing-00000000.js')
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('resource_missing')
  })

  it(`keeps the bundle under ${BUNDLE_LIMIT_BYTES / 1024} KB gzipped`, () => {
    const assets = path.join(CONSOLE_BUILD, 'assets')
    const gzipped = fs
      .readdirSync(assets)
      .reduce(
        (total, name) => total + gzipSync(fs.readFileSync(path.join(assets, name)), { level: 9 }).length,
        0,
      )
    console.info(`console bundle: ${(gzipped / 1024).toFixed(1)} KB gzipped`)
    expect(gzipped).toBeGreaterThan(0)
    expect(gzipped).toBeLessThan(BUNDLE_LIMIT_BYTES)
  })
})
