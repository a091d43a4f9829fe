import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/app.js'
import { expectError, type List, type Session, type SessionRevision } from '../../helpers/assertions.js'
import { addMembership, createPerson, signIn } from '../../helpers/people.js'
import { ok, world } from '../../helpers/world.js'

/** decisions.md, "Nobody approves their own work": a person whose membership is the operator. */
describe('nobody approves their own work (self_approval)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  /** A manager of the world's account, signed in, whose membership is `operatorId` (or nobody). */
  async function manager(account: string, operatorId: string | null) {
    const person = await createPerson(t, { account, role: 'manager', operatorId })
    return (await signIn(t, person)).client()
  }

  it('a manager cannot approve or reject their own sessions (403, nothing changes); another manager can, and they can review others', async () => {
    const w = await world(t)
    const dana = await w.operator({ name: 'Dana' })
    const eli = await w.operator({ name: 'Eli' })
    const own = await w.session(dana, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    const theirs = await w.session(eli, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    const danaSignedIn = await manager(w.account, dana.id)
    const other = await manager(w.account, null)

    expectError(
      await danaSignedIn.post(`/v1/sessions/${own.id}/approve`),
      403,
      'insufficient_scope',
      'self_approval',
    )
    expectError(
      await danaSignedIn.post(`/v1/sessions/${own.id}/reject`, { note: 'Not me.' }),
      403,
      'insufficient_scope',
      'self_approval',
    )
    expect(await ok(w.api.get<Session>(`/v1/sessions/${own.id}`))).toEqual(own)
    const history = await ok(w.api.get<List<SessionRevision>>(`/v1/sessions/${own.id}/revisions`))
    expect(history.data.map((r) => r.action)).toEqual(['created'])

    // Another operator's session: Dana reviews it.
    expect(await ok(danaSignedIn.post<Session>(`/v1/sessions/${theirs.id}/approve`))).toMatchObject({
      review_status: 'approved',
    })
    // Another manager reviews Dana's.
    expect(
      await ok(other.post<Session>(`/v1/sessions/${own.id}/reject`, { note: 'Double entry.' })),
    ).toMatchObject({ review_status: 'rejected' })
    // Once rejected, still not Dana's to overturn.
    expectError(
      await danaSignedIn.post(`/v1/sessions/${own.id}/approve`),
      403,
      'insufficient_scope',
      'self_approval',
    )
  })

  it('an API key is no one: a key approves any operator’s session', async () => {
    const w = await world(t)
    const op = await w.operator()
    const session = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    await manager(w.account, op.id)
    expect(await ok(w.api.post<Session>(`/v1/sessions/${session.id}/approve`))).toMatchObject({
      review_status: 'approved',
    })
  })

  it("a membership's operator in one account is not another account's operator", async () => {
    const w = await world(t)
    const op = await w.operator()
    const session = await w.session(op, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    // The same person manages this account without being an operator here, and is one elsewhere.
    const person = await createPerson(t, { account: w.account, role: 'manager', operatorId: null })
    const elsewhere = await world(t)
    const theirOperator = await elsewhere.operator()
    await addMembership(t, person, {
      account: elsewhere.account,
      role: 'manager',
      operatorId: theirOperator.id,
    })
    const browser = await signIn(t, person)
    expect(
      await ok(browser.client(w.accountId).post<Session>(`/v1/sessions/${session.id}/approve`)),
    ).toMatchObject({ review_status: 'approved' })
    const theirs = await elsewhere.session(theirOperator, '2026-11-02T08:00:00Z', '2026-11-02T16:00:00Z')
    expectError(
      await browser.client(elsewhere.accountId).post(`/v1/sessions/${theirs.id}/approve`),
      403,
      'insufficient_scope',
      'self_approval',
    )
  })
})
