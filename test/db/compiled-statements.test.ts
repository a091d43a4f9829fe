import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { statementChecks } from '../../src/db/compiled.js'
import { createKey } from '../../src/modules/keys/service.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import type { Operator } from '../helpers/assertions.js'
import { dialect } from '../helpers/database.js'
import { created, ok, world } from '../helpers/world.js'

const SRC = path.resolve(import.meta.dirname, '../../src')

/**
 * Every call of src/ that makes a precompiled statement, as `file:line`: the functions of
 * db/compiled.ts that make one (`compiled`, `compiledInsert`, `compiledInsertRows`; their calls of
 * one another inside that file are left out, as `statementChecks` names the callers) and those of
 * db/scope.ts that make them for a table (`ownedRowsBy`, `ownedRowFinder`).
 */
function statementSites(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return statementSites(file)
    if (!entry.name.endsWith('.ts') || file === path.join(SRC, 'db/compiled.ts')) return []
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        /^\s*(\*|\/\/)/.test(line) ||
        !/(?<!function )\b(compiled|compiledInsert|compiledInsertRows|ownedRowsBy|ownedRowFinder)(<[^>]*>)?\(/.test(
          line,
        )
          ? []
          : [`${path.relative(SRC, file)}:${i + 1}`],
      )
  })
}

const SITES = statementSites()

/**
 * A precompiled statement runs SQL built once with stand-ins for its values; `compiled()` builds the
 * first real query of each again from its values and refuses a difference (a `$if` on a value, which
 * a stand-in always passes, would otherwise freeze silently). Here every statement of src/ is made to
 * run through the API on the dialect under test, and each must have been confirmed so.
 */
describe('precompiled statements', () => {
  let t: TestApp
  /** Kept rather than thrown, so that the table below still says which statement failed. */
  let scenarioError: unknown

  beforeAll(async () => {
    t = await buildTestApp()
    scenarioError = await runEveryStatement(t).catch((error: unknown) => error)
  })
  afterAll(() => t.close())

  it('runs the scenario that reaches every statement', () => {
    expect(scenarioError).toBeUndefined()
  })

  it('finds the statements of src/, and each is made at one of them', () => {
    expect(SITES.length).toBeGreaterThan(20)
    const unknown = statementChecks()
      .filter((check) => check.madeAt.length > 0 && !check.madeAt.some((site) => SITES.includes(site)))
      .map((check) => check.madeAt.join(' < '))
    expect(unknown).toEqual([])
  })

  it.each(SITES)('%s: its first real query is its template', (site) => {
    const made = statementChecks().filter((check) => check.madeAt.includes(site))
    expect(made.length, 'a statement made here').toBeGreaterThan(0)
    expect(made.flatMap((check) => check.mismatch ?? [])).toEqual([])
    expect(
      made.some((check) => check.confirmed.has(dialect)),
      `run on ${dialect}`,
    ).toBe(true)
  })
})

/** Requests that between them run every precompiled statement of src/ at least once. */
async function runEveryStatement(t: TestApp): Promise<void> {
  const w = await world(t)
  const alice = await w.operator({ ident: 'ALICE', employee_id: 'E-1' })
  const bob = await w.operator({ ident: 'BOB' })
  // Idempotent creates: the claim, its completion, and the replay that reads the stored answer.
  const keyed = { 'idempotency-key': 'statements-1' }
  const carol = await created(w.root.post<Operator>('/v1/operators', { ident: 'CAROL' }, keyed))
  expect((await w.root.post('/v1/operators', { ident: 'CAROL' }, keyed)).headers['idempotent-replayed']).toBe(
    'true',
  )
  // Sessions naming each reference each way: operator by ident and id, location by name and id,
  // the device by its code (the overlap and closed-period checks, the row, its revision, events).
  const first = await created(
    w.root.post<{ id: string }>('/v1/sessions', {
      operator_ident: 'ALICE',
      device_id: 'GATE',
      location_name: 'HQ',
      check_in: { time: '2026-03-02T08:00:00Z' },
      check_out: { time: '2026-03-02T16:00:00Z' },
    }),
  )
  await created(
    w.root.post('/v1/sessions', {
      operator_id: bob.id,
      device_id: 'GATE',
      location_id: w.location.id,
      check_in: { time: '2026-03-02T08:00:00Z' },
      check_out: { time: '2026-03-02T12:00:00Z' },
    }),
  )
  await ok(w.root.patch(`/v1/sessions/${first.id}`, { notes: 'checked' }))
  await ok(w.root.get(`/v1/sessions/${first.id}`))
  await ok(w.root.get('/v1/sessions?limit=1'))
  await ok(w.root.get('/v1/sessions?operator_ident=ALICE'))
  const scan = await created(
    w.root.post<{ id: string }>('/v1/scans', {
      device_id: 'GATE',
      operator_id: carol.id,
      time: '2026-03-03T08:00:00Z',
    }),
  )
  await ok(w.root.get(`/v1/scans/${scan.id}`))
  const period = await created(w.period('2026-01-01', '2026-01-31'))
  await ok(w.root.get(`/v1/pay-periods/${period.id}`))
  await ok(w.close(period.id))
  for (const resource of [`locations/${w.location.id}`, `devices/${w.device.id}`, `operators/${alice.id}`])
    await ok(w.root.get(`/v1/${resource}`))
  // A pay rule read, changed (its row locked) and named by an operator (the rule locked for it).
  const rule = await created(w.root.post<{ id: string }>('/v1/pay-rules', { name: 'Hourly' }))
  await ok(w.root.get(`/v1/pay-rules/${rule.id}`))
  await ok(w.root.patch(`/v1/pay-rules/${rule.id}`, { name: 'Hourly, amended' }))
  await ok(w.root.patch(`/v1/operators/${bob.id}`, { pay_rule_id: rule.id }))
  // A key held to HQ names a location by name: every location of that name is read (some may be
  // elsewhere), not the two an unrestricted reference needs.
  const held = await createKey(t.db, { account: w.account, mode: 'test', locationIds: [w.location.id] })
  await created(
    t.client(held.secret).post('/v1/sessions', {
      operator_ident: 'BOB',
      device_id: 'GATE',
      location_name: 'HQ',
      check_in: { time: '2026-03-04T08:00:00Z' },
      check_out: { time: '2026-03-04T12:00:00Z' },
    }),
  )
  // A delivery looked up by id: the look-up runs whether or not the delivery exists.
  expect((await w.root.get('/v1/webhook-deliveries/whd_0000000000000000000000000')).status).toBe(404)
}
