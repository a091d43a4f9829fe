import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../src/http/console.js'
import type { TestApp } from '../helpers/app.js'
import { buildConsoleTestApp } from '../helpers/console.js'

describe('the kiosk page is served at /kiosk', () => {
  let t: TestApp
  // It may wait for another suite's build of the console (helpers/console.ts builds under a lock).
  beforeAll(async () => {
    t = await buildConsoleTestApp()
  }, 90_000)
  afterAll(() => t.close())

  const anonymous = () => t.client(undefined)

  it('answers its page without a key at /kiosk and /kiosk/, revalidated, under the console CSP', async () => {
    for (const url of ['/kiosk', '/kiosk/']) {
      const res = await anonymous().get(url)
      expect(res.status, url).toBe(200)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['cache-control']).toBe('no-cache')
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP)
      expect(res.raw.body).toContain('<title>Time clock</title>')
    }
  })

  it('names only its own files, all of them served; none of the console pages', async () => {
    const page = (await anonymous().get('/kiosk')).raw.body
    const urls = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
    const files = urls.filter((url) => url !== 'data:,')
    expect(files.every((url) => url.startsWith('/console/assets/'))).toBe(true)
    expect(files.some((url) => /\/kiosk-[A-Za-z0-9_-]{8}\.js$/.test(url))).toBe(true)
    expect(files.some((url) => /\/console-[A-Za-z0-9_-]{8}\.js$/.test(url))).toBe(false)
    for (const url of files) expect((await anonymous().get(url)).status, url).toBe(200)
  })

  it('serves its service worker from inside the scope it may control, /kiosk, never cached stale', async () => {
    const res = await anonymous().get('/kiosk/sw.js')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.headers['service-worker-allowed']).toBe('/kiosk')
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP)
    expect(res.raw.body).toContain('kiosk-shell')
  })
})
