import { randomInt } from 'node:crypto'
import { expect } from 'vitest'
import type { Executor } from '../../src/db/types.js'
import type { ApiClient, TestApp } from './app.js'
import { type EventEnvelope, uniq } from './assertions.js'

/**
 * A key of an account of its own, so each test sees only its own objects and events. The
 * account's name is returned as both `name` and `account`.
 */
export async function freshAccount(t: TestApp, mode: 'test' | 'live' = 'test', account = uniq('acct')) {
  const key = await t.key({ account, mode })
  return { key, name: account, account, api: t.client(key.secret) }
}

/**
 * An active operator row written straight to the table (no event, no API): for tests of the database
 * layer that need a row to write and roll back.
 */
export async function insertOperatorRow(
  db: Executor,
  row: { id: string; account_id: string; ident: string },
) {
  await db
    .insertInto('operators')
    .values({
      ...row,
      livemode: 0,
      name: null,
      employee_id: null,
      is_active: 1,
      created_at: 1,
      updated_at: 1,
    })
    .execute()
}

/**
 * Every event of an account (both modes unless one is named; only those after `afterId` when
 * given), oldest first. The stored columns must agree with the envelope they store.
 */
export async function eventsOf(
  t: TestApp,
  accountId: string,
  livemode?: boolean,
  afterId?: string,
): Promise<EventEnvelope[]> {
  const rows = await t.db
    .selectFrom('events')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(livemode !== undefined, (q) => q.where('livemode', '=', livemode ? 1 : 0))
    .$if(afterId !== undefined, (q) => q.where('id', '>', afterId ?? ''))
    .orderBy('id')
    .execute()
  return rows.map((row) => {
    const envelope = JSON.parse(row.payload) as EventEnvelope
    // The stored bytes (what a delivery signs) are the envelope's JSON, its keys in this order.
    expect(Object.keys(envelope)).toEqual(ENVELOPE_KEYS)
    expect(row.payload).toBe(JSON.stringify(envelope))
    expect(row.id).toBe(envelope.id)
    expect(row.type).toBe(envelope.type)
    expect(row.livemode).toBe(envelope.livemode ? 1 : 0)
    expect(Number(row.created_at)).toBe(Date.parse(envelope.created))
    return envelope
  })
}

const ENVELOPE_KEYS = ['object', 'id', 'type', 'api_version', 'livemode', 'created', 'data']

/** The types of `eventsOf`, oldest first. */
export async function eventTypes(t: TestApp, accountId: string, livemode?: boolean) {
  return (await eventsOf(t, accountId, livemode)).map((e) => e.type)
}

/** A device paired through the API: the device as pairing answered it, and a client of its key. */
export interface PairedDevice {
  device: { id: string; code: string; paired: boolean; require_pin: boolean }
  secret: string
  keyId: string
  api: ApiClient
}

/**
 * Creates a device with the owner's key (`body` adds to its code), makes a pairing code and pairs
 * it with no key, as a kiosk does.
 */
export async function pairedDevice(
  t: TestApp,
  owner: ApiClient,
  body: Record<string, unknown> = {},
): Promise<PairedDevice> {
  const created = await owner.post<{ id: string }>('/v1/devices', { code: uniq('gate'), ...body })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const code = await owner.post<{ code: string }>(`/v1/devices/${created.body.id}/pairing-codes`)
  expect(code.status, JSON.stringify(code.body)).toBe(201)
  const pairing = await pairFrom<{ device: PairedDevice['device']; key: { id: string; secret: string } }>(
    t,
    code.body.code,
  )
  expect(pairing.status, JSON.stringify(pairing.body)).toBe(201)
  const { device, key } = pairing.body
  return { device, secret: key.secret, keyId: key.id, api: t.client(key.secret) }
}

/**
 * `POST /v1/device-pairings` with `code`, sent with no key from `address` (by default one of its own:
 * each kiosk is a tablet of its own, and the pairing limit counts 10 a minute per address).
 */
export function pairFrom<T = Record<string, unknown>>(
  t: TestApp,
  code: string,
  address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`,
) {
  return t.client(undefined).request<T>({
    method: 'POST',
    url: '/v1/device-pairings',
    payload: { code },
    remoteAddress: address,
  })
}
