/** The closed set of error types of the spec, each with its usual HTTP status. */
export const ERROR_TYPES = {
  bad_request: 400,
  authentication_error: 401,
  insufficient_scope: 403,
  not_found: 404,
  conflict: 409,
  validation_error: 422,
  rate_limited: 429,
  api_error: 500,
} as const

export type ErrorType = keyof typeof ERROR_TYPES

export interface ErrorBody {
  type: ErrorType
  message: string
  code?: string
  param?: string
}

/**
 * The one error class services and HTTP plumbing throw. The error handler turns it into the
 * envelope; nothing else formats an error body.
 */
export class ApiError extends Error {
  readonly status: number
  readonly type: ErrorType
  readonly code: string | undefined
  readonly param: string | undefined
  /** Extra response headers, e.g. `Allow` on 405. */
  readonly headers: Record<string, string>

  constructor(
    type: ErrorType,
    message: string,
    options: { code?: string; param?: string; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.type = type
    this.status = options.status ?? ERROR_TYPES[type]
    this.code = options.code
    this.param = options.param
    this.headers = options.headers ?? {}
  }

  toBody(): ErrorBody {
    return {
      type: this.type,
      message: this.message,
      ...(this.code === undefined ? {} : { code: this.code }),
      ...(this.param === undefined ? {} : { param: this.param }),
    }
  }

  static fromBody(status: number, body: ErrorBody): ApiError {
    return new ApiError(body.type, body.message, { status, code: body.code, param: body.param })
  }
}

/** Named factories, so a code is spelled in one place. */
export const errors = {
  badRequest: (message: string, code?: string) => new ApiError('bad_request', message, { code }),
  invalidCursor: () =>
    new ApiError('bad_request', 'The cursor is malformed or belongs to another list.', {
      code: 'invalid_cursor',
      param: 'cursor',
    }),
  bodyTooLarge: (limit: number) =>
    new ApiError('bad_request', `The request body is larger than ${limit} bytes.`, {
      code: 'body_too_large',
      status: 413,
    }),
  unsupportedMediaType: (contentType: string) =>
    new ApiError('bad_request', `Content-Type "${contentType}" is not supported; send application/json.`, {
      code: 'unsupported_media_type',
      status: 415,
    }),
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    new ApiError('bad_request', `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`, {
      code: 'method_not_allowed',
      status: 405,
      headers: { allow: allowed.join(', ') },
    }),
  authentication: (message: string) => new ApiError('authentication_error', message),
  insufficientScope: (scope: string) =>
    new ApiError('insufficient_scope', `This key lacks the scope ${scope} needed for this request.`, {
      code: 'missing_scope',
    }),
  routeNotFound: (method: string, path: string) =>
    new ApiError('not_found', `Unrecognized request URL (${method} ${path}).`, { code: 'route_not_found' }),
  notFound: (resource: string, id: string) =>
    new ApiError('not_found', `No such ${resource}: '${id}'.`, { code: 'resource_missing', param: 'id' }),
  duplicateIdent: (ident: string) =>
    new ApiError('conflict', `An operator with ident '${ident}' already exists.`, {
      code: 'duplicate_ident',
      param: 'ident',
    }),
  duplicateDeviceCode: (code: string) =>
    new ApiError('conflict', `A device with code '${code}' already exists.`, {
      code: 'duplicate_device_code',
      param: 'code',
    }),
  idempotencyKeyReuse: () =>
    new ApiError(
      'conflict',
      'This Idempotency-Key was already used with a different request (method, path or body).',
      { code: 'idempotency_key_reuse' },
    ),
  idempotencyKeyInUse: () =>
    new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry later.', {
      code: 'idempotency_key_in_use',
    }),
  crossModeReference: (param: string, resource: string, value: string) =>
    new ApiError(
      'validation_error',
      `The ${resource} '${value}' exists only in the other mode; test keys reference test objects and live keys live objects.`,
      { code: 'cross_mode_reference', param },
    ),
  validation: (code: string, param: string | undefined, message: string) =>
    new ApiError('validation_error', message, { code, param }),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('rate_limited', `Too many requests; retry after ${retryAfterSeconds} s.`, {
      code: 'rate_limited',
    }),
  internal: () =>
    new ApiError('api_error', 'An unexpected error occurred. Quote the request_id when reporting it.'),
}
