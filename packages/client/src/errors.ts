import type { ErrorEnvelope, ErrorType } from './types.js'

/** Base class of every error the client throws on purpose. */
export class AttendanceError extends Error {
  override name = 'AttendanceError'
}

export interface AttendanceApiErrorInit {
  status: number
  type: ErrorType
  message: string
  code?: string | undefined
  param?: string | undefined
  requestId?: string | undefined
  headers?: Headers | undefined
  /** The parsed response body (the error envelope, or the text of a non-JSON answer). */
  body?: unknown
}

/**
 * The API answered with an error (after any retries). `type` is the envelope's `error.type` and picks the
 * subclass: `AttendanceValidationError` for `validation_error`, `AttendanceNotFoundError` for `not_found`, ….
 */
export class AttendanceApiError extends AttendanceError {
  override name = 'AttendanceApiError'
  readonly status: number
  readonly type: ErrorType
  /** Machine-readable reason, e.g. `duplicate_ident`, `missing_param`, `invalid_cursor`. */
  readonly code: string | undefined
  /** The offending parameter, e.g. `ident` or `check_out.time`. */
  readonly param: string | undefined
  /** `req_…`: the envelope's `request_id`, equal to the `X-Request-Id` header. Quote it when reporting a problem. */
  readonly requestId: string | undefined
  readonly headers: Headers
  readonly body: unknown

  constructor(init: AttendanceApiErrorInit) {
    super(init.message)
    this.status = init.status
    this.type = init.type
    this.code = init.code
    this.param = init.param
    this.requestId = init.requestId
    this.headers = init.headers ?? new Headers()
    this.body = init.body
  }

  /** The error for a non-2xx answer: the envelope's fields, the subclass of its `type`. */
  static fromResponse(status: number, headers: Headers, body: unknown): AttendanceApiError {
    const headerRequestId = headers.get('x-request-id') ?? undefined
    const envelope = isErrorEnvelope(body) ? body.error : undefined
    const type = envelope?.type ?? typeForStatus(status)
    const init: AttendanceApiErrorInit = {
      status,
      type,
      message: envelope?.message ?? `HTTP ${status} without an error envelope`,
      code: envelope?.code,
      param: envelope?.param,
      requestId: envelope?.request_id ?? headerRequestId,
      headers,
      body,
    }
    switch (type) {
      case 'bad_request':
        return new AttendanceBadRequestError(init)
      case 'authentication_error':
        return new AttendanceAuthenticationError(init)
      case 'insufficient_scope':
        return new AttendanceInsufficientScopeError(init)
      case 'not_found':
        return new AttendanceNotFoundError(init)
      case 'conflict':
        return new AttendanceConflictError(init)
      case 'validation_error':
        return new AttendanceValidationError(init)
      case 'rate_limited':
        return new AttendanceRateLimitError(init)
      case 'api_error':
        return new AttendanceServerError(init)
      default:
        return new AttendanceApiError(init)
    }
  }
}

/** 400, 405, 413, 415: a malformed request (bad JSON, bad cursor, body too large, …). */
export class AttendanceBadRequestError extends AttendanceApiError {
  override name = 'AttendanceBadRequestError'
  declare readonly type: 'bad_request'
}

/** 401: a missing, invalid, revoked or expired key. */
export class AttendanceAuthenticationError extends AttendanceApiError {
  override name = 'AttendanceAuthenticationError'
  declare readonly type: 'authentication_error'
}

/** 403: the key lacks a scope (code `missing_scope`), the mode or a subscription. */
export class AttendanceInsufficientScopeError extends AttendanceApiError {
  override name = 'AttendanceInsufficientScopeError'
  declare readonly type: 'insufficient_scope'
}

/** 404: no such object (code `resource_missing`, param `id`) or route. */
export class AttendanceNotFoundError extends AttendanceApiError {
  override name = 'AttendanceNotFoundError'
  declare readonly type: 'not_found'
}

/** 409: `duplicate_ident`, `idempotency_key_reuse`, `idempotency_key_in_use` (retried automatically), …. */
export class AttendanceConflictError extends AttendanceApiError {
  override name = 'AttendanceConflictError'
  declare readonly type: 'conflict'
}

/** 422: a field failed validation; `param` names it, `code` says why. */
export class AttendanceValidationError extends AttendanceApiError {
  override name = 'AttendanceValidationError'
  declare readonly type: 'validation_error'
}

/** 429 after every retry: too many requests. */
export class AttendanceRateLimitError extends AttendanceApiError {
  override name = 'AttendanceRateLimitError'
  declare readonly type: 'rate_limited'

  /** The answer's `Retry-After`, in seconds. */
  get retryAfterSeconds(): number | undefined {
    const value = Number(this.headers.get('retry-after') ?? Number.NaN)
    return Number.isFinite(value) ? value : undefined
  }
}

/** 5xx after every retry. */
export class AttendanceServerError extends AttendanceApiError {
  override name = 'AttendanceServerError'
  declare readonly type: 'api_error'
}

/**
 * No answer from the API after every retry: the connection failed, was reset, or timed out (`timedOut`).
 * `cause` is the last underlying error.
 */
export class AttendanceConnectionError extends AttendanceError {
  override name = 'AttendanceConnectionError'
  readonly attempts: number
  readonly timedOut: boolean

  constructor(message: string, options: { cause: unknown; attempts: number; timedOut: boolean }) {
    super(message, { cause: options.cause })
    this.attempts = options.attempts
    this.timedOut = options.timedOut
  }
}

function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  if (body === null || typeof body !== 'object') return false
  const error = (body as { error?: unknown }).error
  return (
    error !== null &&
    typeof error === 'object' &&
    typeof (error as { type?: unknown }).type === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  )
}

/** The type of an answer that has no envelope (a proxy's 502 page, say). */
function typeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'insufficient_scope'
  if (status === 404) return 'not_found'
  if (status === 409) return 'conflict'
  if (status === 422) return 'validation_error'
  if (status === 429) return 'rate_limited'
  if (status >= 500) return 'api_error'
  return 'bad_request'
}
