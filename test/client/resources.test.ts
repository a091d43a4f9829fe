import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AttendanceClient, type Operator } from '../../packages/client/src/index.js'
import { ISO_MS } from '../helpers/assertions.js'
import { WebhookReceiver } from '../helpers/webhook-receiver.js'
import { recordingFetch, type ServedApp, serveApp, uniq } from './setup.js'

describe('AttendanceClient resources against the real API over HTTP', () => {
  let served: ServedApp
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await WebhookReceiver.start()
    served = await serveApp({ webhookAllowPrivateUrls: true })
  })
  afterAll(async () => {
    await served?.close()
    await receiver?.close()
  })

  async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
    const items: T[] = []
    for await (const item of iterator) items.push(item)
    return items
  }

  describe('client.mode', () => {
    it('is test for an sk_test_ key and live for an sk_live_ key, and each sees its own objects', async () => {
      const account = uniq('acct')
      const { client: test } = await served.client(await served.key({ account, mode: 'test' }))
      const { client: live } = await served.client(await served.key({ account, mode: 'live' }))
      expect(test.mode).toBe('test')
      expect(live.mode).toBe('live')
      const created = await live.operators.create({ ident: uniq('W') })
      expect(created.livemode).toBe(true)
      expect((await test.operators.list()).data).toEqual([])
      expect((await live.operators.list()).data.map((o) => o.id)).toEqual([created.id])
    })

    it('refuses a key that is neither sk_test_ nor sk_live_, and defaults the base URL', () => {
      expect(() => new AttendanceClient({ apiKey: 'pk_test_123' })).toThrow(TypeError)
      expect(() => new AttendanceClient({ apiKey: '' })).toThrow(TypeError)
      const client = new AttendanceClient({ apiKey: 'sk_test_abc' })
      expect(client.baseUrl).toBe('http://localhost:8080')
      expect(client.maxRetries).toBe(3)
      expect(client.timeoutMs).toBe(30_000)
      // The key is kept out of logs and serialisations of the client.
      expect(JSON.stringify(client)).not.toContain('sk_test_abc')
      expect(inspect(client, { depth: 5 })).not.toContain('sk_test_abc')
    })
  })

  it('operators: create, retrieve, update, list, iterate, del', async () => {
    const { client } = await served.client()
    const ident = uniq('W')
    const created = await client.operators.create({ ident, name: 'Ada', employee_id: 'E-1' })
    expect(created).toMatchObject({
      object: 'operator',
      ident,
      name: 'Ada',
      employee_id: 'E-1',
      is_active: true,
    })
    expect(created.id).toMatch(/^op_/)
    expect(created.created).toMatch(ISO_MS)

    expect(await client.operators.retrieve(created.id)).toEqual(created)

    const updated = await client.operators.update(created.id, { name: 'Ada Lovelace' })
    expect(updated.name).toBe('Ada Lovelace')
    expect(updated.id).toBe(created.id)

    const other = await client.operators.create({ ident: uniq('W') })
    const page = await client.operators.list({ ident })
    expect(page).toEqual({ object: 'list', data: [updated], has_more: false, next_cursor: null })
    expect((await collect(client.operators.iterate())).map((o) => o.id)).toEqual([other.id, created.id])

    const deactivated = await client.operators.del(created.id)
    expect(deactivated).toMatchObject({ id: created.id, is_active: false })
    expect((await client.operators.list({ is_active: false })).data.map((o) => o.id)).toEqual([created.id])
  })

  it('locations: create, retrieve, update, list, iterate, del', async () => {
    const { client } = await served.client()
    const created = await client.locations.create({ name: 'Depot', timezone: 'Europe/Paris' })
    expect(created).toMatchObject({
      object: 'location',
      name: 'Depot',
      timezone: 'Europe/Paris',
      address: null,
    })
    expect(await client.locations.retrieve(created.id)).toEqual(created)
    const updated = await client.locations.update(created.id, { address: '1 Quay Street' })
    expect(updated.address).toBe('1 Quay Street')
    expect((await client.locations.list({ name: 'Depot' })).data).toEqual([updated])
    expect((await collect(client.locations.iterate())).map((l) => l.id)).toEqual([created.id])
    expect(await client.locations.del(created.id)).toMatchObject({ id: created.id, deleted: true })
    expect((await client.locations.list()).data).toEqual([])
  })

  it('payRules: create, retrieve, update, list, iterate, del; an operator takes pay_rule_id', async () => {
    const { client } = await served.client()
    const created = await client.payRules.create({
      name: 'California hourly',
      is_default: true,
      overtime: { daily_minutes: 480, daily_double_minutes: 720 },
    })
    expect(created).toMatchObject({
      object: 'pay_rule',
      is_default: true,
      workweek_start: 'monday',
      rounding: { interval_minutes: 0, check_in: 'nearest', check_out: 'nearest' },
      breaks: [],
      overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: null, seventh_day: false },
    })
    expect(created.id).toMatch(/^pr_/)
    expect(await client.payRules.retrieve(created.id)).toEqual(created)
    const updated = await client.payRules.update(created.id, {
      breaks: [{ after_minutes: 360, minutes: 30, action: 'deduct' }],
    })
    expect(updated.breaks).toEqual([{ after_minutes: 360, minutes: 30, action: 'deduct' }])
    expect((await client.payRules.list()).data).toEqual([updated])
    expect((await collect(client.payRules.iterate())).map((r) => r.id)).toEqual([created.id])

    const operator = await client.operators.create({ ident: uniq('W'), pay_rule_id: created.id })
    expect(operator.pay_rule_id).toBe(created.id)
    await expect(client.payRules.del(created.id)).rejects.toMatchObject({
      status: 409,
      code: 'pay_rule_in_use',
    })
    await client.operators.update(operator.id, { pay_rule_id: null })
    expect(await client.payRules.del(created.id)).toEqual({
      object: 'pay_rule',
      id: created.id,
      deleted: true,
    })
    expect((await client.payRules.list()).data).toEqual([])
  })

  it('devices: create, retrieve, update, list, iterate, del', async () => {
    const { client } = await served.client()
    const location = await client.locations.create({ name: 'Gate' })
    const code = uniq('DEV')
    const created = await client.devices.create({ code, name: 'Reader 1', location_id: location.id })
    expect(created).toMatchObject({ object: 'device', code, name: 'Reader 1', location_id: location.id })
    expect(await client.devices.retrieve(created.id)).toEqual(created)
    const updated = await client.devices.update(created.id, { name: 'Reader 2' })
    expect(updated.name).toBe('Reader 2')
    expect((await client.devices.list({ code })).data).toEqual([updated])
    expect((await collect(client.devices.iterate({ location_id: location.id }))).map((d) => d.id)).toEqual([
      created.id,
    ])
    expect(await client.devices.del(created.id)).toMatchObject({ id: created.id, deleted: true })
  })

  it('sessions: create, retrieve, update, list, iterate, revisions, del', async () => {
    const { client } = await served.client()
    const operator = await client.operators.create({ ident: uniq('W') })
    const device = await client.devices.create({ code: uniq('DEV') })
    const created = await client.sessions.create({
      operator_ident: operator.ident,
      device_id: device.code,
      check_in: { time: '2026-01-05T08:00:00Z' },
      check_out: { time: '2026-01-05T16:30:00Z' },
      break_minutes: 30,
    })
    expect(created).toMatchObject({
      object: 'session',
      operator_id: operator.id,
      device_id: device.code,
      total_hours: 8,
      is_flagged: true,
      flag_reason: 'manual_api_entry',
      source: 'api',
      status: 'completed',
    })
    expect(await client.sessions.retrieve(created.id)).toEqual(created)

    const updated = await client.sessions.update(created.id, { check_out: { time: '2026-01-05T17:30:00Z' } })
    expect(updated).toMatchObject({ total_hours: 9, flag_reason: 'manual_api_edit' })
    expect((await client.sessions.list({ operator_id: operator.id })).data).toEqual([updated])
    expect((await collect(client.sessions.iterate())).map((s) => s.id)).toEqual([created.id])

    const revisions = await client.sessions.revisions(created.id)
    expect(revisions.object).toBe('list')
    expect(revisions.data.length).toBeGreaterThanOrEqual(2)
    expect(revisions.data.every((r) => r.session_id === created.id)).toBe(true)

    expect(await client.sessions.del(created.id)).toMatchObject({ id: created.id, deleted: true })
    expect((await client.sessions.list()).data).toEqual([])
  })

  it('scans: create, retrieve, list, iterate', async () => {
    const { client } = await served.client()
    const operator = await client.operators.create({ ident: uniq('W') })
    const device = await client.devices.create({ code: uniq('DEV') })
    const scan = await client.scans.create({ device_id: device.code, operator_ident: operator.ident })
    expect(scan).toMatchObject({ object: 'scan', result: 'checked_in', operator_id: operator.id })
    expect(scan.session_id).toMatch(/^ses_/)
    expect(await client.scans.retrieve(scan.id)).toEqual(scan)
    expect((await client.scans.list({ operator_id: operator.id })).data).toEqual([scan])
    expect((await collect(client.scans.iterate({ result: 'checked_in' }))).map((s) => s.id)).toEqual([
      scan.id,
    ])
  })

  it('webhookEndpoints: create, retrieve, update, list, iterate, rotateSecret, sendTest, del', async () => {
    const { client } = await served.client()
    const url = receiver.url(receiver.freshPath())
    const created = await client.webhookEndpoints.create({ url, enabled_events: ['operator.*'] })
    expect(created).toMatchObject({ object: 'webhook_endpoint', url, enabled_events: ['operator.*'] })
    expect(created.secret).toMatch(/^whsec_/)
    const { secret: _secret, ...endpoint } = created

    expect(await client.webhookEndpoints.retrieve(created.id)).toEqual(endpoint)
    const updated = await client.webhookEndpoints.update(created.id, { description: 'payroll' })
    expect(updated.description).toBe('payroll')
    expect((await client.webhookEndpoints.list()).data).toEqual([updated])
    expect((await collect(client.webhookEndpoints.iterate())).map((e) => e.id)).toEqual([created.id])

    const rotated = await client.webhookEndpoints.rotateSecret(created.id, { grace_hours: 1 })
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(created.secret)

    const delivery = await client.webhookEndpoints.sendTest(created.id)
    expect(delivery).toMatchObject({
      object: 'webhook_delivery',
      endpoint_id: created.id,
      event_type: 'webhook_endpoint.test',
    })

    expect(await client.webhookEndpoints.del(created.id)).toMatchObject({ id: created.id, deleted: true })
    expect((await client.webhookEndpoints.list()).data).toEqual([])
  })

  it('webhookDeliveries: retrieve, list, iterate, resend', async () => {
    const { client } = await served.client()
    const path = receiver.freshPath()
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url(path), enabled_events: ['*'] })
    const sent = await client.webhookEndpoints.sendTest(endpoint.id)

    expect(await client.webhookDeliveries.retrieve(sent.id)).toMatchObject({
      id: sent.id,
      endpoint_id: endpoint.id,
    })
    const page = await client.webhookDeliveries.list({ endpoint_id: endpoint.id })
    expect(page.data.map((d) => d.id)).toEqual([sent.id])
    expect(
      (await collect(client.webhookDeliveries.iterate({ event_id: sent.event_id }))).map((d) => d.id),
    ).toEqual([sent.id])

    // This app runs no background worker: the resend is the delivery's one attempt, made now.
    const resent = await client.webhookDeliveries.resend(sent.id)
    expect(resent).toMatchObject({ id: sent.id, status: 'succeeded' })
    expect(resent.attempts.at(-1)).toMatchObject({ kind: 'resend', status_code: 200 })
    expect(receiver.requestsTo(path)).toHaveLength(1)
  })

  it('events: retrieve, list, iterate', async () => {
    const { client } = await served.client()
    const operator = await client.operators.create({ ident: uniq('W') })
    await client.operators.update(operator.id, { name: 'Renamed' })

    const page = await client.events.list({ type: 'operator.created' })
    expect(page.data).toHaveLength(1)
    const created = page.data[0]
    if (!created) throw new Error('no operator.created event')
    expect(created).toMatchObject({ object: 'event', type: 'operator.created', livemode: false })
    expect((created.data.object as Operator).id).toBe(operator.id)
    expect(await client.events.retrieve(created.id)).toEqual(created)
    expect((await collect(client.events.iterate())).map((e) => e.type)).toEqual([
      'operator.updated',
      'operator.created',
    ])
  })

  it('iterate follows next_cursor through every page (7 objects, pages of 2: 4 requests)', async () => {
    const key = await served.key()
    const { fetch, exchanges } = recordingFetch()
    const { client } = await served.client(key, { fetch })
    const created: string[] = []
    for (let i = 0; i < 7; i++) created.push((await client.operators.create({ ident: uniq(`W${i}`) })).id)
    const newestFirst = [...created].reverse()

    const first = await client.operators.list({ limit: 2 })
    expect(first.data.map((o) => o.id)).toEqual(newestFirst.slice(0, 2))
    expect(first.has_more).toBe(true)
    expect(first.next_cursor).toEqual(expect.any(String))

    exchanges.length = 0
    const all = await collect(client.operators.iterate({ limit: 2 }))
    expect(all.map((o) => o.id)).toEqual(newestFirst)
    const pages = exchanges.map((e) => new URL(e.url))
    expect(pages).toHaveLength(4)
    expect(pages.every((u) => u.pathname === '/v1/operators' && u.searchParams.get('limit') === '2')).toBe(
      true,
    )
    expect(pages[0]?.searchParams.has('cursor')).toBe(false)
    expect(pages.slice(1).every((u) => u.searchParams.get('cursor'))).toBe(true)

    // Filters stay on every page; stopping early makes no further request.
    exchanges.length = 0
    for await (const operator of client.operators.iterate({ limit: 2, is_active: true })) {
      if (operator.id === newestFirst[2]) break
    }
    expect(exchanges).toHaveLength(2)
    expect(exchanges.every((e) => new URL(e.url).searchParams.get('is_active') === 'true')).toBe(true)
  })
})
