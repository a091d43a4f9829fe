import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toIso } from '../../src/lib/time.js'

/** The range of a JavaScript Date: ±100,000,000 days around 1970. */
const DATE_LIMIT_MS = 8.64e15

describe('toIso', () => {
  it('is toISOString for every instant a Date can hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: -DATE_LIMIT_MS, max: DATE_LIMIT_MS }), (ms) => {
        expect(toIso(ms)).toBe(new Date(ms).toISOString())
      }),
      { numRuns: 20_000 },
    )
  })

  it('is toISOString around the years 0000 to 9999, where it computes the text itself', () => {
    const from = Date.UTC(0, 0, 1) - 3 * 86_400_000
    const to = Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 3 * 86_400_000
    fc.assert(
      fc.property(fc.integer({ min: from, max: to }), (ms) => {
        expect(toIso(ms)).toBe(new Date(ms).toISOString())
      }),
      { numRuns: 20_000 },
    )
  })

  it('is toISOString on the edges: day, month, leap-day, century and range boundaries', () => {
    const edges: number[] = [0, -1, 1, DATE_LIMIT_MS, -DATE_LIMIT_MS]
    for (const year of [0, 1, 99, 100, 400, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 2400, 9999]) {
      for (const [month, day] of [
        [0, 1],
        [1, 28],
        [1, 29],
        [2, 1],
        [11, 31],
      ] as const) {
        const at = new Date(0)
        at.setUTCFullYear(year, month, day)
        at.setUTCHours(0, 0, 0, 0)
        edges.push(at.getTime() - 1, at.getTime(), at.getTime() + 86_399_999)
      }
    }
    for (const ms of edges) expect(toIso(ms)).toBe(new Date(ms).toISOString())
  })

  it('is toISOString for fractions, and throws as it does for what is not an instant', () => {
    fc.assert(
      fc.property(fc.double({ min: -DATE_LIMIT_MS, max: DATE_LIMIT_MS, noNaN: true }), (ms) => {
        expect(toIso(ms)).toBe(new Date(ms).toISOString())
      }),
    )
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, DATE_LIMIT_MS + 1]) {
      expect(() => toIso(bad)).toThrow(RangeError)
    }
  })
})
