import { beforeAll, describe, expect, it } from 'vitest'
import { expectBodyTooLarge, parseAnswer, rawRequest, useListeningApp } from '../helpers/raw-http.js'

// Over a real port: `inject` has no `Expect` handshake and always sends a Host header.
describe('Expect: 100-continue and the Host header, over a socket', () => {
  const served = useListeningApp()
  let secret: string
  beforeAll(async () => {
    secret = (await served.t.key()).secret
  })

  const createOperatorHead = (contentLength: number, headers = '') =>
    'POST /v1/operators HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
    `Authorization: Bearer ${secret}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${contentLength}\r\n${headers}\r\n`

  it('a 5 MB body announced with Expect: 100-continue gets the 413 envelope and no 100, so it is never sent', async () => {
    const size = 5_000_000
    // The client sends the body only if told to continue; a 100 would make it upload all 5 MB.
    const raw = await rawRequest(served.port, createOperatorHead(size, 'Expect: 100-continue\r\n'), {
      bodyAfterContinue: Buffer.alloc(size, 'a'),
    })
    expectBodyTooLarge(raw)
  })

  it('a body within the limit announced with Expect: 100-continue gets 100, then its answer', async () => {
    const body = JSON.stringify({ ident: 'expect-continue', name: 'Asked first' })
    const raw = await rawRequest(
      served.port,
      createOperatorHead(Buffer.byteLength(body), 'Expect: 100-continue\r\n'),
      {
        bodyAfterContinue: Buffer.from(body),
      },
    )
    const answer = parseAnswer(raw)
    expect(answer.interim).toEqual([100])
    expect(answer.status).toBe(201)
    expect(answer.body).toMatchObject({ object: 'operator', ident: 'expect-continue' })
  })

  it('an HTTP/1.1 request without Host gets the 400 envelope with X-Request-Id', async () => {
    // No key either: the request is refused for what HTTP forbids before anyone is asked who sent it.
    const answer = parseAnswer(
      await rawRequest(served.port, 'GET /v1/operators HTTP/1.1\r\nConnection: close\r\n\r\n'),
    )
    expect(answer.status).toBe(400)
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(answer.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/)
    expect(answer.body.error).toEqual({
      type: 'bad_request',
      code: 'missing_host_header',
      message: expect.stringContaining('HTTP/1.1 requires a Host header'),
      request_id: answer.headers['x-request-id'],
    })
  })

  it('an HTTP/1.0 request without Host is served: only HTTP/1.1 requires one', async () => {
    const answer = parseAnswer(await rawRequest(served.port, 'GET /healthz HTTP/1.0\r\n\r\n'))
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ status: 'ok' })
  })
})
