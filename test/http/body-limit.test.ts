import { beforeAll, describe, expect, it } from 'vitest'
import { LINGER_MAX_BYTES } from '../../src/http/client-errors.js'
import {
  chunkOf,
  expectBodyTooLarge,
  LAST_CHUNK,
  rawRequest,
  sendUntilCut,
  useListeningApp,
} from '../helpers/raw-http.js'

const MiB = 1024 * 1024

// Over a real port, without `Expect: 100-continue`: the client writes its whole body before it reads
// anything, so it gets its 413 only if the service reads (and drops) the body before closing.
describe('a body over the limit, sent whole: the 413 envelope, not a broken pipe', () => {
  const served = useListeningApp()
  let secret: string
  beforeAll(async () => {
    secret = (await served.t.key()).secret
  })

  const createOperatorHead = (framing: string) =>
    'POST /v1/operators HTTP/1.1\r\nHost: x\r\n' +
    `Authorization: Bearer ${secret}\r\nContent-Type: application/json\r\n${framing}\r\n`

  for (const size of [2 * MiB, 8 * MiB, 32 * MiB]) {
    it(`${size / MiB} MiB with Content-Length`, async () => {
      const head = createOperatorHead(`Content-Length: ${size}\r\n`)
      expectBodyTooLarge(
        await rawRequest(served.port, Buffer.concat([Buffer.from(head), Buffer.alloc(size, 'a')])),
      )
    })

    it(`${size / MiB} MiB chunked`, async () => {
      const chunk = chunkOf(Buffer.alloc(MiB, 'a'))
      const body = [...Array.from({ length: size / MiB }, () => chunk), Buffer.from(LAST_CHUNK)]
      const head = createOperatorHead('Transfer-Encoding: chunked\r\n')
      expectBodyTooLarge(await rawRequest(served.port, Buffer.concat([Buffer.from(head), ...body])))
    })
  }

  it(`a chunked body that never ends is cut once ${LINGER_MAX_BYTES / MiB} MiB are dropped`, async () => {
    const { written } = await sendUntilCut(
      served.port,
      createOperatorHead('Transfer-Encoding: chunked\r\n'),
      chunkOf(Buffer.alloc(MiB, 'a')),
    )
    // The service read up to its bound, and no further than the socket buffers between the two
    // ends hold: it neither closed early nor kept reading.
    expect(written).toBeGreaterThan(LINGER_MAX_BYTES)
    expect(written).toBeLessThan(LINGER_MAX_BYTES + 32 * MiB)
  })

  it('a Content-Length over the bound is cut at once: its body will not be read in time', async () => {
    const { written } = await sendUntilCut(
      served.port,
      createOperatorHead(`Content-Length: ${LINGER_MAX_BYTES + 1}\r\n`),
      Buffer.alloc(MiB, 'a'),
    )
    expect(written).toBeLessThan(LINGER_MAX_BYTES / 2)
  })

  it('a body that trickles is cut by the time bound, after its 413', async () => {
    const { received } = await sendUntilCut(
      served.port,
      createOperatorHead(`Content-Length: ${2 * MiB}\r\n`),
      Buffer.alloc(1024, 'a'),
      { everyMs: 50 },
    )
    expectBodyTooLarge(received)
  })
})
