import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, setKeyLabel } from '../../../src/modules/keys/service.js'
import { listRevisions } from '../../../src/modules/sessions/service.js'
import { ForgottenCheckOutSweep, SERVICE_KEY_ID } from '../../../src/modules/sessions/sweep.js'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import type { List, PayPeriod, Scan, Session, SessionRevision } from '../../helpers/assertions.js'
import { atTime } from '../../helpers/clock.js'
import { pairedDevice } from '../../helpers/fixtures.js'
import { createPerson, signIn } from '../../helpers/people.js'
import { created, ok, world } from '../../helpers/world.js'

const HOUR = 60 * 60 * 1000

/**
 * decisions.md, "Who did it": revisions, reviews and pay-period closes name who made them (`actor`:
 * a key by its label, a person by their name, a device by its code, the service as itself), as
 * they are now; `reviewed_by` holds the key's or the person's id.
 */
describe('who did it (actor)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const revisionsOf = async (api: ReturnType<TestApp['client']>, sessionId: string, query = '') =>
    (await ok(api.get<List<SessionRevision>>(`/v1/sessions/${sessionId}/revisions${query}`))).data

  it("a session's history names a device by its code, the service, a key by its label and a person by their name (the review too), as they are now", async () => {
    const w = await world(t)
    const bot = await createKey(t.db, { account: w.account, mode: 'test', label: 'Payroll bot' })
    const paired = await pairedDevice(t, w.root)
    const op = await w.operator()
    const person = await createPerson(t, { account: w.account, role: 'manager', name: 'Mara Manager' })
    const manager = (await signIn(t, person)).client()

    // The tablet checks the operator in an hour ago; the service closes the forgotten shift; the
    // bot sets the check-out; the manager, signed in, approves.
    const checkedInAt = Date.now() - HOUR
    const scan = await created(
      paired.api.post<Scan>('/v1/scans', {
        operator_id: op.id,
        device_id: paired.device.code,
        time: new Date(checkedInAt).toISOString(),
        direction: 'in',
      }),
    )
    const sessionId = scan.session_id as string
    const sweep = new ForgottenCheckOutSweep(t.db, { intervalMs: 60_000 }, { error: () => undefined })
    expect(await atTime(checkedInAt + 17 * HOUR, () => sweep.sweep())).toBe(1)
    await ok(
      t.client(bot.secret).patch(`/v1/sessions/${sessionId}`, {
        check_out: { time: new Date(checkedInAt + 30 * 60_000).toISOString() },
      }),
    )
    const approved = await ok(manager.post<Session>(`/v1/sessions/${sessionId}/approve`))
    expect(approved.reviewed_by).toBe(person.userId)

    const device = { type: 'device', id: paired.device.id, name: paired.device.code }
    const service = { type: 'service', id: SERVICE_KEY_ID, name: 'Attendance service' }
    const history = await revisionsOf(w.api, sessionId)
    expect(history.map((r) => [r.action, r.key_id, r.key_label, r.actor])).toEqual([
      ['approved', person.userId, null, { type: 'user', id: person.userId, name: 'Mara Manager' }],
      ['updated', bot.id, 'Payroll bot', { type: 'api_key', id: bot.id, name: 'Payroll bot' }],
      ['closed', SERVICE_KEY_ID, null, service],
      ['checked_in', paired.keyId, null, device],
    ])

    // As they are now: a key unlabelled, a person renamed, a device deleted (its code gone with it).
    await setKeyLabel(t.db, bot.id, null)
    await t.db.updateTable('users').set({ name: 'Mara M. Manager' }).where('id', '=', person.userId).execute()
    await ok(w.root.delete(`/v1/devices/${paired.device.id}`))
    expect((await revisionsOf(manager, sessionId)).map((r) => r.actor.name)).toEqual([
      'Mara M. Manager',
      null,
      'Attendance service',
      null,
    ])
    // Paged one by one, each page names its own.
    expect((await revisionsOf(w.api, sessionId, '?limit=1'))[0]?.actor).toEqual({
      type: 'user',
      id: person.userId,
      name: 'Mara M. Manager',
    })
  })

  it('names the actors of a page in the same few statements however many there are (no statement per revision)', async () => {
    const w = await world(t)
    const op = await w.operator()
    const people = await Promise.all(
      [1, 2, 3].map((n) => createPerson(t, { account: w.account, role: 'manager', name: `Manager ${n}` })),
    )
    const browsers = await Promise.all(people.map((person) => signIn(t, person)))
    const keys = await Promise.all(
      [1, 2, 3].map((n) => createKey(t.db, { account: w.account, mode: 'test', label: `Key ${n}` })),
    )
    const one = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    const many = await w.session(op, '2026-11-03T08:00:00Z', '2026-11-03T16:00:00Z')
    const editors = [...browsers.map((b) => b.client()), ...keys.map((k) => t.client(k.secret))]
    for (const [n, editor] of editors.entries()) {
      await ok(w.root.patch(`/v1/sessions/${one.id}`, { notes: `edit ${n}` }))
      await ok(editor.patch(`/v1/sessions/${many.id}`, { notes: `edit ${n}` }))
    }

    const statementsOf = async (sessionId: string) => {
      let statements = 0
      const counted = t.db.withPlugin({
        transformQuery: (args) => {
          statements++
          return args.node
        },
        transformResult: async (args) => args.result,
      })
      const auth = { principalId: w.admin.id, accountId: w.accountId, livemode: false, locationIds: null }
      const revisions = await listRevisions(counted, auth, sessionId, undefined, 50)
      return { statements, actors: new Set(revisions.map((r) => r.actor.id)).size }
    }
    const single = await statementsOf(one.id)
    const several = await statementsOf(many.id)
    expect([single.actors, several.actors]).toEqual([1, 7])
    // The revisions, then the keys' labels, then the people's names: one each.
    expect(several.statements).toBeLessThanOrEqual(3)
    expect(several.statements).toBeLessThanOrEqual(single.statements + 1)
  })

  it("a pay period's closed_by: the person who closed it, null again once reopened; a key that closes it by its label", async () => {
    const w = await world(t)
    const owner = await createPerson(t, { account: w.account, role: 'payroll', name: 'Pat Payroll' })
    const payroll = (await signIn(t, owner)).client()
    const period = await created(w.period('2026-10-01', '2026-10-31'))
    expect(period.closed_by).toBeNull()

    const closed = await ok(payroll.post<PayPeriod>(`/v1/pay-periods/${period.id}/close`))
    const pat = { type: 'user', id: owner.userId, name: 'Pat Payroll' }
    expect(closed).toMatchObject({ status: 'closed', closed_by: pat })
    expect((await ok(w.api.get<PayPeriod>(`/v1/pay-periods/${period.id}`))).closed_by).toEqual(pat)
    expect((await ok(w.api.get<List<PayPeriod>>('/v1/pay-periods'))).data.map((p) => p.closed_by)).toEqual([
      pat,
    ])

    const reopened = await ok(payroll.post<PayPeriod>(`/v1/pay-periods/${period.id}/reopen`))
    expect(reopened.closed_by).toBeNull()
    const stored = await t.db
      .selectFrom('pay_periods')
      .select('closed_by')
      .where('id', '=', period.id)
      .executeTakeFirstOrThrow()
    expect(stored.closed_by).toBeNull()

    await setKeyLabel(t.db, w.admin.id, 'Root')
    expect((await ok(w.close(period.id))).closed_by).toEqual({
      type: 'api_key',
      id: w.admin.id,
      name: 'Root',
    })
  })
})
