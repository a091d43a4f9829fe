import net from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import { buildTestApp, type TestApp } from './app.js'

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n'

/**
 * The test app on a loopback port for the tests of the enclosing `describe` (listening before them,
 * closed after them): raw bytes need a socket, which `inject` does not have.
 */
export function useListeningApp(): { readonly t: TestApp; readonly port: number } {
  let t: TestApp | undefined
  let port: number | undefined
  beforeAll(async () => {
    t = await buildTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as net.AddressInfo).port
  })
  afterAll(() => t?.close())
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the app starts in beforeAll: use it inside a test')
    return value
  }
  return {
    get t() {
      return started(t)
    },
    get port() {
      return started(port)
    },
  }
}

/**
 * Sends raw bytes and reads the whole answer, up to the server closing the connection (send
 * `Connection: close` where the server would keep it open). With `bodyAfterContinue` the bytes are
 * the head alone, and the body follows only once the server says `100 Continue`, as curl does.
 * Rejects when the connection breaks (a reset, a broken pipe) or nothing ends it within 20 s.
 */
export function rawRequest(
  port: number,
  bytes: string,
  { bodyAfterContinue }: { bodyAfterContinue?: Buffer } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes))
    const chunks: Buffer[] = []
    let bodySent = false
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      if (bodyAfterContinue && !bodySent && Buffer.concat(chunks).toString('latin1').startsWith(CONTINUE)) {
        bodySent = true
        socket.write(bodyAfterContinue)
      }
    })
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    socket.on('error', reject)
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer within 20 s')))
  })
}

export interface RawAnswer {
  /** The statuses of the interim (1xx) answers that came first, e.g. `[100]`. */
  interim: number[]
  status: number
  headers: Record<string, string>
  body: { error: Record<string, unknown> } & Record<string, unknown>
}

/** Splits a raw answer into its interim statuses, the final status, its headers and JSON body. */
export function parseAnswer(raw: string): RawAnswer {
  const interim: number[] = []
  let rest = raw
  while (/^HTTP\/1\.1 1\d\d /.test(rest)) {
    interim.push(Number(rest.slice(9, 12)))
    rest = rest.slice(rest.indexOf('\r\n\r\n') + 4)
  }
  const at = rest.indexOf('\r\n\r\n')
  const [statusLine = '', ...headerLines] = rest.slice(0, at).split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':')
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
    }),
  )
  return { interim, status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.slice(at + 4)) }
}
