import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { Session } from '../../helpers/assertions.js'
import { type Scan, sessionHelpers, type World } from './helpers.js'

/**
 * The integrity of the record as a property: whatever an operator's scans and API creates and edits
 * are, in whatever order and with whatever times in a window of three days (a little past now
 * included), the operator's sessions never overlap, never lie in the future, and at most one is
 * open. Each run is a fresh account; the commands run one after another, or a few at once.
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const WINDOW_MS = 72 * HOUR
/** Times fall on a quarter-hour grid, so that intervals often touch, coincide or nest. */
const STEP = 15 * MINUTE
const FUTURE_TOLERANCE_MS = 5 * MINUTE
const MAX_SHIFT_MS = 16 * HOUR

const offset = fc.integer({ min: 0, max: WINDOW_MS / STEP + 2 })
const length = fc.integer({ min: 1, max: (80 * HOUR) / STEP })

type Command =
  | { kind: 'scan'; at: number; direction: 'auto' | 'in' | 'out' }
  | { kind: 'create'; at: number; steps: number }
  | { kind: 'edit'; pick: number; at?: number; steps?: number }
  | { kind: 'delete'; pick: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('scan' as const),
      at: offset,
      direction: fc.constantFrom('auto', 'in', 'out' as const),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('create' as const), at: offset, steps: length }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { kind: fc.constant('edit' as const), pick: fc.nat(), at: offset, steps: length },
      { requiredKeys: ['kind', 'pick'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
)

/** [start, end) as the rule reads a session: open has no end, closed without a check-out 16 h. */
function interval(s: Session): [number, number] {
  const start = Date.parse(s.check_in.time)
  if (s.status === 'open') return [start, Number.POSITIVE_INFINITY]
  return [start, s.check_out ? Date.parse(s.check_out.time) : start + MAX_SHIFT_MS]
}

describe('integrity of the record (property)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world } = sessionHelpers(() => t)

  async function apply(w: World, origin: number, known: string[], c: Command) {
    const iso = (steps: number) => new Date(origin + steps * STEP).toISOString()
    const pick = (n: number) => known[n % Math.max(known.length, 1)]
    switch (c.kind) {
      case 'scan': {
        const res = await w.api.post<Scan>('/v1/scans', {
          device_id: w.device.code,
          operator_id: w.operator.id,
          time: iso(c.at),
          direction: c.direction,
        })
        expect([201, 409, 422], JSON.stringify(res.body)).toContain(res.status)
        if (res.status === 201 && res.body.session_id) known.push(res.body.session_id)
        return
      }
      case 'create': {
        const res = await w.api.post<Session>('/v1/sessions', {
          operator_id: w.operator.id,
          device_id: w.device.code,
          check_in: { time: iso(c.at) },
          check_out: { time: iso(c.at + c.steps) },
        })
        expect([201, 409, 422], JSON.stringify(res.body)).toContain(res.status)
        if (res.status === 201) known.push(res.body.id)
        return
      }
      case 'edit': {
        const id = pick(c.pick)
        if (id === undefined) return
        const body: Record<string, unknown> = { notes: 'edited' }
        if (c.at !== undefined) body.check_in = { time: iso(c.at) }
        if (c.steps !== undefined) body.check_out = { time: iso((c.at ?? 0) + c.steps) }
        const res = await w.api.patch(`/v1/sessions/${id}`, body)
        expect([200, 404, 409, 422], JSON.stringify(res.body)).toContain(res.status)
        return
      }
      case 'delete': {
        const id = pick(c.pick)
        if (id === undefined) return
        const res = await w.api.delete(`/v1/sessions/${id}`)
        expect([200, 404]).toContain(res.status)
      }
    }
  }

  it('non-rejected sessions of an operator never overlap, never lie in the future, and at most one is open', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(command, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 16 }),
        async (groups) => {
          const w = await world()
          // The window ends 30 minutes after now: some times are in the future, most in the past.
          const origin = Date.now() - WINDOW_MS
          const known: string[] = []
          for (const group of groups) await Promise.all(group.map((c) => apply(w, origin, known, c)))

          const checkedAt = Date.now()
          const res = await w.api.get<{ data: Session[] }>(
            `/v1/sessions?operator_id=${w.operator.id}&limit=200`,
          )
          const sessions = res.body.data
          const context = JSON.stringify({ groups, sessions }, null, 1)
          expect(sessions.filter((s) => s.status === 'open').length, context).toBeLessThanOrEqual(1)
          for (const s of sessions) {
            expect(Date.parse(s.check_in.time), context).toBeLessThanOrEqual(checkedAt + FUTURE_TOLERANCE_MS)
            if (s.check_out)
              expect(Date.parse(s.check_out.time), context).toBeLessThanOrEqual(
                checkedAt + FUTURE_TOLERANCE_MS,
              )
          }
          const sorted = sessions.map(interval).sort((a, b) => a[0] - b[0])
          for (let i = 1; i < sorted.length; i++) {
            const [, previousEnd] = sorted[i - 1] as [number, number]
            const [start] = sorted[i] as [number, number]
            expect(start, context).toBeGreaterThanOrEqual(previousEnd)
          }
        },
      ),
      { numRuns: 60 },
    )
  }, 240_000)
})
