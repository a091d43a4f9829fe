import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { addDays, calendarDate, startOfDate } from '../../src/lib/dates.js'

/** What a wall clock in `timeZone` showed, read from Intl's parts one by one. */
function wallDate(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day}`
}

const ZONES = [
  'UTC',
  'America/Los_Angeles',
  'Asia/Tokyo',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Europe/Paris',
]

describe('calendarDate', () => {
  it('is the wall-clock date in the zone, for any instant from 1970 to 2200', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) }),
        fc.constantFrom(...ZONES),
        (ms, zone) => calendarDate(ms, zone) === wallDate(ms, zone),
      ),
      { numRuns: 5000 },
    )
  })

  it('moves to the next day at local midnight, across a DST change', () => {
    // 2026-03-08, Los Angeles springs forward at 02:00; midnight there is 08:00 UTC before it.
    expect(calendarDate(Date.UTC(2026, 2, 8, 7, 59, 59, 999), 'America/Los_Angeles')).toBe('2026-03-07')
    expect(calendarDate(Date.UTC(2026, 2, 8, 8, 0, 0, 0), 'America/Los_Angeles')).toBe('2026-03-08')
    // and midnight of the 9th is 07:00 UTC (PDT, UTC−7).
    expect(calendarDate(Date.UTC(2026, 2, 9, 6, 59, 59, 999), 'America/Los_Angeles')).toBe('2026-03-08')
    expect(calendarDate(Date.UTC(2026, 2, 9, 7, 0, 0, 0), 'America/Los_Angeles')).toBe('2026-03-09')
  })
})

describe('startOfDate', () => {
  it('is the first instant the zone shows the date, for any date from 1970 to 2200', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) }),
        fc.constantFrom(...ZONES, 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Santiago'),
        (ms, zone) => {
          const date = calendarDate(ms, zone)
          const start = startOfDate(date, zone)
          return start <= ms && calendarDate(start, zone) === date && calendarDate(start - 1, zone) < date
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('is local midnight, or the DST jump where a day skips it', () => {
    expect(new Date(startOfDate('2026-11-26', 'UTC')).toISOString()).toBe('2026-11-26T00:00:00.000Z')
    expect(new Date(startOfDate('2026-11-26', 'Pacific/Kiritimati')).toISOString()).toBe(
      '2026-11-25T10:00:00.000Z',
    )
    expect(new Date(startOfDate('2026-11-26', 'Pacific/Pago_Pago')).toISOString()).toBe(
      '2026-11-26T11:00:00.000Z',
    )
    // Los Angeles falls back at 02:00 on 1 November: that day begins in PDT, the next in PST.
    expect(new Date(startOfDate('2026-11-01', 'America/Los_Angeles')).toISOString()).toBe(
      '2026-11-01T07:00:00.000Z',
    )
    expect(new Date(startOfDate(addDays('2026-11-01', 1), 'America/Los_Angeles')).toISOString()).toBe(
      '2026-11-02T08:00:00.000Z',
    )
    // Santiago springs forward at midnight on 6 September 2026: 00:00 (−04) is 01:00 (−03) at once.
    expect(new Date(startOfDate('2026-09-06', 'America/Santiago')).toISOString()).toBe(
      '2026-09-06T04:00:00.000Z',
    )
  })
})
