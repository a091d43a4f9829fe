import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isUniqueViolation } from '../../../src/db/connection.js'
import type { SessionRow } from '../../../src/modules/sessions/repository.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, uniq } from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, MINUTE, plus, type Scan, scanHelpers } from './helpers.js'

describe('scans over HTTP', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t?.close())
  const { world, lastEventId, sessionRows } = scanHelpers(() => t)

  describe('concurrency', () => {
    it('10 simultaneous scans of one operator at one time: exactly one check-in and one open session', async () => {
      const w = await world()
      const alice = await w.operator()
      const mark = await lastEventId(w.accountId)
      const time = at('08:00')
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          w.api.post<Scan>('/v1/scans', {
            device_id: i % 2 === 0 ? w.gateA.code : w.gateB.code,
            operator_id: alice.id,
            time,
          }),
        ),
      )
      const statuses = responses.map((r) => r.status)
      expect(
        statuses.every((s) => s === 201 || s === 409),
        JSON.stringify(statuses),
      ).toBe(true)
      for (const res of responses.filter((r) => r.status === 409)) {
        expectError(res, 409, 'conflict', 'open_session_exists')
      }
      const accepted = responses.filter((r) => r.status === 201).map((r) => r.body)
      expect(accepted.filter((s) => s.result === 'checked_in')).toHaveLength(1)
      expect(
        accepted.filter((s) => s.result !== 'checked_in').every((s) => s.flag_reason === 'duplicate_scan'),
      ).toBe(true)

      const rows = await sessionRows(w.accountId, alice.id)
      expect(rows).toHaveLength(1)
      expect(rows[0]?.status).toBe('open')
      const types = (await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)
      expect(types.filter((x) => x === 'scan.checked_in')).toHaveLength(1)
      expect(types.filter((x) => x === 'scan.flagged')).toHaveLength(accepted.length - 1)
      expect(types).toHaveLength(accepted.length)
    })

    it('simultaneous scans at different times keep one open session and a consistent history', async () => {
      const w = await world()
      const alice = await w.operator()
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          w.api.post<Scan>('/v1/scans', {
            device_id: w.gateA.code,
            operator_id: alice.id,
            time: plus(at('08:00'), i * 5 * MINUTE),
          }),
        ),
      )
      expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true)
      const accepted = responses.filter((r) => r.status === 201).map((r) => r.body)
      const rows = await sessionRows(w.accountId, alice.id)
      expect(rows.filter((r) => r.status === 'open').length).toBeLessThanOrEqual(1)
      expect(rows).toHaveLength(accepted.filter((s) => s.result === 'checked_in').length)
      expect(rows.filter((r) => r.check_out_at !== null)).toHaveLength(
        accepted.filter((s) => s.result === 'checked_out').length,
      )
      for (const r of rows) if (r.check_out_at !== null) expect(r.check_out_at).toBeGreaterThan(r.check_in_at)
    })

    it.runIf(dialect === 'postgres')(
      'two API processes on one PostgreSQL database never open two sessions for one operator',
      async () => {
        const second = await buildTestApp({}, { database: t.database })
        try {
          const w = await world()
          const operators = [await w.operator(), await w.operator()]
          const apis = [w.api, second.client(w.key.secret)] as const
          const results: Record<string, Scan['result'][]> = {}
          for (let round = 0; round < 12; round++) {
            const time = plus(at('06:00'), round * 10 * MINUTE)
            const responses = await Promise.all(
              operators.flatMap((op) =>
                Array.from({ length: 8 }, (_, i) =>
                  apis[i % 2]?.post<Scan>('/v1/scans', {
                    device_id: i % 4 < 2 ? w.gateA.code : w.gateB.code,
                    operator_id: op.id,
                    time,
                  }),
                ),
              ),
            )
            for (const res of responses) {
              if (!res) throw new Error('no response')
              expect([201, 409], JSON.stringify(res.body)).toContain(res.status)
              if (res.status === 409) expectError(res, 409, 'conflict', 'open_session_exists')
            }
            for (const op of operators) {
              const mine = responses
                .filter((r) => r?.status === 201)
                .map((r) => r?.body as Scan)
                .filter((s) => s.operator_id === op.id)
              const accepted = mine.filter((s) => s.result !== 'flagged')
              expect(accepted, `round ${round}`).toHaveLength(1)
              expect(
                mine.filter((s) => s.result === 'flagged').every((s) => s.flag_reason === 'duplicate_scan'),
              ).toBe(true)
              results[op.id] = [...(results[op.id] ?? []), accepted[0]?.result ?? 'flagged']
              const open = (await sessionRows(w.accountId, op.id)).filter((r) => r.status === 'open')
              expect(open.length).toBeLessThanOrEqual(1)
            }
          }
          for (const op of operators) {
            // One accepted scan per round, so the operator strictly alternates in and out.
            expect(results[op.id]).toEqual(
              Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'checked_in' : 'checked_out')),
            )
            const rows = await sessionRows(w.accountId, op.id)
            expect(rows).toHaveLength(6)
            expect(
              rows.every((r) => r.status === 'completed' && r.check_out_at === r.check_in_at + 10 * MINUTE),
            ).toBe(true)
          }
        } finally {
          // Only the second app: the database belongs to `t`, which drops it.
          await second.app.close()
        }
      },
    )
  })

  describe('the partial unique index sessions_one_open', () => {
    function row(accountId: string, operatorId: string, extra: Partial<SessionRow> = {}): SessionRow {
      const now = Date.now()
      return {
        id: `ses_${randomBytes(13).toString('hex').toUpperCase()}`,
        account_id: accountId,
        livemode: 0,
        operator_id: operatorId,
        operator_ident: 'x',
        device_code: 'gate',
        location_id: null,
        check_in_at: now,
        check_out_at: null,
        break_minutes: 0,
        breaks: '[]',
        notes: null,
        is_flagged: 0,
        flag_reason: null,
        source: 'scan',
        status: 'open',
        deleted_at: null,
        created_at: now,
        updated_at: now,
        work_date: '2026-01-01',
        review_status: 'not_required',
        reviewed_at: null,
        reviewed_by: null,
        review_note: null,
        ...extra,
      }
    }

    async function insertFails(r: SessionRow): Promise<unknown> {
      try {
        await t.db.insertInto('sessions').values(r).execute()
      } catch (error) {
        return error
      }
      return undefined
    }

    it('refuses a second open session of one operator in one account and mode, and nothing else', async () => {
      const accountId = uniq('acct_idx')
      const op = uniq('op_idx')
      await t.db.insertInto('sessions').values(row(accountId, op)).execute()

      const error = await insertFails(row(accountId, op))
      expect(error).toBeDefined()
      expect(isUniqueViolation(error)).toBe(true)
      expect(String((error as Error).message)).toMatch(/sessions_one_open|UNIQUE constraint failed/)

      // Completed, deleted, other mode, other account, other operator: all allowed.
      expect(
        await insertFails(row(accountId, op, { status: 'completed', check_out_at: Date.now() + 1 })),
      ).toBe(undefined)
      expect(await insertFails(row(accountId, op, { deleted_at: Date.now() }))).toBe(undefined)
      expect(await insertFails(row(accountId, op, { livemode: 1 }))).toBe(undefined)
      expect(await insertFails(row(uniq('acct_idx'), op))).toBe(undefined)
      expect(await insertFails(row(accountId, uniq('op_idx')))).toBe(undefined)

      // An update that would reopen a completed session is refused too.
      const completed = row(accountId, op, { status: 'completed', check_out_at: Date.now() + 1 })
      await t.db.insertInto('sessions').values(completed).execute()
      let updateError: unknown
      try {
        await t.db.updateTable('sessions').set({ status: 'open' }).where('id', '=', completed.id).execute()
      } catch (e) {
        updateError = e
      }
      expect(isUniqueViolation(updateError)).toBe(true)

      const open = await t.db
        .selectFrom('sessions')
        .select('id')
        .where('account_id', '=', accountId)
        .where('operator_id', '=', op)
        .where('livemode', '=', 0)
        .where('status', '=', 'open')
        .where('deleted_at', 'is', null)
        .execute()
      expect(open).toHaveLength(1)
    })
  })
})
