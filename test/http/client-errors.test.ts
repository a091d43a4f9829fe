import { describe, expect, it } from 'vitest'
import { parseAnswer, rawRequest, useListeningApp } from '../helpers/raw-http.js'

describe('requests refused by the HTTP parser get the error envelope', () => {
  const served = useListeningApp()

  const cases: Array<[string, string, number, string, string]> = [
    [
      'a request target not starting with /',
      'GET foo HTTP/1.1\r\nHost: x\r\n\r\n',
      400,
      'bad_request',
      'malformed_request',
    ],
    [
      'a control character in a header value',
      'GET /v1/operators HTTP/1.1\r\nHost: x\r\nX-Test: a\u0001b\r\n\r\n',
      400,
      'bad_request',
      'malformed_request',
    ],
    [
      'oversized headers',
      `GET /v1/operators HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'bad_request',
      'headers_too_large',
    ],
    [
      'an unexpected Expect',
      'POST /v1/operators HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}',
      417,
      'bad_request',
      'expectation_failed',
    ],
    [
      'CONNECT',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      405,
      'bad_request',
      'method_not_allowed',
    ],
  ]

  for (const [name, bytes, status, type, code] of cases) {
    it(`${name}: ${status} ${code}`, async () => {
      const answer = parseAnswer(await rawRequest(served.port, bytes))
      expect(answer.status).toBe(status)
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(answer.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/)
      expect(answer.body.error).toMatchObject({ type, code, request_id: answer.headers['x-request-id'] })
      expect(typeof answer.body.error.message).toBe('string')
    })
  }

  it('still serves an ordinary request on a fresh connection afterwards', async () => {
    const answer = await rawRequest(
      served.port,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true)
  })
})
