import type { LookupAddress } from 'node:dns'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { fetch, request } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  checkEndpointUrl,
  createSafeDispatcher,
  findUnsafeUrlError,
  type HostLookup,
  isPrivateAddress,
  MAX_ENDPOINT_URL_LENGTH,
  UnsafeUrlError,
  type UnsafeUrlReason,
} from '../../../src/modules/webhooks/url-policy.js'

const PUBLIC_V4 = '93.184.216.34'
const PUBLIC_V6 = '2606:4700::1111'

// Every address here must be refused, as a bare address and as a URL host.
const PRIVATE_ADDRESSES = [
  // loopback and unspecified
  '127.0.0.1',
  '127.255.255.254',
  '0.0.0.0',
  '0.1.2.3',
  '::1',
  '::',
  // RFC 1918
  '10.0.0.5',
  '10.255.255.255',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '192.168.255.255',
  // link-local, including the cloud metadata address
  '169.254.169.254',
  '169.254.0.1',
  'fe80::1',
  'febf:ffff::1',
  // CGNAT
  '100.64.0.1',
  '100.127.255.255',
  // unique-local
  'fc00::1',
  'fd12:3456:789a::1',
  // multicast, broadcast, reserved
  '224.0.0.1',
  '239.255.255.250',
  '255.255.255.255',
  '240.0.0.1',
  'ff02::1',
  'ff0e::1',
  // benchmarking, documentation, protocol assignments
  '198.18.0.1',
  '198.19.255.255',
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.9',
  '192.0.0.8',
  '2001:db8::1',
  '2001:2::1',
  '3fff::1',
  // IPv4-mapped, in dotted and hex notation, and fully written out
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  '::ffff:10.0.0.5',
  '::ffff:a9fe:a9fe',
  '::ffff:192.168.1.1',
  // IPv4-compatible (deprecated)
  '::127.0.0.1',
  '::7f00:1',
  '::a00:5',
  // NAT64 and 6to4 carrying a private IPv4 address
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.5',
  '64:ff9b::a9fe:a9fe',
  '2002:7f00:1::',
  '2002:c0a8:101::1',
  // other non-global IPv6: IPv4-translated, discard-only, local-use NAT64, Teredo
  '::ffff:0:7f00:1',
  '100::1',
  '64:ff9b:1::a00:5',
  '2001::1',
]

const PUBLIC_ADDRESSES = [
  PUBLIC_V4,
  '8.8.8.8',
  '1.1.1.1',
  // just outside the private ranges, so a too-wide mask would show
  '9.255.255.255',
  '11.0.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '169.253.255.255',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '126.255.255.255',
  '128.0.0.0',
  PUBLIC_V6,
  '2a00:1450:4001:80b::200e',
  '2001:4860:4860::8888',
  '::ffff:93.184.216.34',
  '::ffff:5db8:d822',
  '64:ff9b::5db8:d822',
  '2002:5db8:d822::1',
]

const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip)

/** A resolver that fails the test if it is ever consulted. */
const noDns: HostLookup = async (hostname) => {
  throw new Error(`DNS must not be consulted (asked for ${hostname})`)
}

const answers =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses.map((address): LookupAddress => ({ address, family: net.isIP(address) }))

/** A name other than localhost that /etc/hosts maps to loopback, if the machine has one. */
function loopbackNameFromEtcHosts(): string | undefined {
  let text: string
  try {
    text = readFileSync('/etc/hosts', 'utf8')
  } catch {
    return undefined
  }
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/)
    if (address === undefined || !(address.startsWith('127.') || address === '::1')) continue
    const name = names.find((n) => /^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(n) && !/(^|\.)localhost$/i.test(n))
    if (name !== undefined) return name
  }
  return undefined
}

async function refusal(promise: Promise<unknown>): Promise<UnsafeUrlReason | 'accepted'> {
  try {
    await promise
  } catch (error) {
    if (error instanceof UnsafeUrlError) return error.reason
    throw error
  }
  return 'accepted'
}

describe('isPrivateAddress', () => {
  it.each(PRIVATE_ADDRESSES)('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true)
  })

  it.each(PUBLIC_ADDRESSES)('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false)
  })

  it('ignores an IPv6 zone id', () => {
    expect(isPrivateAddress('fe80::1%eth0')).toBe(true)
  })

  it.each([
    '',
    'localhost',
    'example.com',
    '127.1',
    '2130706433',
    '0x7f.1',
    '1.2.3.4.5',
    '[::1]',
    'not an ip',
  ])('fails closed on %j, which is not an IP address', (input) => {
    expect(isPrivateAddress(input)).toBe(true)
  })
})

describe('checkEndpointUrl', () => {
  const strict = { allowPrivate: false, lookup: noDns }

  it.each(PRIVATE_ADDRESSES)('refuses the IP literal %s without consulting DNS', async (ip) => {
    expect(await refusal(checkEndpointUrl(`https://${urlHost(ip)}/hook`, strict))).toBe('private_address')
  })

  it.each([
    'https://2130706433/',
    'https://0x7f.1/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://017700000001/',
    'https://127.1/',
    'https://[::ffff:127.0.0.1]/',
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://[::127.0.0.1]/',
    'https://0xa9.0xfe.0xa9.0xfe/latest/meta-data/',
    'https://3232235777/',
  ])('recognises the disguised private address in %s', async (raw) => {
    // The WHATWG parser normalises these to dotted decimal / canonical IPv6; the policy relies on that.
    expect(net.isIP(new URL(raw).hostname.replace(/^\[|\]$/g, ''))).not.toBe(0)
    expect(await refusal(checkEndpointUrl(raw, strict))).toBe('private_address')
  })

  it.each([
    'https://localhost/',
    'https://localhost:8443/hook',
    'https://LOCALHOST./',
    'https://api.localhost/',
    'https://a.b.localhost/hook',
  ])('refuses %s by name, whatever DNS says', async (raw) => {
    const lookup = vi.fn(answers(PUBLIC_V4))
    expect(await refusal(checkEndpointUrl(raw, { allowPrivate: false, lookup }))).toBe('private_address')
    expect(lookup).not.toHaveBeenCalled()
  })

  it('refuses http://127.0.0.1/ (scheme) and https://127.0.0.1/ (address)', async () => {
    expect(await refusal(checkEndpointUrl('http://127.0.0.1/', strict))).toBe('scheme_not_allowed')
    expect(await refusal(checkEndpointUrl('https://127.0.0.1/', strict))).toBe('private_address')
  })

  it.each([`https://${PUBLIC_V4}/hook`, `https://[${PUBLIC_V6}]/hook`, 'https://8.8.8.8:8443/x?y=1'])(
    'accepts the public IP literal %s without DNS',
    async (raw) => {
      const url = await checkEndpointUrl(raw, strict)
      expect(url).toBeInstanceOf(URL)
      expect(url.href).toBe(new URL(raw).href)
    },
  )

  it('refuses http:// for a public host when private URLs are not allowed', async () => {
    expect(await refusal(checkEndpointUrl(`http://${PUBLIC_V4}/hook`, strict))).toBe('scheme_not_allowed')
    const lookup = vi.fn(answers(PUBLIC_V4))
    expect(
      await refusal(checkEndpointUrl('http://hooks.example.com/', { allowPrivate: false, lookup })),
    ).toBe('scheme_not_allowed')
  })

  it.each([
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'wss://example.com/',
  ])('refuses the scheme of %s, even when private URLs are allowed', async (raw) => {
    expect(await refusal(checkEndpointUrl(raw, strict))).toBe('scheme_not_allowed')
    expect(await refusal(checkEndpointUrl(raw, { allowPrivate: true, lookup: noDns }))).toBe(
      'scheme_not_allowed',
    )
  })

  it.each([
    '',
    'not a url',
    '/relative/path',
    'example.com/hook',
    'https://',
    'https://exa mple.com/',
    'https://999.1.1.1/',
  ])('refuses %j as not a valid absolute URL', async (raw) => {
    expect(await refusal(checkEndpointUrl(raw, strict))).toBe('invalid_url')
  })

  it.each(['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/'])(
    'refuses credentials in %s, even when private URLs are allowed',
    async (raw) => {
      const lookup = vi.fn(answers(PUBLIC_V4))
      expect(await refusal(checkEndpointUrl(raw, { allowPrivate: false, lookup }))).toBe('credentials_in_url')
      expect(await refusal(checkEndpointUrl(raw, { allowPrivate: true, lookup }))).toBe('credentials_in_url')
    },
  )

  it('accepts a URL of exactly 2048 characters and refuses one of 2049', async () => {
    const base = 'https://hooks.example.com/'
    const exact = base + 'a'.repeat(MAX_ENDPOINT_URL_LENGTH - base.length)
    expect(exact).toHaveLength(2048)
    const lookup = answers(PUBLIC_V4)
    await expect(checkEndpointUrl(exact, { allowPrivate: false, lookup })).resolves.toBeInstanceOf(URL)
    expect(await refusal(checkEndpointUrl(`${exact}b`, { allowPrivate: false, lookup }))).toBe('url_too_long')
  })

  it('accepts a host name whose every address is public, looking it up without the root dot', async () => {
    const lookup = vi.fn(answers(PUBLIC_V4, PUBLIC_V6))
    const url = await checkEndpointUrl('https://Hooks.Example.com./stripe?x=1', {
      allowPrivate: false,
      lookup,
    })
    expect(url.hostname).toBe('hooks.example.com.')
    expect(lookup).toHaveBeenCalledExactlyOnceWith('hooks.example.com')
  })

  it.each([
    ['a private IPv4 address', ['10.0.0.5']],
    ['a private address beside a public one', [PUBLIC_V4, '10.0.0.5']],
    ['loopback', ['127.0.0.1']],
    ['the metadata address', ['169.254.169.254']],
    ['a unique-local IPv6 address', [PUBLIC_V6, 'fd00::1']],
    ['an IPv4-mapped loopback', ['::ffff:127.0.0.1']],
  ])('refuses a host name that resolves to %s', async (_name, addresses) => {
    const lookup = answers(...addresses)
    const refused = checkEndpointUrl('https://hooks.example.com/hook', { allowPrivate: false, lookup })
    await expect(refused).rejects.toThrow(UnsafeUrlError)
    await expect(refused).rejects.toMatchObject({ reason: 'private_address', message: /hooks\.example\.com/ })
  })

  it('refuses a host name that does not resolve, or resolves to nothing', async () => {
    const notFound: HostLookup = async (hostname) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
    expect(
      await refusal(checkEndpointUrl('https://nope.example.com/', { allowPrivate: false, lookup: notFound })),
    ).toBe('unresolvable_host')
    expect(
      await refusal(
        checkEndpointUrl('https://nope.example.com/', { allowPrivate: false, lookup: answers() }),
      ),
    ).toBe('unresolvable_host')
  })

  // A name from /etc/hosts (not localhost, which is refused by name) exercises the default resolver without
  // any outside DNS; getaddrinfo answers it from the file.
  const hostsEntry = loopbackNameFromEtcHosts()
  it.skipIf(hostsEntry === undefined)(
    `uses the system resolver by default: "${hostsEntry}" from /etc/hosts is refused`,
    async () => {
      const name = hostsEntry ?? ''
      expect(await refusal(checkEndpointUrl(`https://${name}/hook`, { allowPrivate: false }))).toBe(
        'private_address',
      )
    },
  )

  it('with allowPrivate, accepts http:// to loopback and private hosts, without DNS', async () => {
    const allow = { allowPrivate: true, lookup: noDns }
    const url = await checkEndpointUrl('http://127.0.0.1:1234/hook', allow)
    expect(url.href).toBe('http://127.0.0.1:1234/hook')
    await expect(checkEndpointUrl('http://localhost:3000/hook', allow)).resolves.toBeInstanceOf(URL)
    await expect(checkEndpointUrl('https://10.0.0.5/hook', allow)).resolves.toBeInstanceOf(URL)
    await expect(checkEndpointUrl('http://[::1]:8080/', allow)).resolves.toBeInstanceOf(URL)
    await expect(checkEndpointUrl('http://receiver.internal/', allow)).resolves.toBeInstanceOf(URL)
  })

  it('gives a human message and a stable code', async () => {
    const error = await checkEndpointUrl('https://10.0.0.5/', strict).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UnsafeUrlError)
    expect(error).toMatchObject({ code: 'ERR_UNSAFE_WEBHOOK_URL', reason: 'private_address' })
    expect((error as Error).message).toMatch(/10\.0\.0\.5.*private/)
  })
})

describe('createSafeDispatcher', () => {
  let server: Server
  let port: number
  let connections = 0
  let requests: Array<{ url: string | undefined; host: string | undefined }> = []
  const dispatchers: Array<ReturnType<typeof createSafeDispatcher>> = []

  const dispatcher = (options: Parameters<typeof createSafeDispatcher>[0]) => {
    const created = createSafeDispatcher(options)
    dispatchers.push(created)
    return created
  }

  // Every lookup in this block answers loopback only, so even a broken guard sends nothing off the machine.
  const toLoopback = () => vi.fn(answers('127.0.0.1'))

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push({ url: req.url, host: req.headers.host })
      if (req.url === '/slow') return // never answers: exercises the headers timeout
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
    server.on('connection', () => {
      connections++
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  beforeEach(() => {
    connections = 0
    requests = []
  })

  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.destroy()))
  })

  async function refusedAtConnect(promise: Promise<unknown>): Promise<UnsafeUrlError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    )
    const refusalError = findUnsafeUrlError(error)
    if (refusalError === undefined)
      throw new Error(`expected a private-address refusal, got ${String(error)}`)
    expect(refusalError.reason).toBe('private_address')
    expect(refusalError.code).toBe('ERR_UNSAFE_WEBHOOK_URL')
    expect(connections).toBe(0)
    expect(requests).toEqual([])
    return refusalError
  }

  it('refuses an IP-literal loopback URL before connecting (undici.request)', async () => {
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: noDns })
    const error = await refusedAtConnect(
      request(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', dispatcher: d }),
    )
    expect(error.message).toContain('127.0.0.1')
  })

  it('refuses an IP-literal loopback URL before connecting (fetch wraps the refusal as its cause)', async () => {
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: noDns })
    const promise = fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      body: '{}',
      dispatcher: d,
      redirect: 'manual',
    })
    await expect(promise).rejects.toThrow(TypeError)
    await refusedAtConnect(promise)
  })

  it.each([
    'http://[::1]:PORT/',
    'http://0x7f.1:PORT/',
    'http://2130706433:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
  ])('refuses the loopback literal %s', async (template) => {
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: noDns })
    await refusedAtConnect(request(template.replace('PORT', String(port)), { dispatcher: d }))
  })

  it('refuses a host name whose lookup answers 127.0.0.1, at connect time', async () => {
    const lookup = toLoopback()
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup })
    const error = await refusedAtConnect(request(`http://hooks.example.test:${port}/`, { dispatcher: d }))
    expect(lookup).toHaveBeenCalledWith('hooks.example.test')
    expect(error.message).toMatch(/hooks\.example\.test.*127\.0\.0\.1/)
  })

  it('refuses a rebinding name: public when the URL was checked, loopback when delivering', async () => {
    let calls = 0
    const rebinding: HostLookup = async () => {
      calls++
      // Only the URL check (first call) sees the public address; the dispatcher, which would connect, sees
      // loopback, so no traffic can leave the machine even if the guard were missing.
      return calls === 1 ? [{ address: PUBLIC_V4, family: 4 }] : [{ address: '127.0.0.1', family: 4 }]
    }
    await expect(
      checkEndpointUrl('https://rebind.example.test/hook', { allowPrivate: false, lookup: rebinding }),
    ).resolves.toBeInstanceOf(URL)
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: rebinding })
    await refusedAtConnect(
      fetch(`http://rebind.example.test:${port}/hook`, { method: 'POST', dispatcher: d }),
    )
    expect(calls).toBe(2)
  })

  it('refuses when any address of the answer is private', async () => {
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: answers('127.0.0.1', '::1') })
    await refusedAtConnect(request(`http://two.example.test:${port}/`, { dispatcher: d }))
  })

  it('refuses with the single-address lookup too (autoSelectFamily off)', async () => {
    const before = net.getDefaultAutoSelectFamily()
    net.setDefaultAutoSelectFamily(false)
    try {
      const d = dispatcher({ allowPrivate: false, timeoutMs: 2000, lookup: toLoopback() })
      await refusedAtConnect(request(`http://hooks.example.test:${port}/`, { dispatcher: d }))

      const open = dispatcher({ allowPrivate: true, timeoutMs: 2000, lookup: toLoopback() })
      const res = await request(`http://hooks.example.test:${port}/`, { dispatcher: open })
      expect(res.statusCode).toBe(200)
      await res.body.text()
      expect(requests).toHaveLength(1)
    } finally {
      net.setDefaultAutoSelectFamily(before)
    }
  })

  it('refuses localhost through the system resolver by default', async () => {
    const d = dispatcher({ allowPrivate: false, timeoutMs: 2000 })
    await refusedAtConnect(request(`http://localhost:${port}/`, { dispatcher: d }))
  })

  it('with allowPrivate, reaches the loopback server by IP literal and by name', async () => {
    const lookup = toLoopback()
    const d = dispatcher({ allowPrivate: true, timeoutMs: 2000, lookup })

    const byIp = await request(`http://127.0.0.1:${port}/by-ip`, {
      method: 'POST',
      body: '{}',
      dispatcher: d,
    })
    expect(byIp.statusCode).toBe(200)
    expect(await byIp.body.text()).toBe('ok')

    const byName = await fetch(`http://receiver.test:${port}/by-name`, {
      method: 'POST',
      body: '{}',
      dispatcher: d,
    })
    expect(byName.status).toBe(200)
    expect(await byName.text()).toBe('ok')

    expect(lookup).toHaveBeenCalledWith('receiver.test')
    expect(requests).toEqual([
      { url: '/by-ip', host: `127.0.0.1:${port}` },
      { url: '/by-name', host: `receiver.test:${port}` },
    ])
  })

  it('fails the lookup cleanly when the answer is empty', async () => {
    const d = dispatcher({ allowPrivate: true, timeoutMs: 2000, lookup: answers() })
    await expect(request(`http://empty.example.test:${port}/`, { dispatcher: d })).rejects.toMatchObject({
      code: 'ENOTFOUND',
    })
    expect(connections).toBe(0)
  })

  it('applies timeoutMs to waiting for the response headers', async () => {
    const d = dispatcher({ allowPrivate: true, timeoutMs: 200, lookup: noDns })
    // /slow never answers: without the 200 ms, undici's own headers timeout (300 s) would hold the
    // request past the test's timeout instead of failing it with this code.
    await expect(request(`http://127.0.0.1:${port}/slow`, { dispatcher: d })).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    })
    expect(requests).toEqual([{ url: '/slow', host: `127.0.0.1:${port}` }])
  })
})
