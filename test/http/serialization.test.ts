import { describe, expect, it } from 'vitest'
import { listEnvelope, ref } from '../../src/core/schemas.js'
import { serializationSchema, serializerFactory } from '../../src/http/serialization.js'
import { Session } from '../../src/modules/sessions/schemas.js'

const session = {
  object: 'session',
  id: 'ses_1',
  operator_id: 'op_1',
  operator_ident: 'W-1',
  device_id: 'GATE-1',
  location_id: null,
  check_in: { time: '2026-01-02T08:00:00.000Z' },
  check_out: { time: '2026-01-02T16:00:00.000Z' },
  break_minutes: 30,
  breaks: [
    {
      start: { time: '2026-01-02T12:00:00.000Z' },
      end: { time: '2026-01-02T12:30:00.000Z' },
      paid: false,
      source: 'api',
    },
  ],
  notes: null,
  total_hours: 7.5,
  is_flagged: true,
  flag_reason: 'manual_api_entry',
  source: 'api',
  status: 'completed',
  work_date: '2026-01-02',
  review_status: 'pending',
  reviewed_at: null,
  reviewed_by: null,
  review_note: null,
  livemode: false,
  created: '2026-01-02T16:00:01.000Z',
  updated: '2026-01-02T16:00:01.000Z',
}

describe('response serialisation', () => {
  it('rewrites nullable unions as type lists and literal unions as enums, nothing else', () => {
    const out = serializationSchema(Session) as { properties: Record<string, Record<string, unknown>> }
    const p = out.properties
    expect(JSON.stringify(out)).not.toContain('anyOf')
    expect(p.location_id).toMatchObject({ type: ['string', 'null'] })
    expect(p.check_out).toMatchObject({
      type: ['object', 'null'],
      required: ['time'],
      additionalProperties: false,
    })
    expect(p.total_hours).toMatchObject({ type: ['number', 'null'] })
    expect(p.source).toEqual({ type: 'string', enum: ['api', 'scan'] })
    // Left alone: a union with a reference, and the input schema itself.
    const withRef = { anyOf: [{ $ref: 'Session#' }, { type: 'null' }] }
    expect(serializationSchema(withRef)).toEqual(withRef)
    expect(JSON.stringify(Session)).toContain('anyOf')
  })

  it('serialises a page of sessions as JSON.stringify does, nulls and extra fields included', () => {
    const compile = serializerFactory()({ Session }, {})
    const serialise = compile({
      method: 'GET',
      url: '/v1/sessions',
      httpStatus: '200',
      schema: listEnvelope(ref(Session)),
    })
    const open = {
      ...session,
      id: 'ses_2',
      check_out: null,
      breaks: [{ start: { time: '2026-01-02T12:00:00.000Z' }, end: null, paid: false, source: 'scan' }],
      total_hours: null,
      status: 'open',
      notes: 'n',
    }
    const page = { object: 'list', data: [session, open], has_more: false, next_cursor: null }
    expect(JSON.parse(serialise({ ...page, data: [{ ...session, extra: 1 }, open] }))).toEqual(page)
    expect(serialise(page)).toBe(JSON.stringify(page))
  })

  it('compiles a response schema once a process for the same shared schemas and options, again for others', () => {
    const route = { method: 'GET', url: '/v1/sessions/:id', httpStatus: '200', schema: ref(Session) }
    // Two apps built in one process, or another route with the same schema: the same serialiser.
    const first = serializerFactory()({ Session }, {})(route)
    expect(serializerFactory()({ Session }, {})(route)).toBe(first)
    expect(serializerFactory()({ Session }, {})({ ...route, url: '/v1/other', schema: ref(Session) })).toBe(
      first,
    )
    // Another schema, other shared schemas or other options: compiled anew, and each as its own.
    const list = serializerFactory()({ Session }, {})({ ...route, schema: listEnvelope(ref(Session)) })
    expect(list).not.toBe(first)
    const otherSession = { ...Session, properties: { ...Session.properties, extra: { type: 'string' } } }
    const withOther = serializerFactory()({ Session: otherSession }, {})(route)
    expect(withOther).not.toBe(first)
    expect(JSON.parse(withOther({ ...session, extra: 'kept' }))).toEqual({ ...session, extra: 'kept' })
    expect(JSON.parse(first({ ...session, extra: 'kept' }))).toEqual(session)
    expect(serializerFactory()({ Session }, { rounding: 'floor' })(route)).not.toBe(first)
  })
})
