import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { builtScript, killAll, run } from '../helpers/process.js'

/** The pairing route's own limit, per client address (modules/devices/routes.ts). */
const PAIRINGS_PER_MINUTE = 10

/**
 * Behind the reverse proxy docs/kiosk.md requires, every tablet's request reaches the service from
 * the proxy's address. Over real sockets from 127.0.0.1 (the proxy, or a client that reaches the
 * service directly), `X-Forwarded-For` is believed only when that peer is in TRUST_PROXY.
 */
interface ListeningApp {
  t: TestApp
  /** POST /v1/device-pairings with a code that pairs nothing, with `X-Forwarded-For` if given. */
  pair(forwardedFor?: string): Promise<number>
  /** The `req.remoteAddress` of each request's "incoming request" log line, in order. */
  loggedAddresses(): string[]
}

async function listeningApp(trustProxy: string | undefined): Promise<ListeningApp> {
  const lines: string[] = []
  const t = await buildTestApp(
    { trustProxy: loadConfig({ TRUST_PROXY: trustProxy }).trustProxy, logLevel: 'info' },
    { logStream: { write: (line) => lines.push(line) } },
  )
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = t.app.server.address() as AddressInfo
  return {
    t,
    pair: async (forwardedFor) => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/device-pairings`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
        },
        body: JSON.stringify({ code: 'ZZZZ-ZZZZ' }),
      })
      await res.body?.cancel()
      return res.status
    },
    loggedAddresses: () =>
      lines
        .map((line) => JSON.parse(line) as { msg?: string; req?: { remoteAddress?: string } })
        .filter((entry) => entry.msg === 'incoming request')
        .map((entry) => String(entry.req?.remoteAddress)),
  }
}

describe('TRUST_PROXY set to the proxy: each tablet behind it has its own address', () => {
  let proxy: ListeningApp

  beforeAll(async () => {
    proxy = await listeningApp('127.0.0.1')
  })
  afterAll(() => proxy?.t.close())

  it('gives 12 tablets behind one proxy a pairing bucket each, and still limits each one', async () => {
    const tablets = Array.from({ length: 12 }, (_, i) => `203.0.113.${i + 1}`)
    // One attempt each: a code that pairs nothing is 422; a shared bucket would refuse the 11th.
    const statuses = []
    for (const tablet of tablets) statuses.push(await proxy.pair(tablet))
    expect(statuses).toEqual(tablets.map(() => 422))
    expect(proxy.loggedAddresses()).toEqual(tablets)

    // The first tablet's own bucket: 9 more fill it, the next is refused; the second's is untouched.
    const [first = '', second = ''] = tablets
    for (let i = 1; i < PAIRINGS_PER_MINUTE; i++) expect(await proxy.pair(first)).toBe(422)
    expect(await proxy.pair(first)).toBe(429)
    expect(await proxy.pair(second)).toBe(422)
  })

  it('counts a tablet by the address the proxy saw, whatever the tablet wrote before it', async () => {
    // A proxy that appends (nginx's $proxy_add_x_forwarded_for) keeps what the client sent, on the left.
    const tablet = '203.0.113.200'
    const statuses = []
    for (let i = 0; i <= PAIRINGS_PER_MINUTE; i++)
      statuses.push(await proxy.pair(`198.51.100.${i}, ${tablet}`))
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.slice(0, -1)).toEqual(Array(PAIRINGS_PER_MINUTE).fill(422))
    expect(proxy.loggedAddresses().at(-1)).toBe(tablet)
  })
})

describe.each([
  ['unset', undefined],
  ['a proxy other than the peer', '192.0.2.10'],
])('TRUST_PROXY %s: a forged X-Forwarded-For changes nothing', (_name, trustProxy) => {
  let direct: ListeningApp

  beforeAll(async () => {
    direct = await listeningApp(trustProxy)
  })
  afterAll(() => direct?.t.close())

  it("limits the peer's own address, whatever address each request claims", async () => {
    const statuses = []
    for (let i = 0; i <= PAIRINGS_PER_MINUTE; i++) statuses.push(await direct.pair(`203.0.113.${i + 1}`))
    expect(statuses.slice(0, -1)).toEqual(Array(PAIRINGS_PER_MINUTE).fill(422))
    expect(statuses.at(-1)).toBe(429)
    expect(new Set(direct.loggedAddresses())).toEqual(new Set(['127.0.0.1']))
  })
})

describe('a bad TRUST_PROXY', () => {
  afterAll(killAll)

  it.each(['true', '2', '10.0.0.0/0'])(
    'TRUST_PROXY=%s stops the start with one line naming it',
    async (value) => {
      const result = await run(process.execPath, [builtScript('server')], {
        env: { TRUST_PROXY: value, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'sqlite::memory:' },
      })
      expect(result.code).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toBe(
        `TRUST_PROXY must be the proxies' IP addresses or CIDR ranges, comma-separated, not true or a hop count (got "${value}")\n`,
      )
    },
  )
})
