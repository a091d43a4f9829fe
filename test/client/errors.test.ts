import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AttendanceApiError,
  AttendanceAuthenticationError,
  AttendanceBadRequestError,
  AttendanceClient,
  AttendanceConflictError,
  AttendanceError,
  AttendanceInsufficientScopeError,
  AttendanceNotFoundError,
  AttendanceValidationError,
  type OperatorCreateParams,
} from '../../packages/client/src/index.js'
import { caught, recordingFetch, type ServedApp, serveApp, uniq } from './setup.js'

describe('typed errors from real API answers', () => {
  let served: ServedApp

  beforeAll(async () => {
    served = await serveApp()
  })
  afterAll(async () => {
    await served?.close()
  })

  /** The client for a fresh account plus the X-Request-Id of its most recent answer. */
  async function recordedClient(keyOptions?: Parameters<ServedApp['key']>[0]) {
    const { fetch, exchanges } = recordingFetch()
    const { client } = await served.client(await served.key(keyOptions), { fetch, maxRetries: 0 })
    const lastRequestId = () => exchanges.at(-1)?.responseHeaders?.get('x-request-id')
    return { client, exchanges, lastRequestId }
  }

  it('422 missing_param: AttendanceValidationError with type, code, param and the X-Request-Id', async () => {
    const { client, lastRequestId } = await recordedClient()
    const error = await caught(() =>
      client.operators.create({ name: 'No ident' } as unknown as OperatorCreateParams),
    )
    expect(error).toBeInstanceOf(AttendanceValidationError)
    expect(error).toBeInstanceOf(AttendanceApiError)
    expect(error).toBeInstanceOf(AttendanceError)
    expect(error).toBeInstanceOf(Error)
    const apiError = error as AttendanceValidationError
    expect(apiError).toMatchObject({
      name: 'AttendanceValidationError',
      status: 422,
      type: 'validation_error',
      code: 'missing_param',
      param: 'ident',
    })
    expect(apiError.message).toMatch(/ident/)
    expect(apiError.requestId).toMatch(/^req_/)
    expect(apiError.requestId).toBe(lastRequestId())
    expect(apiError.headers.get('x-request-id')).toBe(apiError.requestId)
    expect(apiError.body).toEqual({
      error: expect.objectContaining({ type: 'validation_error', request_id: apiError.requestId }),
    })
  })

  it('422 with a nested param and a domain code (invalid_time_range on check_out.time)', async () => {
    const { client, lastRequestId } = await recordedClient()
    const operator = await client.operators.create({ ident: uniq('W') })
    const device = await client.devices.create({ code: uniq('DEV') })
    const error = await caught(() =>
      client.sessions.create({
        operator_id: operator.id,
        device_id: device.code,
        check_in: { time: '2026-03-01T10:00:00Z' },
        check_out: { time: '2026-03-01T09:00:00Z' },
      }),
    )
    expect(error).toBeInstanceOf(AttendanceValidationError)
    expect(error).toMatchObject({
      code: 'invalid_time_range',
      param: 'check_out.time',
      requestId: lastRequestId(),
    })
  })

  it('409 duplicate_ident and idempotency_key_reuse: AttendanceConflictError', async () => {
    const { client, lastRequestId } = await recordedClient()
    const ident = uniq('W')
    await client.operators.create({ ident })
    const duplicate = await caught(() => client.operators.create({ ident }))
    expect(duplicate).toBeInstanceOf(AttendanceConflictError)
    expect(duplicate).toMatchObject({ status: 409, type: 'conflict', code: 'duplicate_ident' })
    expect((duplicate as AttendanceApiError).requestId).toBe(lastRequestId())

    const idempotencyKey = uniq('key')
    await client.operators.create({ ident: uniq('W') }, { idempotencyKey })
    const reuse = await caught(() => client.operators.create({ ident: uniq('W') }, { idempotencyKey }))
    expect(reuse).toBeInstanceOf(AttendanceConflictError)
    expect(reuse).toMatchObject({ status: 409, code: 'idempotency_key_reuse', requestId: lastRequestId() })
  })

  it('404 resource_missing: AttendanceNotFoundError naming the id param', async () => {
    const { client, lastRequestId } = await recordedClient()
    const error = await caught(() => client.sessions.retrieve('ses_does_not_exist'))
    expect(error).toBeInstanceOf(AttendanceNotFoundError)
    expect(error).toMatchObject({
      status: 404,
      type: 'not_found',
      code: 'resource_missing',
      param: 'id',
      requestId: lastRequestId(),
    })
  })

  it('400 invalid_cursor: AttendanceBadRequestError', async () => {
    const { client, lastRequestId } = await recordedClient()
    const error = await caught(() => client.events.list({ cursor: 'not-a-cursor' }))
    expect(error).toBeInstanceOf(AttendanceBadRequestError)
    expect(error).toMatchObject({
      status: 400,
      type: 'bad_request',
      code: 'invalid_cursor',
      requestId: lastRequestId(),
    })
  })

  it('401 for an unknown key: AttendanceAuthenticationError', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = new AttendanceClient({ apiKey: 'sk_test_not_a_real_key', baseUrl: served.baseUrl, fetch })
    const error = await caught(() => client.operators.list())
    expect(error).toBeInstanceOf(AttendanceAuthenticationError)
    expect(error).toMatchObject({ status: 401, type: 'authentication_error' })
    expect((error as AttendanceApiError).requestId).toBe(
      exchanges.at(-1)?.responseHeaders?.get('x-request-id'),
    )
    expect(exchanges).toHaveLength(1)
  })

  it('403 missing_scope: AttendanceInsufficientScopeError', async () => {
    const { client, lastRequestId } = await recordedClient({ scopes: ['operators:read'] })
    expect((await client.operators.list()).object).toBe('list')
    const error = await caught(() => client.operators.create({ ident: uniq('W') }))
    expect(error).toBeInstanceOf(AttendanceInsufficientScopeError)
    expect(error).toMatchObject({
      status: 403,
      type: 'insufficient_scope',
      code: 'missing_scope',
      requestId: lastRequestId(),
    })
  })

  it('the type property discriminates without instanceof', async () => {
    const { client } = await recordedClient()
    const error = await caught(() => client.operators.retrieve('op_nope'))
    if (!(error instanceof AttendanceApiError)) throw error
    switch (error.type) {
      case 'not_found':
        expect(error.code).toBe('resource_missing')
        break
      default:
        throw new Error(`unexpected type ${error.type}`)
    }
  })
})
