import net from 'node:net'
import { afterAll, beforeAll, expect } from 'vitest'
import { BODY_LIMIT_BYTES } from '../../src/http/error-handler.js'
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
 * `Connection: close` where the server would keep it open). The client reads nothing until all its
 * bytes are written, as a client that sends the whole body before looking at the answer does: an
 * answer the server sends early waits in the socket. With `bodyAfterContinue` the bytes are the head
 * alone, and the body follows only once the server says `100 Continue`, as curl does.
 * Rejects when the connection breaks (a reset, a broken pipe) or nothing ends it within 20 s.
 */
export function rawRequest(
  port: number,
  bytes: string | Buffer,
  { bodyAfterContinue }: { bodyAfterContinue?: Buffer } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.pause()
      socket.write(bytes, () => socket.resume())
    })
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

/** `data` as one chunk of HTTP/1.1 chunked transfer coding. */
export function chunkOf(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
}

/** The terminating chunk of a chunked body (no trailers). */
export const LAST_CHUNK = '0\r\n\r\n'

/**
 * A client that never stops sending: `head`, then `piece` over and over, as fast as the server
 * reads it (`everyMs` absent) or one piece every `everyMs` (a trickle). It ignores the server's
 * answer and its half-close, and only stops when the server closes the connection for good (the
 * next write fails) or after 20 s, when it rejects. Resolves with the bytes written after the head
 * and what the client received.
 */
export function sendUntilCut(
  port: number,
  head: string,
  piece: Buffer,
  { everyMs }: { everyMs?: number } = {},
): Promise<{ written: number; received: string }> {
  return new Promise((resolve, reject) => {
    // Half-open: the server's FIN after its answer does not end this side, as with a client that
    // does not read.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    const chunks: Buffer[] = []
    let written = 0
    let trickle: NodeJS.Timeout | undefined
    const send = (): boolean => {
      written += piece.length
      return socket.write(piece)
    }
    const flood = () => {
      while (!socket.destroyed && send()) {}
    }
    socket.once('connect', () => {
      socket.write(head)
      if (everyMs === undefined) {
        socket.on('drain', flood)
        flood()
      } else {
        trickle = setInterval(send, everyMs)
      }
    })
    socket.on('data', (chunk) => chunks.push(chunk))
    // The failed write (EPIPE, ECONNRESET) is how the server's close shows: expected here.
    socket.on('error', () => undefined)
    socket.once('close', () => {
      clearInterval(trickle)
      clearTimeout(cap)
      resolve({ written, received: Buffer.concat(chunks).toString('utf8') })
    })
    const cap = setTimeout(() => {
      clearInterval(trickle)
      socket.removeAllListeners('close')
      socket.destroy()
      reject(new Error(`the server still held the connection after 20 s (${written} bytes written)`))
    }, 20_000)
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

/**
 * A raw answer that is the 413 envelope of a body over the limit, with no interim answer before it
 * (no `100 Continue` that would have the client upload the body) and the connection closed.
 */
export function expectBodyTooLarge(raw: string): void {
  const answer = parseAnswer(raw)
  expect(answer.interim).toEqual([])
  expect(answer.status).toBe(413)
  expect(answer.headers.connection).toBe('close')
  expect(answer.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/)
  expect(answer.body.error).toEqual({
    type: 'bad_request',
    code: 'body_too_large',
    message: `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`,
    request_id: answer.headers['x-request-id'],
  })
}
