import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { type ApiError, errors } from '../core/errors.js'
import { newRequestId } from './request-id.js'

/**
 * Answers for requests Node's HTTP parser refuses before Fastify sees them (a request target not
 * starting with `/`, a control character in a header, oversized headers, an unsupported `Expect`,
 * `CONNECT`). Node would answer these with a bare status line or a reset; here they get the same
 * envelope and `X-Request-Id` as every other error. The socket is closed after the answer: the
 * parser's state is unknown, so nothing further on it can be trusted.
 */
function errorAnswer(error: ApiError): { headers: Record<string, string>; body: string } {
  const requestId = newRequestId()
  const body = JSON.stringify({ error: { ...error.toBody(), request_id: requestId } })
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    connection: 'close',
    ...error.headers,
  }
  return { headers, body }
}

/** The answer as bytes, for a socket that has no `ServerResponse` (parser failures, CONNECT). */
function rawErrorResponse(error: ApiError): string {
  const { headers, body } = errorAnswer(error)
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  return `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
}

function errorForParserFailure(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge()
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout()
  return errors.malformedRequest()
}

/** Fastify's `clientErrorHandler`: the parser refused the bytes of a request. */
export const clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']> = (
  error,
  socket,
) => {
  const code = (error as NodeJS.ErrnoException).code
  // A client that went away mid-request has nobody to answer.
  if (code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  socket.end(rawErrorResponse(errorForParserFailure(code)))
}

/**
 * Node's `checkContinue` (`Expect: 100-continue`), `checkExpectation` (any other `Expect`) and
 * `connect` events.
 */
export function answerUnsupportedRequests(server: Server, bodyLimit: number): void {
  // Without a listener Node says 100 Continue to every request; the client then uploads a body the
  // body parser refuses unread, and the refusal's `Connection: close` resets the connection
  // mid-upload: the client sees a broken pipe, not the 413. A body declared over the limit gets no
  // 100, only the app's answer (Node closes the connection after a final status sent without a
  // 100), so it is never sent.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    // A body of unknown length (chunked) may be within the limit: it is asked for.
    const tooLarge = Number(request.headers['content-length']) > bodyLimit
    if (!tooLarge) response.writeContinue()
    server.emit('request', request, response)
  })
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = errors.expectationFailed(request.headers.expect ?? '')
    const { headers, body } = errorAnswer(error)
    response.writeHead(error.status, headers).end(body)
  })
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const path = request.url ?? ''
    socket.end(rawErrorResponse(errors.methodNotAllowed('CONNECT', path, ['DELETE', 'GET', 'PATCH', 'POST'])))
  })
}

/**
 * The bounds of a lingering close (below). 64 MiB is what a client on a local network sends in well
 * under a second; past it the client is sending far more than any refused body is worth reading.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024
/**
 * Five seconds: long enough for a 2 MiB body over a slow uplink (~400 KB/s) to arrive, short enough
 * that a client trickling bytes cannot hold the socket, nor delay a graceful shutdown, for longer.
 * Socket I/O runs on real time, so this is a plain timer.
 */
export const LINGER_MAX_MS = 5_000

/**
 * A lingering close for a request answered before its body was read (a 413): the answer is sent with
 * `Connection: close`, then the rest of the body is read and dropped before the socket is closed.
 * Closing at once would leave unread bytes in the kernel's receive buffer, and closing such a socket
 * sends a reset: the client, still writing its body, gets a broken pipe and never reads the answer
 * waiting for it. Reading stops at `LINGER_MAX_BYTES` or `LINGER_MAX_MS`, whichever comes first, and
 * a body declared larger than `LINGER_MAX_BYTES` is not read at all: it would be cut anyway.
 */
export function lingerBeforeClosing(request: IncomingMessage): void {
  const { socket } = request
  // Only a real connection lingers: a request injected in-process (`app.inject`, the tests' client)
  // has a stand-in socket with nothing to read, no reset to avoid and no destroy().
  if (!(socket instanceof net.Socket)) return
  if (socket.destroyed || Number(request.headers['content-length']) > LINGER_MAX_BYTES) return
  const cut = () => socket.destroy()
  const timer = setTimeout(cut, LINGER_MAX_MS)
  socket.once('close', () => clearTimeout(timer))
  let dropped = 0
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > LINGER_MAX_BYTES) cut()
  })
  request.resume()
  // Node's server ends a `Connection: close` answer with `socket.destroySoon()` (end, then destroy
  // once the answer is flushed), whatever is still unread. Node has no lingering close, so this socket
  // ends its side and closes once the body has been read instead.
  socket.destroySoon = () => {
    socket.end()
    const destroySoon = () => net.Socket.prototype.destroySoon.call(socket)
    if (request.complete) destroySoon()
    else request.once('end', destroySoon)
  }
}

/**
 * An `onRequest` hook: HTTP/1.1 requires a `Host` header (RFC 9112 §3.2). Node's own check answers
 * a bare 400 before Fastify sees the request, so the app turns it off (`requireHostHeader: false`)
 * and refuses here, with the envelope and `X-Request-Id`. HTTP/1.0 has no such rule.
 */
export async function requireHostHeader(request: FastifyRequest): Promise<void> {
  const { httpVersionMajor, httpVersionMinor, headers } = request.raw
  if (httpVersionMajor === 1 && httpVersionMinor === 1 && headers.host === undefined) {
    throw errors.missingHostHeader()
  }
}
