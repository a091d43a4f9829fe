/**
 * Named types of the API's objects and parameters, all derived from the generated OpenAPI types
 * (`generated/schema.ts`) by path and method, so regenerating after an API change updates them.
 */
import type { paths } from './generated/schema.js'

export type { components, paths } from './generated/schema.js'

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete'

/** The operation at `path` and `method` of the OpenAPI document. */
export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never

/** The JSON request body an operation accepts. */
export type RequestBodyOf<O> = O extends { requestBody?: infer R } ? JsonContent<NonNullable<R>> : never

/** The JSON body of an operation's success answer (201 for creates, 200 otherwise). */
export type ResponseOf<O> = O extends { responses: { 201: infer R } }
  ? JsonContent<R>
  : O extends { responses: { 200: infer R } }
    ? JsonContent<R>
    : never

/** The query parameters an operation accepts. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never

/** The items of a list envelope type. */
export type ListItem<L> = L extends { data: (infer Item)[] } ? Item : never

/** Every list answers this envelope; follow `next_cursor` while `has_more` is true. */
export interface ListEnvelope<T> {
  object: 'list'
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/** The error envelope of every non-2xx answer. */
export type ErrorEnvelope = JsonContent<Operation<'/v1/operators', 'post'>['responses'][422]>
export type ErrorType = ErrorEnvelope['error']['type']

/** What a DELETE of a device, location, session, pay rule or webhook endpoint answers. */
export type DeletedObject = ResponseOf<Operation<'/v1/devices/{id}', 'delete'>>

// Operators
export type Operator = ResponseOf<Operation<'/v1/operators/{id}', 'get'>>
export type OperatorCreateParams = RequestBodyOf<Operation<'/v1/operators', 'post'>>
export type OperatorUpdateParams = RequestBodyOf<Operation<'/v1/operators/{id}', 'patch'>>
export type OperatorListParams = QueryOf<Operation<'/v1/operators', 'get'>>
export type OperatorList = ResponseOf<Operation<'/v1/operators', 'get'>>

// Locations
export type Location = ResponseOf<Operation<'/v1/locations/{id}', 'get'>>
export type LocationCreateParams = RequestBodyOf<Operation<'/v1/locations', 'post'>>
export type LocationUpdateParams = RequestBodyOf<Operation<'/v1/locations/{id}', 'patch'>>
export type LocationListParams = QueryOf<Operation<'/v1/locations', 'get'>>
export type LocationList = ResponseOf<Operation<'/v1/locations', 'get'>>

// Devices
export type Device = ResponseOf<Operation<'/v1/devices/{id}', 'get'>>
export type DeviceCreateParams = RequestBodyOf<Operation<'/v1/devices', 'post'>>
export type DeviceUpdateParams = RequestBodyOf<Operation<'/v1/devices/{id}', 'patch'>>
export type DeviceListParams = QueryOf<Operation<'/v1/devices', 'get'>>
export type DeviceList = ResponseOf<Operation<'/v1/devices', 'get'>>
/** A code that pairs a device once (`XXXX-XXXX`, valid 10 minutes). */
export type DevicePairingCode = ResponseOf<Operation<'/v1/devices/{id}/pairing-codes', 'post'>>
export type DevicePairParams = RequestBodyOf<Operation<'/v1/device-pairings', 'post'>>
/** The paired device and its key, whose secret (`dk_test_…`/`dk_live_…`) is shown only here. */
export type DevicePairing = ResponseOf<Operation<'/v1/device-pairings', 'post'>>
/** What a device key learns of its device: its location, the service's clock, the PIN key. */
export type CurrentDevice = ResponseOf<Operation<'/v1/devices/current', 'get'>>

// Sessions
export type Session = ResponseOf<Operation<'/v1/sessions/{id}', 'get'>>
export type SessionCreateParams = RequestBodyOf<Operation<'/v1/sessions', 'post'>>
export type SessionUpdateParams = RequestBodyOf<Operation<'/v1/sessions/{id}', 'patch'>>
export type SessionListParams = QueryOf<Operation<'/v1/sessions', 'get'>>
export type SessionList = ResponseOf<Operation<'/v1/sessions', 'get'>>
export type SessionDeleted = ResponseOf<Operation<'/v1/sessions/{id}', 'delete'>>
export type SessionRevisionListParams = QueryOf<Operation<'/v1/sessions/{id}/revisions', 'get'>>
export type SessionRevisionList = ResponseOf<Operation<'/v1/sessions/{id}/revisions', 'get'>>
export type SessionRevision = ListItem<SessionRevisionList>
export type SessionApproveParams = RequestBodyOf<Operation<'/v1/sessions/{id}/approve', 'post'>>
export type SessionRejectParams = RequestBodyOf<Operation<'/v1/sessions/{id}/reject', 'post'>>
export type ReviewStatus = Session['review_status']

// Pay periods
export type PayPeriod = ResponseOf<Operation<'/v1/pay-periods/{id}', 'get'>>
export type PayPeriodCreateParams = RequestBodyOf<Operation<'/v1/pay-periods', 'post'>>
export type PayPeriodListParams = QueryOf<Operation<'/v1/pay-periods', 'get'>>
export type PayPeriodList = ResponseOf<Operation<'/v1/pay-periods', 'get'>>

// Pay rules
export type PayRule = ResponseOf<Operation<'/v1/pay-rules/{id}', 'get'>>
export type PayRuleCreateParams = RequestBodyOf<Operation<'/v1/pay-rules', 'post'>>
export type PayRuleUpdateParams = RequestBodyOf<Operation<'/v1/pay-rules/{id}', 'patch'>>
export type PayRuleListParams = QueryOf<Operation<'/v1/pay-rules', 'get'>>
export type PayRuleList = ResponseOf<Operation<'/v1/pay-rules', 'get'>>

// Timesheets
export type TimesheetListParams = QueryOf<Operation<'/v1/timesheets', 'get'>>
export type TimesheetList = ResponseOf<Operation<'/v1/timesheets', 'get'>>
export type TimesheetEntry = ListItem<TimesheetList>
/** The CSV has every row at once: no `limit` or `cursor`. */
export type TimesheetCsvParams = Omit<TimesheetListParams, 'limit' | 'cursor'>

// Scans
export type Scan = ResponseOf<Operation<'/v1/scans/{id}', 'get'>>
export type ScanCreateParams = RequestBodyOf<Operation<'/v1/scans', 'post'>>
export type ScanListParams = QueryOf<Operation<'/v1/scans', 'get'>>
export type ScanList = ResponseOf<Operation<'/v1/scans', 'get'>>

// Webhook endpoints
export type WebhookEndpoint = ResponseOf<Operation<'/v1/webhook-endpoints/{id}', 'get'>>
/** The create and rotate-secret answers: the endpoint with its `secret`, shown only there. */
export type WebhookEndpointWithSecret = ResponseOf<Operation<'/v1/webhook-endpoints', 'post'>>
export type WebhookEndpointCreateParams = RequestBodyOf<Operation<'/v1/webhook-endpoints', 'post'>>
export type WebhookEndpointUpdateParams = RequestBodyOf<Operation<'/v1/webhook-endpoints/{id}', 'patch'>>
export type WebhookEndpointListParams = QueryOf<Operation<'/v1/webhook-endpoints', 'get'>>
export type WebhookEndpointList = ResponseOf<Operation<'/v1/webhook-endpoints', 'get'>>
export type WebhookEndpointDeleted = ResponseOf<Operation<'/v1/webhook-endpoints/{id}', 'delete'>>
export type WebhookEndpointRotateSecretParams = RequestBodyOf<
  Operation<'/v1/webhook-endpoints/{id}/rotate-secret', 'post'>
>
export type WebhookEndpointRotated = ResponseOf<Operation<'/v1/webhook-endpoints/{id}/rotate-secret', 'post'>>
export type WebhookEndpointRecoverParams = RequestBodyOf<
  Operation<'/v1/webhook-endpoints/{id}/recover', 'post'>
>
export type WebhookRecovery = ResponseOf<Operation<'/v1/webhook-endpoints/{id}/recover', 'post'>>

// Webhook deliveries
export type WebhookDelivery = ResponseOf<Operation<'/v1/webhook-deliveries/{id}', 'get'>>
export type WebhookDeliveryListParams = QueryOf<Operation<'/v1/webhook-deliveries', 'get'>>
export type WebhookDeliveryList = ResponseOf<Operation<'/v1/webhook-deliveries', 'get'>>

// Events
export type Event = ResponseOf<Operation<'/v1/events/{id}', 'get'>>
export type EventListParams = QueryOf<Operation<'/v1/events', 'get'>>
export type EventList = ResponseOf<Operation<'/v1/events', 'get'>>

// People and access: signing in (a browser's session cookie), people and keys of an account, the audit log
export type AuthSession = ResponseOf<Operation<'/v1/auth/session', 'get'>>
/** How people sign in to the service: always e-mail and password, `sso` when single sign-on is set up. */
export type AuthMethods = ResponseOf<Operation<'/v1/auth/methods', 'get'>>
export type SignInParams = RequestBodyOf<Operation<'/v1/auth/sign-in', 'post'>>
export type ChangePasswordParams = RequestBodyOf<Operation<'/v1/auth/password', 'post'>>
export type ForgotPasswordParams = RequestBodyOf<Operation<'/v1/auth/forgot-password', 'post'>>
export type ResetPasswordParams = RequestBodyOf<Operation<'/v1/auth/reset-password', 'post'>>
export type AcceptInviteParams = RequestBodyOf<Operation<'/v1/auth/accept-invite', 'post'>>

export type User = ResponseOf<Operation<'/v1/users/{id}', 'get'>>
export type Role = User['role']
/** The create and invite answers: the user with `invite_url`, the invitation's link, shown only there. */
export type UserWithInviteUrl = ResponseOf<Operation<'/v1/users', 'post'>>
export type UserCreateParams = RequestBodyOf<Operation<'/v1/users', 'post'>>
export type UserUpdateParams = RequestBodyOf<Operation<'/v1/users/{id}', 'patch'>>
export type UserListParams = QueryOf<Operation<'/v1/users', 'get'>>
export type UserList = ResponseOf<Operation<'/v1/users', 'get'>>

export type ApiKey = ResponseOf<Operation<'/v1/api-keys/{id}', 'get'>>
/** The create answer: the key with its `secret`, shown only there. */
export type CreatedApiKey = ResponseOf<Operation<'/v1/api-keys', 'post'>>
export type ApiKeyCreateParams = RequestBodyOf<Operation<'/v1/api-keys', 'post'>>
export type ApiKeyListParams = QueryOf<Operation<'/v1/api-keys', 'get'>>
export type ApiKeyList = ResponseOf<Operation<'/v1/api-keys', 'get'>>

export type AuditLogListParams = QueryOf<Operation<'/v1/audit-log', 'get'>>
export type AuditLogList = ResponseOf<Operation<'/v1/audit-log', 'get'>>
export type AuditEntry = ListItem<AuditLogList>
