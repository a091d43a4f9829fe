import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Operation, ResponseOf } from '../../../packages/client/src/types.js'
import { Lease } from '../../../src/db/sqlite/driver.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { uniq } from '../../helpers/assertions.js'
import { dialect } from '../../helpers/database.js'
import { eventsOf } from '../../helpers/fixtures.js'
import { at, HOUR, MINUTE, plus, type Scan, SECOND, scanHelpers } from './helpers.js'

type BatchAnswer = ResponseOf<Operation<'/v1/scans/batch', 'post'>>
type Slot = Scan & { type?: string; code?: string; param?: string }

/**
 * How many statements the process sends to the database while `run` runs: on PostgreSQL each is a
 * round trip (`pg`'s client sends a query once the previous one is answered), on SQLite a call
 * into the library on the transaction's connection (savepoints included).
 */
async function statementsDuring(run: () => Promise<unknown>): Promise<number> {
  const spy =
    dialect === 'postgres'
      ? vi.spyOn(pg.Client.prototype, 'query')
      : vi.spyOn(Lease.prototype, 'executeQuery')
  try {
    await run()
    return spy.mock.calls.length
  } finally {
    spy.mockRestore()
  }
}

/**
 * A batch's items are applied together, from reads made once for all of them (scans/service.ts,
 * `recordScanBatch`); these tests hold that path to what `POST /v1/scans` does one scan at a time,
 * and check the way back to one savepoint per scan when an item fails once it has written.
 */
describe('POST /v1/scans/batch applies its scans together', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())
  const { world, scan, sessionRows, lastEventId, scanCount } = scanHelpers(() => t)

  /**
   * An account with operators in every state a scan can meet: `history` is what happened before
   * the batch (sent one scan at a time), then `scans` are its scans, sent as one batch or one by one.
   */
  async function scenario() {
    const w = await world()
    const device_id = w.gateA.code
    const names = [
      'alice',
      'bob',
      'carol',
      'dave',
      'erin',
      'frank',
      'gina',
      'heidi',
      'ivan',
      'judy',
      'kim',
      'leo',
    ] as const
    const ops = {} as Record<(typeof names)[number], { id: string; ident: string }>
    for (const name of names) ops[name] = await w.operator(uniq(name))
    const single = (operator: { id: string }, time: string, direction = 'auto') =>
      scan(w.api, { device_id, operator_id: operator.id, time, direction })
    // carol: open since the day before, 25 hours before her scan (closed as max_shift_exceeded);
    // judy: open since the evening before (checked out by the batch); dave: in 60 s before the batch
    // repeats it; ivan: a completed session the batch's scan falls inside.
    await single(ops.carol, at('08:00', '2026-03-01'))
    await single(ops.judy, at('22:00', '2026-03-01'))
    await single(ops.dave, at('07:00'))
    await single(ops.ivan, at('08:00'))
    await single(ops.ivan, at('12:00'))
    // kim: a session entered through the API ends when her scan comes (touching, not late); leo:
    // one the day before.
    for (const [operator, from, to] of [
      [ops.kim, at('05:00'), at('07:00')],
      [ops.leo, at('08:00', '2026-03-01'), at('16:00', '2026-03-01')],
    ] as const) {
      const made = await w.api.post('/v1/sessions', {
        operator_id: operator.id,
        device_id,
        check_in: { time: from },
        check_out: { time: to },
      })
      expect(made.status, JSON.stringify(made.body)).toBe(201)
    }
    expect((await w.api.delete(`/v1/operators/${ops.erin.id}`)).status).toBe(200)
    const period = await w.api.post<{ id: string }>('/v1/pay-periods', {
      start_date: '2026-02-01',
      end_date: '2026-02-15',
    })
    expect(period.status).toBe(201)
    expect((await w.api.post(`/v1/pay-periods/${period.body.id}/close`)).status).toBe(200)

    const scans: Array<Record<string, unknown>> = [
      { device_id, operator_id: ops.alice.id, time: at('08:00'), client_scan_id: 'same-id' },
      { device_id, operator_ident: ops.bob.ident, time: at('08:10') },
      { device_id, operator_id: ops.carol.id, time: at('09:00', '2026-03-02') },
      { device_id, operator_id: ops.dave.id, time: plus(at('07:00'), 30 * SECOND) },
      { device_id, operator_id: ops.erin.id, time: at('08:00') },
      { device_id, operator_id: ops.frank.id, operator_ident: ops.alice.ident, time: at('08:00') },
      { device_id, operator_ident: uniq('nobody'), time: at('08:00') },
      { device_id, operator_id: ops.gina.id },
      { device_id, operator_id: ops.heidi.id, time: at('09:00', '2026-02-10') },
      { device_id, operator_id: ops.ivan.id, time: at('10:00') },
      { device_id, operator_ident: ops.judy.ident, time: at('06:00') },
      // The same client_scan_id again, later and otherwise different: the first one's scan.
      { device_id, operator_id: ops.bob.id, time: at('08:20'), client_scan_id: 'same-id' },
      { device_id, operator_ident: ops.bob.ident, time: at('12:00'), direction: 'break_start' },
      { device_id, operator_id: ops.bob.id, time: at('12:30'), direction: 'break_end' },
      { device_id, operator_id: ops.bob.id, time: at('12:45'), direction: 'break_end' },
      { device_id, operator_id: ops.alice.id, time: plus(at('08:00'), 59 * SECOND) },
      { device_id, operator_id: ops.alice.id, time: at('16:00') },
      { device_id, operator_id: ops.bob.id, time: at('17:00'), direction: 'out' },
      { device_id, operator_id: ops.carol.id, time: at('17:00') },
      { device_id, operator_id: ops.dave.id, time: at('15:00') },
      { device_id, operator_id: ops.gina.id },
      { device_id, operator_id: ops.heidi.id, time: at('16:00'), direction: 'out' },
      { device_id, operator_id: ops.judy.id, time: plus(at('06:00'), 10 * MINUTE), direction: 'in' },
      { device_id, operator_id: ops.kim.id, time: at('07:00') },
      { device_id, operator_ident: ops.leo.ident, time: at('07:30') },
      { device_id, operator_id: ops.frank.id, time: 'not a time' },
      { device_id, operator_id: ops.frank.id, time: plus(new Date().toISOString(), 2 * HOUR) },
    ]
    const ids = names.map((name) => ops[name].id)
    return { w, scans, ids, mark: await lastEventId(w.accountId) }
  }

  /** What an answer says, without the ids of its account (times of scans sent without one: `now`). */
  type Outcome = { error: unknown[] } | { scan: [string, string, string | null, string, boolean] }
  function outcomeOf(slot: Slot, given: Record<string, unknown>): Outcome {
    if (slot.object !== 'scan') return { error: [slot.type, slot.code, slot.param] }
    const time = given.time === undefined ? 'now' : slot.time
    return { scan: [slot.direction, slot.result, slot.flag_reason, time, slot.session_id !== null] }
  }

  /** The account's sessions and events after the scans, without its ids. */
  async function recordOf(accountId: string, ids: string[], mark: string) {
    const sessions = (await sessionRows(accountId))
      .filter((row) => row.check_in_at < Date.now() - HOUR)
      .map((row) => [
        ids.indexOf(row.operator_id),
        row.check_in_at,
        row.check_out_at,
        row.status,
        row.flag_reason,
        row.breaks,
        row.work_date,
      ])
    const events = (await eventsOf(t, accountId, undefined, mark)).map((event) => event.type)
    return { sessions, events, scans: await scanCount(accountId) }
  }

  it('answers each scan and changes the record exactly as POST /v1/scans one at a time does', async () => {
    const together = await scenario()
    const batch = await together.w.api.post<BatchAnswer>('/v1/scans/batch', { scans: together.scans })
    expect(batch.status).toBe(200)
    const batchOutcomes = (batch.body.data as Slot[]).map((slot, i) =>
      outcomeOf(slot, together.scans[i] ?? {}),
    )

    const alone = await scenario()
    // One at a time in the batch's order: by time (a scan without one is now), ties in array order.
    // An unreadable time goes first (and is refused), as checkScanBatch orders it.
    const now = Date.now()
    const order = alone.scans
      .map((body, index) => {
        const time = body.time === undefined ? now : Date.parse(String(body.time))
        return { body, index, time: Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time }
      })
      .sort((a, b) => a.time - b.time || a.index - b.index)
    const aloneOutcomes: Outcome[] = new Array(alone.scans.length)
    for (const { body, index } of order) {
      const res = await alone.w.api.post<Slot>('/v1/scans', body)
      aloneOutcomes[index] = outcomeOf(
        res.status === 201 ? res.body : (res.body as unknown as { error: Slot }).error,
        body,
      )
    }

    expect(batchOutcomes).toEqual(aloneOutcomes)
    // The scenario reaches every rule it was written for.
    expect(batchOutcomes.map((o) => ('scan' in o ? (o.scan[2] ?? o.scan[1]) : o.error[1]))).toEqual([
      'checked_in',
      'checked_in',
      'checked_in',
      'duplicate_scan',
      'inactive_operator',
      'conflicting_params',
      'unknown_operator',
      'checked_in',
      'period_closed',
      'out_of_order',
      'checked_out',
      'checked_in',
      'break_started',
      'break_ended',
      'no_open_break',
      'duplicate_scan',
      'checked_out',
      'checked_out',
      'checked_out',
      'checked_out',
      'duplicate_scan',
      'no_open_session',
      'checked_in',
      'checked_in',
      'checked_in',
      'invalid_timestamp',
      'time_in_future',
    ])
    expect(await recordOf(together.w.accountId, together.ids, together.mark)).toEqual(
      await recordOf(alone.w.accountId, alone.ids, alone.mark),
    )
  })

  it('costs a few statements a scan, not a dozen', async () => {
    const w = await world()
    const ops = await Promise.all(Array.from({ length: 20 }, () => w.operator()))
    const scans = ops.flatMap((op, i) => [
      {
        device_id: w.gateA.code,
        operator_id: op.id,
        time: plus(at('08:00'), i * SECOND),
        client_scan_id: `in-${i}`,
      },
      {
        device_id: w.gateA.code,
        operator_ident: op.ident,
        time: plus(at('16:00'), i * SECOND),
        client_scan_id: `out-${i}`,
      },
    ])
    let answer: Slot[] = []
    const statements = await statementsDuring(async () => {
      const res = await w.api.post<BatchAnswer>('/v1/scans/batch', { scans })
      answer = res.body.data as Slot[]
    })
    expect(answer.map((s) => s.result)).toEqual(
      scans.map((_, i) => (i % 2 === 0 ? 'checked_in' : 'checked_out')),
    )
    // A check-in writes its session, its revision and its scan's event; a check-out the session's
    // change, its revision and two events; what they read is read for all of them, and the scans
    // go 100 to an INSERT. One scan at a time with a savepoint each took 14.
    expect(statements).toBeLessThanOrEqual(5 * scans.length + 20)
  })

  it('one item failing once it has written: the batch is applied again scan by scan, that slot is its error', async () => {
    const w = await world()
    const [alice, bob, carol] = [await w.operator(), await w.operator(), await w.operator()]
    await scan(w.api, { device_id: w.gateA.code, operator_id: bob.id, time: at('07:00') })
    const mark = await lastEventId(w.accountId)
    // The database refuses bob's session.completed: his check-out fails after its scan's event,
    // the session's update and its revision were written.
    const refuse = failingEventInsert(bob.id)
    await refuse.create()
    try {
      const scans = [
        { device_id: w.gateA.code, operator_id: alice.id, time: at('08:00') },
        { device_id: w.gateA.code, operator_id: bob.id, time: at('15:00') },
        { device_id: w.gateA.code, operator_id: carol.id, time: at('09:00') },
        { device_id: w.gateA.code, operator_id: alice.id, time: at('16:00') },
      ]
      const res = await w.api.post<BatchAnswer>('/v1/scans/batch', { scans })
      expect(res.status).toBe(200)
      const [aliceIn, bobOut, carolIn, aliceOut] = res.body.data as Slot[]
      expect(bobOut).toMatchObject({ type: 'api_error', request_id: res.headers['x-request-id'] })
      expect([aliceIn?.result, carolIn?.result, aliceOut?.result]).toEqual([
        'checked_in',
        'checked_in',
        'checked_out',
      ])
    } finally {
      await refuse.drop()
    }
    const bobSessions = await sessionRows(w.accountId, bob.id)
    expect(bobSessions.map((s) => [s.status, s.check_out_at])).toEqual([['open', null]])
    expect(await scanCount(w.accountId)).toBe(4)
    expect((await eventsOf(t, w.accountId, undefined, mark)).map((e) => e.type)).toEqual([
      'scan.checked_in',
      'scan.checked_in',
      'scan.checked_out',
      'session.completed',
    ])
    const revisions = await t.db
      .selectFrom('session_revisions')
      .select('action')
      .where('session_id', '=', bobSessions[0]?.id ?? '')
      .execute()
    expect(revisions.map((r) => r.action)).toEqual(['checked_in'])
  })

  /** A trigger that makes the database refuse `session.completed` of one operator's session. */
  function failingEventInsert(operatorId: string) {
    const name = `refuse_${operatorId.toLowerCase().replace(/[^a-z0-9]/g, '')}`
    const when = `new.type = 'session.completed' and new.payload like '%${operatorId}%'`
    if (dialect === 'sqlite') {
      return {
        create: () =>
          sql
            .raw(
              `create trigger ${name} before insert on events when ${when} begin select raise(abort, 'refused by the test'); end`,
            )
            .execute(t.db),
        drop: () => sql.raw(`drop trigger ${name}`).execute(t.db),
      }
    }
    return {
      create: async () => {
        await sql
          .raw(
            `create function ${name}() returns trigger language plpgsql as $$ begin if ${when} then raise exception 'refused by the test'; end if; return new; end $$`,
          )
          .execute(t.db)
        await sql
          .raw(`create trigger ${name} before insert on events for each row execute function ${name}()`)
          .execute(t.db)
      },
      drop: async () => {
        await sql.raw(`drop trigger ${name} on events`).execute(t.db)
        await sql.raw(`drop function ${name}()`).execute(t.db)
      },
    }
  }
})
