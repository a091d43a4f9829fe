import { describe, expect, it } from 'vitest'
import { newId, randomHex } from '../../src/lib/ids.js'
import { waitUntil } from '../helpers/assertions.js'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

describe('newId', () => {
  it('is the prefix and a ULID, unique and in creation order', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('evt'))
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
  })

  it('draws every Base32 character for the random part of ids made in different milliseconds', async () => {
    const randomParts: string[] = []
    for (let i = 0; i < 40; i++) {
      randomParts.push(newId('op').slice(3 + 10))
      // The next id in another millisecond: within one, the monotonic factory increments the last
      // random part instead of drawing one. Ids take the system's time (the ulid package's), not
      // the service's clock.
      const made = Date.now()
      await waitUntil(
        () => Date.now(),
        (now) => now > made,
        { everyMs: 1 },
      )
    }
    const seen = new Set(randomParts.join(''))
    // 640 characters drawn uniformly from 32: missing any one has a probability below 10⁻⁷.
    expect([...seen].sort().join('')).toBe(CROCKFORD)
  })
})

describe('randomHex', () => {
  it('gives fresh bytes each call, also across a refill of the pool', () => {
    // 12 bytes a call: 400 calls cross the 4 KiB pool's end at least once (4,800 bytes).
    const values = Array.from({ length: 400 }, () => randomHex(12))
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{24}$/)
    expect(new Set(values).size).toBe(values.length)
    // Every hex digit occurs (9,600 digits drawn): the bytes are not left zeroed.
    expect(new Set(values.join('')).size).toBe(16)
  })
})
