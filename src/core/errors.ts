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

/**
 * Every machine-readable `code` the API answers with, and the type and status it always comes
 * with. A code is spelled here and in its factory below, nowhere else; the OpenAPI envelope's
 * `code` is this list, so the generated client types name every code.
 */
export const ERROR_CODES = {
  invalid_json: { type: 'bad_request', status: 400 },
  invalid_body: { type: 'bad_request', status: 400 },
  invalid_cursor: { type: 'bad_request', status: 400 },
  malformed_url: { type: 'bad_request', status: 400 },
  malformed_request: { type: 'bad_request', status: 400 },
  missing_host_header: { type: 'bad_request', status: 400 },
  request_timeout: { type: 'bad_request', status: 408 },
  expectation_failed: { type: 'bad_request', status: 417 },
  headers_too_large: { type: 'bad_request', status: 431 },
  method_not_allowed: { type: 'bad_request', status: 405 },
  body_too_large: { type: 'bad_request', status: 413 },
  unsupported_media_type: { type: 'bad_request', status: 415 },
  missing_account: { type: 'bad_request', status: 400 },
  missing_mode: { type: 'bad_request', status: 400 },
  invalid_credentials: { type: 'authentication_error', status: 401 },
  sso_failed: { type: 'authentication_error', status: 401 },
  missing_scope: { type: 'insufficient_scope', status: 403 },
  device_mismatch: { type: 'insufficient_scope', status: 403 },
  location_restricted: { type: 'insufficient_scope', status: 403 },
  self_approval: { type: 'insufficient_scope', status: 403 },
  csrf_token_invalid: { type: 'insufficient_scope', status: 403 },
  sso_user_unknown: { type: 'insufficient_scope', status: 403 },
  self_change: { type: 'insufficient_scope', status: 403 },
  route_not_found: { type: 'not_found', status: 404 },
  resource_missing: { type: 'not_found', status: 404 },
  duplicate_ident: { type: 'conflict', status: 409 },
  duplicate_device_code: { type: 'conflict', status: 409 },
  open_session_exists: { type: 'conflict', status: 409 },
  overlapping_session: { type: 'conflict', status: 409 },
  endpoint_disabled: { type: 'conflict', status: 409 },
  session_open: { type: 'conflict', status: 409 },
  check_out_missing: { type: 'conflict', status: 409 },
  period_closed: { type: 'conflict', status: 409 },
  period_not_over: { type: 'conflict', status: 409 },
  pending_reviews: { type: 'conflict', status: 409 },
  overlapping_period: { type: 'conflict', status: 409 },
  pay_rule_in_use: { type: 'conflict', status: 409 },
  idempotency_key_reuse: { type: 'conflict', status: 409 },
  idempotency_key_in_use: { type: 'conflict', status: 409 },
  email_in_use: { type: 'conflict', status: 409 },
  last_owner: { type: 'conflict', status: 409 },
  not_invited: { type: 'conflict', status: 409 },
  missing_param: { type: 'validation_error', status: 422 },
  unknown_param: { type: 'validation_error', status: 422 },
  invalid_type: { type: 'validation_error', status: 422 },
  invalid_value: { type: 'validation_error', status: 422 },
  invalid_timestamp: { type: 'validation_error', status: 422 },
  invalid_time_range: { type: 'validation_error', status: 422 },
  time_in_future: { type: 'validation_error', status: 422 },
  break_exceeds_duration: { type: 'validation_error', status: 422 },
  conflicting_params: { type: 'validation_error', status: 422 },
  conflicting_param: { type: 'validation_error', status: 422 },
  invalid_break: { type: 'validation_error', status: 422 },
  invalid_date_range: { type: 'validation_error', status: 422 },
  cross_mode_reference: { type: 'validation_error', status: 422 },
  unknown_operator: { type: 'validation_error', status: 422 },
  unknown_device: { type: 'validation_error', status: 422 },
  unknown_location: { type: 'validation_error', status: 422 },
  ambiguous_location: { type: 'validation_error', status: 422 },
  unknown_pay_rule: { type: 'validation_error', status: 422 },
  invalid_timezone: { type: 'validation_error', status: 422 },
  invalid_event_type: { type: 'validation_error', status: 422 },
  invalid_url: { type: 'validation_error', status: 422 },
  invalid_pairing_code: { type: 'validation_error', status: 422 },
  invalid_pin: { type: 'validation_error', status: 422 },
  rate_limited: { type: 'rate_limited', status: 429 },
  pin_locked: { type: 'rate_limited', status: 429 },
  sign_in_locked: { type: 'rate_limited', status: 429 },
  not_ready: { type: 'api_error', status: 503 },
  database_timeout: { type: 'api_error', status: 503 },
} as const satisfies Record<string, { type: ErrorType; status: number }>

export type ErrorCode = keyof typeof ERROR_CODES

export interface ErrorBody {
  type: ErrorType
  message: string
  code?: ErrorCode
  param?: string
}

interface ErrorOptions {
  param?: string | undefined
  /** Extra response headers, e.g. `Allow` on 405. */
  headers?: Record<string, string>
}

/**
 * The one error class services and HTTP plumbing throw. The error handler turns it into the
 * envelope; nothing else formats an error body. Build one through `errors`, never directly.
 */
export class ApiError extends Error {
  readonly headers: Record<string, string>
  readonly param: string | undefined

  private constructor(
    readonly type: ErrorType,
    readonly status: number,
    readonly code: ErrorCode | undefined,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.param = options.param
    this.headers = options.headers ?? {}
  }

  static coded(code: ErrorCode, message: string, options?: ErrorOptions): ApiError {
    const { type, status } = ERROR_CODES[code]
    return new ApiError(type, status, code, message, options)
  }

  /** The few errors that carry no code: a refused key, an unexpected failure, a framework 4xx. */
  static uncoded(type: ErrorType, message: string, status: number = ERROR_TYPES[type]): ApiError {
    return new ApiError(type, status, undefined, message)
  }

  /** An error answer stored earlier (an idempotent replay), thrown again as it was. */
  static fromBody(status: number, body: ErrorBody): ApiError {
    return new ApiError(body.type, status, body.code, body.message, { param: body.param })
  }

  toBody(): ErrorBody {
    return {
      type: this.type,
      message: this.message,
      ...(this.code === undefined ? {} : { code: this.code }),
      ...(this.param === undefined ? {} : { param: this.param }),
    }
  }
}

const coded = ApiError.coded

/** Named factories: the only way the code builds an error. */
export const errors = {
  invalidJson: (message = 'The body is not valid JSON.') => coded('invalid_json', message),
  invalidBody: () => coded('invalid_body', 'The request body must be a JSON object.'),
  invalidCursor: () =>
    coded('invalid_cursor', 'The cursor is malformed or belongs to another list.', { param: 'cursor' }),
  malformedUrl: () => coded('malformed_url', 'The request URL is malformed.'),
  malformedRequest: () =>
    coded('malformed_request', 'The request is not valid HTTP/1.1 (request line, header name or value).'),
  missingHostHeader: () =>
    coded('missing_host_header', 'HTTP/1.1 requires a Host header (RFC 9112, section 3.2); send one.'),
  requestTimeout: () => coded('request_timeout', 'The request was not received in time.'),
  expectationFailed: (expect: string) =>
    coded('expectation_failed', `Expect: ${expect} is not supported; send the request without it.`),
  headersTooLarge: () => coded('headers_too_large', 'The request headers are too large.'),
  bodyTooLarge: (limit: number) => coded('body_too_large', `The request body is larger than ${limit} bytes.`),
  unsupportedMediaType: (contentType: string) =>
    coded('unsupported_media_type', `Content-Type "${contentType}" is not supported; send application/json.`),
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    coded('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`, {
      headers: { allow: allowed.join(', ') },
    }),
  /** A Fastify or Node client error (4xx) with no more precise meaning, answered with its status. */
  requestRejected: (status: number, message: string) => ApiError.uncoded('bad_request', message, status),
  authentication: (message: string) => ApiError.uncoded('authentication_error', message),
  insufficientScope: (scope: string) =>
    coded('missing_scope', `This key lacks the scope ${scope} needed for this request.`),
  /** A principal held to sites changing an operator it may read but that is homed at another location. */
  operatorHomedElsewhere: (id: string) =>
    coded(
      'location_restricted',
      `Operator ${id} is homed at a location this key or person is not held to: it may read the operator, not change it.`,
    ),
  /** A principal held to sites, on a route about the whole account (decisions.md, "Sites"). */
  locationRestricted: () =>
    coded(
      'location_restricted',
      'This request is about the whole account; a key or person held to some locations cannot make it.',
    ),
  /** A person approving, rejecting or excusing the work of the operator that is themselves. */
  selfApproval: () =>
    coded('self_approval', 'Nobody approves, rejects or excuses their own work; ask another manager.'),
  csrfTokenInvalid: () =>
    coded(
      'csrf_token_invalid',
      'A signed-in change must carry X-CSRF-Token equal to the csrf_token of GET /v1/auth/session.',
    ),
  ssoUserUnknown: () =>
    coded(
      'sso_user_unknown',
      'No person with this verified e-mail is invited to or active in an account here; ask an owner for an invitation.',
    ),
  /** A sign-in by SSO that cannot complete; `reason` is for the log (the browser sees the code). */
  ssoFailed: (reason: string) =>
    coded('sso_failed', `The sign-in with SSO did not complete: ${reason}. Start it again.`),
  missingAccount: () =>
    coded(
      'missing_account',
      'You belong to several accounts: name one in the Attendance-Account header (an id from GET /v1/auth/session).',
    ),
  missingMode: () =>
    coded('missing_mode', 'A signed-in request names its mode in the Attendance-Mode header: test or live.'),
  invalidCredentials: () => coded('invalid_credentials', 'The e-mail or the password is wrong.'),
  signInLocked: (retryAfterSeconds: number) =>
    coded('sign_in_locked', 'Too many failed sign-ins; try again later or reset the password.', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  emailInUse: () =>
    coded('email_in_use', 'A person with this e-mail already belongs to this account.', { param: 'email' }),
  /** A person changing their own role, sites, worker record or status (decisions.md, "People and memberships"). */
  selfChange: (param: string) =>
    coded(
      'self_change',
      'Nobody changes their own role, sites, worker record or status; ask another owner.',
      { param },
    ),
  /** A new invitation link for a membership that is not (or no longer) invited. */
  notInvited: (id: string, status: string) =>
    coded(
      'not_invited',
      `User ${id} is ${status}, not invited: a new link is for invitations only (a forgotten password is reset with POST /v1/auth/forgot-password).`,
    ),
  lastOwner: () =>
    coded(
      'last_owner',
      'The last active owner of an account cannot be demoted or deactivated; make another owner first.',
    ),
  /** A device key on a route it cannot use: it scans at its device and reads its device, no more. */
  deviceKeyRefused: () =>
    coded(
      'missing_scope',
      'A device key can only record scans at its own device and read GET /v1/devices/current.',
    ),
  /** An API key on a route that answers a device key only. */
  deviceKeyRequired: () =>
    coded('missing_scope', 'This request needs a device key (dk_test_… or dk_live_…).'),
  deviceMismatch: (code: string) =>
    coded('device_mismatch', `This device key belongs to another device than '${code}'.`, {
      param: 'device_id',
    }),
  routeNotFound: (method: string, path: string) =>
    coded('route_not_found', `Unrecognized request URL (${method} ${path}).`),
  notFound: (resource: string, id: string) =>
    coded('resource_missing', `No such ${resource}: '${id}'.`, { param: 'id' }),
  duplicateIdent: (ident: string) =>
    coded('duplicate_ident', `An operator with ident '${ident}' already exists.`, { param: 'ident' }),
  duplicateDeviceCode: (code: string) =>
    coded('duplicate_device_code', `A device with code '${code}' already exists.`, { param: 'code' }),
  openSessionExists: (ident: string) =>
    coded('open_session_exists', `Operator '${ident}' already has an open session.`, {
      param: 'operator_id',
    }),
  /** `otherId` undefined: a session the caller may not see (held to other sites), never named. */
  overlappingSession: (otherId: string | undefined) =>
    coded(
      'overlapping_session',
      `This session would overlap ${otherId === undefined ? 'another session' : `session ${otherId}`} of the same operator; an operator cannot be in two sessions at once.`,
      { param: 'check_in.time' },
    ),
  endpointDisabled: (id: string) =>
    coded('endpoint_disabled', `Webhook endpoint ${id} is disabled; re-enable it first.`),
  sessionOpen: (id: string) =>
    coded('session_open', `Session ${id} is still open; only a completed session can be reviewed.`),
  periodClosed: (periodId: string, date: string) =>
    coded(
      'period_closed',
      `The work date ${date} lies in the closed pay period ${periodId}; reopen the period to change its sessions.`,
    ),
  checkOutMissing: (id: string) =>
    coded(
      'check_out_missing',
      `Session ${id} has no check-out (it was closed for an over-long shift); set its check-out by PATCH /v1/sessions/${id} first, then approve it.`,
    ),
  periodNotOver: (endDate: string, closableAt: string, timeZone: string) =>
    coded(
      'period_not_over',
      `The period ends on ${endDate}; it can be closed from ${closableAt}, once the next day has begun in every time zone of the account's locations (${timeZone} last).`,
    ),
  pendingReviews: (counts: { pending: number; open: number; withoutCheckOut: number }) =>
    coded(
      'pending_reviews',
      `The period cannot be closed: of the sessions whose work date is in it, ${counts.pending} pending, ${counts.open} still open, ${counts.withoutCheckOut} without a check-out (set it by PATCH, then approve).`,
    ),
  overlappingPeriod: (otherId: string) =>
    coded('overlapping_period', `The dates overlap the pay period ${otherId}.`, { param: 'start_date' }),
  idempotencyKeyReuse: () =>
    coded(
      'idempotency_key_reuse',
      'This Idempotency-Key was already used with a different request (method, path or body).',
    ),
  idempotencyKeyInUse: () =>
    coded(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry later.',
    ),
  missingParam: (param: string, message = `Missing required param: ${param}.`) =>
    coded('missing_param', message, { param }),
  unknownParam: (param: string) => coded('unknown_param', `Received unknown param: ${param}.`, { param }),
  invalidType: (param: string, expected: string) =>
    coded('invalid_type', `Invalid type for ${param}: expected ${expected}.`, { param }),
  invalidValue: (param: string | undefined, message: string) => coded('invalid_value', message, { param }),
  invalidTimestamp: (param: string) =>
    coded(
      'invalid_timestamp',
      `${param} must be an ISO-8601 timestamp with a zone designator, e.g. 2026-11-02T08:00:00Z.`,
      { param },
    ),
  invalidTimeRange: (param: string, message: string) => coded('invalid_time_range', message, { param }),
  timeInFuture: (param: string, toleranceMinutes: number) =>
    coded(
      'time_in_future',
      `${param} is more than ${toleranceMinutes} minutes after the server's clock; attendance is recorded after it happens.`,
      { param },
    ),
  breakExceedsDuration: () =>
    coded('break_exceeds_duration', 'break_minutes must not exceed the length of the session in minutes.', {
      param: 'break_minutes',
    }),
  conflictingParams: (param: string, message: string) => coded('conflicting_params', message, { param }),
  /**
   * A field that cannot be given beside another field or the resource's state (`break_minutes` with
   * break records), as the spec names it; `conflicting_params` is two references naming different
   * objects.
   */
  conflictingParam: (param: string, message: string) => coded('conflicting_param', message, { param }),
  invalidBreak: (index: number, message: string) =>
    coded('invalid_break', message, { param: `breaks[${index}]` }),
  invalidDateRange: (param: string, message: string) => coded('invalid_date_range', message, { param }),
  crossModeReference: (param: string, resource: string, value: string) =>
    coded(
      'cross_mode_reference',
      `The ${resource} '${value}' exists only in the other mode; test keys reference test objects and live keys live objects.`,
      { param },
    ),
  unknownOperator: (param: string, value: string) =>
    coded('unknown_operator', `No such operator: '${value}'.`, { param }),
  unknownDevice: (param: string, code: string) =>
    coded('unknown_device', `No device has the code '${code}'.`, { param }),
  unknownLocation: (param: string, value: string) =>
    coded('unknown_location', `No such location: '${value}'.`, { param }),
  ambiguousLocation: (param: string, name: string) =>
    coded('ambiguous_location', `More than one location is named '${name}'; use location_id.`, { param }),
  unknownPayRule: (param: string, value: string) =>
    coded('unknown_pay_rule', `No such pay rule: '${value}'.`, { param }),
  payRuleInUse: (id: string, operatorId: string) =>
    coded(
      'pay_rule_in_use',
      `Pay rule ${id} is the rule of operator ${operatorId} (and perhaps others); give them another rule, or none, before deleting it.`,
    ),
  invalidTimezone: (value: string) =>
    coded('invalid_timezone', `Unknown IANA time zone: '${value}' (e.g. Europe/Paris).`, {
      param: 'timezone',
    }),
  invalidEventType: (param: string, pattern: string) =>
    coded(
      'invalid_event_type',
      `'${pattern}' is not an event type, a <resource>.* wildcard of a known resource, or *.`,
      { param },
    ),
  invalidUrl: (message: string) => coded('invalid_url', message, { param: 'url' }),
  /** One answer for an unknown, used or expired code, so an answer says nothing about which. */
  invalidPairingCode: () =>
    coded('invalid_pairing_code', 'This pairing code is unknown, used or expired; make a new one.', {
      param: 'code',
    }),
  invalidPin: (param: 'pin' | 'pin_ciphertext') =>
    coded('invalid_pin', 'The PIN is wrong; nothing was recorded.', { param }),
  pinLocked: (retryAfterSeconds: number) =>
    coded(
      'pin_locked',
      `Too many wrong PINs for this operator; retry after ${retryAfterSeconds} s or ask a manager.`,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    ),
  rateLimited: (retryAfterSeconds: number) =>
    coded('rate_limited', `Too many requests; retry after ${retryAfterSeconds} s.`),
  /** GET /readyz: the service cannot serve requests yet (or any more); `reason` says why. */
  notReady: (reason: string) => coded('not_ready', `The service is not ready: ${reason}.`),
  /** A statement past DATABASE_STATEMENT_TIMEOUT_MS or SQLite's busy timeout, or a database out of reach. */
  databaseTimeout: () =>
    coded('database_timeout', 'The database did not answer in time; retry the request later.'),
  internal: () =>
    ApiError.uncoded('api_error', 'An unexpected error occurred. Quote the request_id when reporting it.'),
}
