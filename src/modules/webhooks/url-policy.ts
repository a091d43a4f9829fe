import type { LookupAddress, LookupOptions } from 'node:dns'
import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector } from 'undici'

/**
 * Resolves a host name to every address it has. Injectable so tests can make a name resolve to a
 * private address, or change its answer between the URL check and the connection (DNS rebinding),
 * without a DNS server.
 */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>

export const defaultHostLookup: HostLookup = (hostname) => dns.promises.lookup(hostname, { all: true })

export const MAX_ENDPOINT_URL_LENGTH = 2048

export type UnsafeUrlReason =
  | 'invalid_url'
  | 'url_too_long'
  | 'scheme_not_allowed'
  | 'credentials_in_url'
  | 'private_address'
  | 'unresolvable_host'

/**
 * Raised when an endpoint URL breaks the policy at create/update time, and by the safe dispatcher when a
 * connection would reach a private address. The stable `code` lets the delivery worker recognise the
 * refusal behind whatever wrapper the HTTP client puts around it (see `findUnsafeUrlError`).
 */
export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError'
  readonly code = 'ERR_UNSAFE_WEBHOOK_URL'
  readonly reason: UnsafeUrlReason

  constructor(reason: UnsafeUrlReason, message: string) {
    super(message)
    this.reason = reason
  }
}

/** The refusal behind an error, if any: `fetch` wraps connection errors as `TypeError('fetch failed', { cause })`. */
export function findUnsafeUrlError(error: unknown): UnsafeUrlError | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof UnsafeUrlError) return current
    current = current.cause
  }
  return undefined
}

// IPv4 ranges that are not globally reachable unicast: IANA's special-purpose registry plus multicast and
// the reserved 240/4 (which holds the limited broadcast 255.255.255.255).
const BLOCKED_IPV4 = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata (169.254.169.254)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation TEST-NET-1
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation TEST-NET-2
  '203.0.113.0/24', // documentation TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr))

// Special-purpose blocks inside 2000::/3; everything outside 2000::/3 is refused wholesale (see below).
const BLOCKED_GLOBAL_IPV6 = [
  '2001::/23', // IETF protocol assignments: Teredo, benchmarking 2001:2::/48, ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation (RFC 9637)
  '5f00::/16', // SRv6 SIDs
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr))

const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3')
// IPv6 forms that carry an IPv4 address a connection would reach (see `embeddedIpv4`).
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96')
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96')
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16')

/**
 * True when connecting to `ip` could reach something that is not a public internet host: loopback,
 * private, link-local, CGNAT, unique-local, multicast, reserved, documentation or benchmarking space, or
 * an IPv6 form that carries one of those IPv4 addresses. Anything that is not an IP address at all is
 * also reported private: callers use this as "may I connect?", and the only safe answer for input we
 * cannot classify is no.
 */
export function isPrivateAddress(ip: string): boolean {
  // A zone id (fe80::1%eth0) only ever accompanies link-local scope; drop it so the address parses.
  const address = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip
  // net.isIP is the gate, not ipaddr.js: ipaddr.js also parses forms no socket API takes (127.1, 0x7f.1),
  // and what a socket would not take is not an address to classify.
  const version = net.isIP(address)
  if (version === 4) return isBlockedIpv4(ipaddr.IPv4.parse(address))
  if (version !== 6) return true

  const ipv6 = ipaddr.IPv6.parse(address)
  const embedded = embeddedIpv4(ipv6)
  if (embedded !== undefined) return isBlockedIpv4(embedded)
  // Allow-list rather than deny-list: all IPv6 unicast ever delegated to registries is in 2000::/3, and
  // outside it lie only loopback, unspecified, link-local, unique-local, multicast, discard-only and
  // deprecated or translation prefixes. Refusing the rest keeps future special ranges out by default.
  if (!ipv6.match(GLOBAL_UNICAST_IPV6)) return true
  return BLOCKED_GLOBAL_IPV6.some((range) => ipv6.match(range))
}

function isBlockedIpv4(ipv4: ipaddr.IPv4): boolean {
  return BLOCKED_IPV4.some((range) => ipv4.match(range))
}

/**
 * The IPv4 address an IPv6 address stands for, where the IPv6 form is a way of reaching that IPv4 host:
 * IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16, since a NAT64 or 6to4 gateway would
 * carry a connection to 64:ff9b::a00:5 on to 10.0.0.5.
 */
function embeddedIpv4(ipv6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address()
  const bytes = ipv6.toByteArray()
  // IPv4-compatible ::a.b.c.d is deprecated (RFC 4291) and unroutable; mapping it to its IPv4 address makes
  // ::7f00:1 count as loopback and ::1 / :: (0.0.0.1 / 0.0.0.0) as "this network", all refused.
  if (ipv6.match(IPV4_COMPATIBLE) || ipv6.match(NAT64)) return new ipaddr.IPv4(bytes.slice(12, 16))
  if (ipv6.match(SIX_TO_FOUR)) return new ipaddr.IPv4(bytes.slice(2, 6))
  return undefined
}

export interface CheckEndpointUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: permits http:// and private/loopback targets (local development, tests). */
  allowPrivate: boolean
  lookup?: HostLookup
}

/**
 * Validates a webhook endpoint URL when an endpoint is created or its URL changed, and returns the parsed
 * URL (store `href`, the normalised form). This check alone does not stop SSRF: DNS may answer differently
 * at delivery time, which is why deliveries go through `createSafeDispatcher`.
 */
export async function checkEndpointUrl(raw: string, options: CheckEndpointUrlOptions): Promise<URL> {
  if (raw.length > MAX_ENDPOINT_URL_LENGTH) {
    throw new UnsafeUrlError('url_too_long', `URL must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`)
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UnsafeUrlError(
      'invalid_url',
      'URL must be a valid absolute URL, such as https://example.com/webhooks',
    )
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowPrivate)) {
    throw new UnsafeUrlError(
      'scheme_not_allowed',
      options.allowPrivate ? 'URL must use https:// or http://' : 'URL must use https://',
    )
  }
  if (url.username !== '' || url.password !== '') {
    // Credentials in the URL would be stored and shown in plain text with the endpoint; a receiver should
    // authenticate deliveries by their signature instead.
    throw new UnsafeUrlError('credentials_in_url', 'URL must not contain a user name or password')
  }
  if (options.allowPrivate) {
    // Nothing left to enforce: DNS is only consulted to keep private addresses out, and a development set-up
    // may register a receiver whose name does not resolve yet (a container not started).
    return url
  }

  const host = hostOf(url)
  // The WHATWG parser has already turned decimal, octal, hex and shortened IPv4 forms (2130706433, 0x7f.1,
  // 0177.0.0.1, 127.1) into dotted decimal, and IPv6 into its canonical form, so one isIP test covers them.
  if (net.isIP(host) !== 0) {
    if (isPrivateAddress(host)) throw privateAddressError(url.hostname, host)
    return url
  }
  if (isLocalhostName(host)) throw privateAddressError(url.hostname, '127.0.0.1')

  const lookup = options.lookup ?? defaultHostLookup
  let addresses: LookupAddress[]
  try {
    addresses = await lookup(host)
  } catch {
    addresses = []
  }
  if (addresses.length === 0) {
    throw new UnsafeUrlError('unresolvable_host', `Host "${url.hostname}" does not resolve to any address`)
  }
  // Any private answer refuses the URL, even beside public ones: the client may pick either.
  const privateOne = addresses.find((a) => isPrivateAddress(a.address))
  if (privateOne) throw privateAddressError(url.hostname, privateOne.address)
  return url
}

export interface SafeDispatcherOptions {
  allowPrivate: boolean
  /** WEBHOOK_TIMEOUT_MS: bounds connecting, waiting for response headers, and each gap in the body. */
  timeoutMs: number
  lookup?: HostLookup
}

/**
 * An undici Agent for webhook deliveries that re-checks the destination when it connects, so a name that
 * passed `checkEndpointUrl` and later resolves to a private address (DNS rebinding, or an edited DNS
 * record) is still refused. Refusals fail the request with an `UnsafeUrlError` (reason
 * `private_address`, code `ERR_UNSAFE_WEBHOOK_URL`), wrapped by `fetch` as the `cause`.
 *
 * Redirects are the caller's business: undici's `request` never follows them, and `fetch` must be called
 * with `redirect: 'manual'` (docs/webhooks.md: a 3xx is a failure). A followed redirect would still pass
 * through this connector, so it could not reach a private address either.
 */
export function createSafeDispatcher(options: SafeDispatcherOptions): Agent {
  const { allowPrivate, timeoutMs } = options
  const baseConnect = buildConnector({
    timeout: timeoutMs,
    lookup: connectLookup(options.lookup ?? defaultHostLookup, allowPrivate),
  })

  const connect: buildConnector.connector = (connectOptions, callback) => {
    if (allowPrivate) {
      baseConnect(connectOptions, callback)
      return
    }
    // Node's net.connect does not call `lookup` when the host is already an IP address, so an IP-literal
    // URL (http://127.0.0.1/, http://[::1]/) would bypass the lookup guard; check the literal here, before
    // any socket is opened. undici hands over the hostname without IPv6 brackets.
    const host = connectOptions.hostname
    if (net.isIP(host) !== 0 && isPrivateAddress(host)) {
      callback(privateAddressError(host, host), null)
      return
    }
    baseConnect(connectOptions, (error, socket) => {
      if (error !== null) {
        callback(error, null)
        return
      }
      // Belt and braces for any path that reaches a socket without our lookup (a future Node or undici
      // change): check the address actually connected to before a single request byte is written.
      const remote = socket.remoteAddress
      if (remote === undefined || isPrivateAddress(remote)) {
        socket.destroy()
        callback(privateAddressError(host, remote ?? 'unknown'), null)
        return
      }
      callback(null, socket)
    })
  }

  return new Agent({
    connect,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  })
}

/**
 * Adapts a `HostLookup` to the callback `lookup` that net.connect calls. net asks for `all: true` when
 * it races address families (autoSelectFamily, on by default since Node 20) and for a single address
 * otherwise; both are served. The whole answer is refused when any address in it is private, as in
 * `checkEndpointUrl`.
 */
function connectLookup(resolve: HostLookup, allowPrivate: boolean): LookupFunction {
  return (hostname: string, lookupOptions: LookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (!allowPrivate) {
          const privateOne = addresses.find((a) => isPrivateAddress(a.address))
          if (privateOne) {
            callback(privateAddressError(hostname, privateOne.address), '')
            return
          }
        }
        const family = familyNumber(lookupOptions.family)
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family)
        const first = usable[0]
        if (first === undefined) {
          const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
          error.code = 'ENOTFOUND'
          error.syscall = 'getaddrinfo'
          callback(error, '')
          return
        }
        if (lookupOptions.all) callback(null, usable)
        else callback(null, first.address, first.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    )
  }
}

function familyNumber(family: LookupOptions['family']): number {
  if (family === 4 || family === 'IPv4') return 4
  if (family === 6 || family === 'IPv6') return 6
  return 0
}

/** URL.hostname keeps IPv6 brackets and a trailing root dot; neither is part of the address or name. */
function hostOf(url: URL): string {
  const hostname = url.hostname
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1)
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
}

/** RFC 6761: `localhost` and every name under it is loopback, whatever DNS or /etc/hosts say. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase()
  return name === 'localhost' || name.endsWith('.localhost')
}

function privateAddressError(host: string, address: string): UnsafeUrlError {
  const subject = host === address ? `Address ${address}` : `Host "${host}" resolves to ${address}, which`
  return new UnsafeUrlError(
    'private_address',
    `${subject} is a private, loopback, link-local or reserved address; webhooks go to public addresses only`,
  )
}
