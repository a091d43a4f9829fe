import { describe, expectTypeOf, it } from 'vitest'
import type {
  AttendanceApiError,
  AttendanceClient,
  ErrorType,
  Event,
  Operator,
  OperatorCreateParams,
  OperatorList,
  OperatorListParams,
  Session,
  SessionCreateParams,
  WebhookEndpointWithSecret,
} from '../../packages/client/src/index.js'

// These assertions are checked by `tsc` (the root typecheck includes test/): they fail the build, not the run,
// when the generated types stop describing the API the way the client's signatures promise.
describe('types derived from the generated OpenAPI types', () => {
  it('objects have their fields', () => {
    expectTypeOf<Operator['id']>().toEqualTypeOf<string>()
    expectTypeOf<Operator['ident']>().toEqualTypeOf<string>()
    expectTypeOf<Operator['name']>().toEqualTypeOf<string | null>()
    expectTypeOf<Operator['is_active']>().toEqualTypeOf<boolean>()
    expectTypeOf<Session['total_hours']>().toEqualTypeOf<number | null>()
    expectTypeOf<Session['check_in']>().toEqualTypeOf<{ time: string }>()
    expectTypeOf<WebhookEndpointWithSecret['secret']>().toEqualTypeOf<string>()
    expectTypeOf<Event['id']>().toEqualTypeOf<string>()
  })

  it('parameters are typed: required fields required, list filters optional', () => {
    expectTypeOf<OperatorCreateParams['ident']>().toEqualTypeOf<string>()
    expectTypeOf<{ name: string }>().not.toExtend<OperatorCreateParams>()
    expectTypeOf<{ ident: string }>().toExtend<OperatorCreateParams>()
    expectTypeOf<{ check_in: { time: string } }>().not.toExtend<SessionCreateParams>()
    expectTypeOf<Record<string, never>>().toExtend<OperatorListParams>()
    expectTypeOf<{ limit: number; cursor: string; is_active: boolean }>().toExtend<OperatorListParams>()
  })

  it('methods answer the generated types', () => {
    expectTypeOf<AttendanceClient['operators']['create']>().returns.toEqualTypeOf<Promise<Operator>>()
    expectTypeOf<AttendanceClient['operators']['list']>().returns.toEqualTypeOf<Promise<OperatorList>>()
    expectTypeOf<OperatorList['data']>().toEqualTypeOf<Operator[]>()
    expectTypeOf<OperatorList['next_cursor']>().toEqualTypeOf<string | null>()
    expectTypeOf<ReturnType<AttendanceClient['operators']['iterate']>>().toEqualTypeOf<
      AsyncIterableIterator<Operator>
    >()
    expectTypeOf<AttendanceClient['mode']>().toEqualTypeOf<'test' | 'live'>()
  })

  it('error types are the envelope’s', () => {
    expectTypeOf<AttendanceApiError['type']>().toEqualTypeOf<ErrorType>()
    expectTypeOf<'validation_error'>().toExtend<ErrorType>()
    expectTypeOf<'no_such_type'>().not.toExtend<ErrorType>()
  })
})
