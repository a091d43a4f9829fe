import { describe, expect, it } from 'vitest'
import { instantOf, wallClockOf } from '../../console/src/zoned-time.js'

/**
 * The session page takes a check-out as wall-clock time in the session's zone: these are the
 * instants it sends, whatever the zone of the machine running the test.
 */
describe('wall-clock time in a zone (console/src/zoned-time.ts)', () => {
  const cases: Array<[wallClock: string, zone: string, instant: string]> = [
    ['2026-10-20T15:00', 'Europe/Paris', '2026-10-20T13:00:00.000Z'], // summer time, UTC+2
    ['2026-11-20T15:00', 'Europe/Paris', '2026-11-20T14:00:00.000Z'], // winter time, UTC+1
    ['2026-10-25T01:30', 'Europe/Paris', '2026-10-24T23:30:00.000Z'], // the night summer time ends
    ['2026-10-25T04:00', 'Europe/Paris', '2026-10-25T03:00:00.000Z'], // after it ended
    ['2026-03-29T04:00', 'Europe/Paris', '2026-03-29T02:00:00.000Z'], // after summer time began
    ['2026-11-20T09:15', 'America/New_York', '2026-11-20T14:15:00.000Z'],
    ['2026-11-20T09:15', 'Asia/Kolkata', '2026-11-20T03:45:00.000Z'], // a half-hour offset
    ['2026-11-20T09:15', 'UTC', '2026-11-20T09:15:00.000Z'],
    ['2026-12-31T23:59', 'Pacific/Auckland', '2026-12-31T10:59:00.000Z'],
  ]

  it.each(cases)('%s in %s is %s, and back', (wallClock, zone, instant) => {
    expect(instantOf(wallClock, zone)).toBe(instant)
    expect(wallClockOf(instant, zone)).toBe(wallClock)
  })

  it('takes seconds, and refuses text that is not a time', () => {
    expect(instantOf('2026-10-20T15:00:30', 'Europe/Paris')).toBe('2026-10-20T13:00:30.000Z')
    expect(instantOf('', 'Europe/Paris')).toBeUndefined()
    expect(instantOf('20/10/2026 15:00', 'Europe/Paris')).toBeUndefined()
  })
})
