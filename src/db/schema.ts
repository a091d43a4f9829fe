import type { Generated } from 'kysely'
import type { Weekday } from '../lib/dates.js'

/**
 * Table types for Kysely. Two portable conventions hold in every table, on both dialects:
 * instants are epoch milliseconds (`bigint` on PostgreSQL, parsed to number) and booleans are 0/1
 * integers, so one query serves SQLite and PostgreSQL alike. The row-to-API mappers convert them.
 */
export interface Database {
  settings: SettingsTable
  accounts: AccountsTable
  api_keys: ApiKeysTable
  idempotency_keys: IdempotencyKeysTable
  events: EventsTable
  operators: OperatorsTable
  locations: LocationsTable
  devices: DevicesTable
  device_pairing_codes: DevicePairingCodesTable
  pin_keys: PinKeysTable
  sessions: SessionsTable
  session_revisions: SessionRevisionsTable
  scans: ScansTable
  pay_periods: PayPeriodsTable
  pay_rules: PayRulesTable
  users: UsersTable
  memberships: MembershipsTable
  auth_sessions: AuthSessionsTable
  user_tokens: UserTokensTable
  sign_in_failures: SignInFailuresTable
  sso_identities: SsoIdentitiesTable
  audit_log: AuditLogTable
  closed_timesheet_days: ClosedTimesheetDaysTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
}

export type Flag = 0 | 1

/** A boolean as the tables store it. */
export function toFlag(value: boolean): Flag {
  return value ? 1 : 0
}

export interface SettingsTable {
  name: string
  value: string
}

export interface AccountsTable {
  id: string
  name: string
  created_at: number
}

export interface ApiKeysTable {
  id: string
  account_id: string
  livemode: Flag
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  secret_hash: string
  /** The first characters of the secret, to tell keys apart in `keys list`. */
  secret_prefix: string
  /** Comma-separated scopes. */
  scopes: string
  expires_at: number | null
  revoked_at: number | null
  created_at: number
  /** What people call the key (at most 100 characters), shown beside `key_id` in a session's history. */
  label: string | null
  /** A device key's device (migration 015): such a key scans at that device and nothing else. */
  device_id: string | null
  /** Migration 017: the locations the key is held to, comma-separated; null: every location. */
  location_ids: Generated<string | null>
}

export interface IdempotencyKeysTable {
  account_id: string
  livemode: Flag
  key: string
  /** SHA-256 of method, path and canonical body: what the key is bound to. */
  fingerprint: string
  status: 'in_flight' | 'done'
  response_status: number | null
  response_body: string | null
  created_at: number
  /** When the in-flight claim was taken; a claim older than the lease is abandoned and may be retaken. */
  locked_at: number
}

export interface EventsTable {
  id: string
  account_id: string
  livemode: Flag
  type: string
  created_at: number
  /** The whole event envelope as JSON, exactly as it is delivered and listed. */
  payload: string
  /** When the dispatcher turned the event into deliveries; null until then. */
  dispatched_at: number | null
}

export interface OperatorsTable {
  id: string
  account_id: string
  livemode: Flag
  ident: string
  name: string | null
  employee_id: string | null
  is_active: Flag
  created_at: number
  updated_at: number
  /** The pay rule of the operator (migration 010); null: the account's default rule, if any. */
  pay_rule_id: string | null
  /** Migration 015: the PIN as `scrypt$<salt>$<hash>` (base64url); null: no PIN. */
  pin_hash: string | null
  /** Wrong PINs in a row; reset by a right one and by a lockout. */
  pin_failures: Generated<number>
  /** Until when scans of this operator at PIN devices are refused after too many wrong PINs. */
  pin_locked_until: number | null
  /** Migration 017: where the operator works (what a site-restricted principal may change); null: nowhere in particular. */
  home_location_id: string | null
  /** Migration 017: employment dates (`YYYY-MM-DD`, inclusive), null when open. */
  start_date: string | null
  end_date: string | null
}

export interface LocationsTable {
  id: string
  account_id: string
  livemode: Flag
  name: string
  timezone: string
  address: string | null
  created_at: number
  updated_at: number
  /** Migration 016: a canonical BCP 47 tag (`en-GB` for the locations made before it). */
  locale: Generated<string>
}

export interface DevicesTable {
  id: string
  account_id: string
  livemode: Flag
  /** What `device_id` means in session and scan requests; unique per account and mode. */
  code: string
  name: string | null
  location_id: string | null
  created_at: number
  updated_at: number
  /** Migration 015: it holds a device key that is not revoked. */
  paired: Generated<Flag>
  /** The last request of its device key, written at most once a minute. */
  last_seen_at: number | null
  require_pin: Generated<Flag>
}

/** A one-time code that pairs a device (migration 015): only its SHA-256 is kept. */
export interface DevicePairingCodesTable {
  id: string
  account_id: string
  livemode: Flag
  device_id: string
  code_hash: string
  expires_at: number
  created_at: number
}

/** The RSA key pair of an account and mode that PINs captured offline are encrypted to. */
export interface PinKeysTable {
  account_id: string
  livemode: Flag
  /** PKCS#8 PEM; never leaves the service. */
  private_key: string
  /** The public key as a JWK (JSON text), what `GET /v1/devices/current` shows. */
  public_jwk: string
  created_at: number
}

export type SessionSource = 'api' | 'scan'
export type SessionStatus = 'open' | 'completed'

export interface SessionsTable {
  id: string
  account_id: string
  livemode: Flag
  operator_id: string
  operator_ident: string
  /** The device's code, kept as given so the session stays readable if the device is deleted. */
  device_code: string
  location_id: string | null
  check_in_at: number
  check_out_at: number | null
  break_minutes: number
  notes: string | null
  is_flagged: Flag
  flag_reason: string | null
  source: SessionSource
  status: SessionStatus
  /** Soft delete: a deleted session is gone from the API but its revisions stay readable. */
  deleted_at: number | null
  created_at: number
  updated_at: number
  /** YYYY-MM-DD: the check-in's calendar date in the location's zone (UTC without one), set when written. */
  work_date: string
  review_status: ReviewStatus
  reviewed_at: number | null
  /** The key id that approved or rejected the session. */
  reviewed_by: string | null
  review_note: string | null
  /** The break records, JSON `StoredBreak[]` (migration 011; `'[]'` when none). */
  breaks: Generated<string>
}

/**
 * One break record as `sessions.breaks` stores it: epoch milliseconds, `end` null while a break a
 * scan opened goes on, `source` who recorded it.
 */
export interface StoredBreak {
  start: number
  end: number | null
  paid: boolean
  source: SessionSource
}

export type ReviewStatus = 'pending' | 'not_required' | 'approved' | 'rejected'

export interface PayPeriodsTable {
  id: string
  account_id: string
  livemode: Flag
  /** Inclusive calendar dates, YYYY-MM-DD. */
  start_date: string
  end_date: string
  status: 'open' | 'closed'
  closed_at: number | null
  created_at: number
  updated_at: number
  /** While closed: the stored timesheet's totals as JSON (`PayPeriodTotals`); null while open. */
  totals: string | null
  /** Migration 017: the principal (key or person) that closed it; null while open or closed before. */
  closed_by: string | null
}

/**
 * One operator's day as a closed period stored it (migration 012): exact milliseconds, so weeks
 * that span a closed and an open period still add exact values and round once.
 */
export interface ClosedTimesheetDaysTable {
  pay_period_id: string
  account_id: string
  livemode: Flag
  operator_id: string
  date: string
  pay_rule_id: string | null
  counted_ms: number
  pending_ms: number
  rejected_ms: number
  regular_ms: number
  overtime_ms: number
  double_time_ms: number
  auto_break_ms: number
  sessions: number
  open_sessions: number
  missed_break: Flag
  pending_review: Flag
}

export type { Weekday }
export type RoundingMode = 'nearest' | 'up' | 'down'

export interface PayRulesTable {
  id: string
  account_id: string
  livemode: Flag
  name: string
  /** At most one default per account and mode (a partial unique index). */
  is_default: Flag
  workweek_start: Weekday
  rounding_interval_minutes: number
  rounding_check_in: RoundingMode
  rounding_check_out: RoundingMode
  /** JSON: the `breaks` list as the API shows it, `[{after_minutes, minutes, action}]`. */
  breaks: string
  overtime_daily_minutes: number | null
  overtime_daily_double_minutes: number | null
  overtime_weekly_minutes: number | null
  overtime_seventh_day: Flag
  created_at: number
  updated_at: number
}

export interface SessionRevisionsTable {
  id: string
  session_id: string
  account_id: string
  livemode: Flag
  /** created, updated, deleted, checked_out (by a scan), closed (max shift exceeded). */
  action: string
  /** The API key that made the change. */
  key_id: string
  created_at: number
  /** The session as the API showed it before and after the change (JSON), null where none. */
  before: string | null
  after: string | null
}

export interface ScansTable {
  id: string
  account_id: string
  livemode: Flag
  device_code: string
  operator_id: string
  operator_ident: string
  scanned_at: number
  direction: 'auto' | 'in' | 'out' | 'break_start' | 'break_end'
  result: 'checked_in' | 'checked_out' | 'break_started' | 'break_ended' | 'flagged'
  flag_reason: string | null
  session_id: string | null
  created_at: number
  /** Migration 015: the device's own id of the scan, unique per device. */
  client_scan_id: string | null
  /** The correction applied to the device's clock (a batch's `sent_at`); null: none. */
  clock_skew_ms: number | null
  /** The operator's name when scanned: what the clock shows the worker. */
  operator_name: string | null
}

export interface WebhookEndpointsTable {
  id: string
  account_id: string
  livemode: Flag
  url: string
  description: string | null
  /** JSON array of patterns: exact types, `<resource>.*`, `*`. */
  enabled_events: string
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  /** The signing secret. Kept in clear: signing needs it, unlike API keys, which only need checking. */
  secret: string
  /** The secret before the last rotation, still signed with until it expires. */
  previous_secret: string | null
  previous_secret_expires_at: number | null
  /** Deliveries that exhausted their attempts since the last 2xx. */
  consecutive_failures: number
  created_at: number
  updated_at: number
}

export interface WebhookDeliveriesTable {
  id: string
  account_id: string
  livemode: Flag
  endpoint_id: string
  event_id: string
  event_type: string
  status: 'pending' | 'succeeded' | 'failed'
  /**
   * Scheduled attempts made in the delivery's current round (resends are not counted): a recover
   * starts a new round of up to 6, appended to the same delivery's attempts.
   */
  scheduled_attempts: number
  next_attempt_at: number | null
  /** A worker's lease on the delivery while it sends; an expired lease can be taken over. */
  locked_until: number | null
  created_at: number
  updated_at: number
}

export interface WebhookAttemptsTable {
  id: string
  delivery_id: string
  kind: 'scheduled' | 'resend'
  attempted_at: number
  status_code: number | null
  duration_ms: number
  error: string | null
  response_excerpt: string | null
}

/** A person (migration 017): one login, whatever the accounts they belong to. */
export interface UsersTable {
  id: string
  email: string
  /** The e-mail lower-cased: unique in the service. */
  email_key: string
  name: string
  /** argon2id (PHC string); null for a person who has not set one (invited, or SSO only). */
  password_hash: string | null
  created_at: number
  updated_at: number
}

export type Role = 'owner' | 'admin' | 'payroll' | 'manager' | 'viewer'
export type MembershipStatus = 'invited' | 'active' | 'deactivated'

/** A person in one account: their role, sites and worker record there. */
export interface MembershipsTable {
  id: string
  account_id: string
  user_id: string
  role: Role
  /** Comma-separated location ids; null: every location. */
  location_ids: string | null
  operator_id: string | null
  status: MembershipStatus
  last_sign_in_at: number | null
  created_at: number
  updated_at: number
}

/** A signed-in browser: the cookie's SHA-256, never the cookie. */
export interface AuthSessionsTable {
  id: string
  token_hash: string
  user_id: string
  created_at: number
  /** The idle timeout counts from here (written at most once a minute). */
  last_used_at: number
  /** The absolute end: 7 days after sign-in. */
  expires_at: number
  ended_at: number | null
}

/** What a link's token does: join an account, set a new password, or make the first owner. */
export type TokenKind = 'invite' | 'reset' | 'owner'

/** An invitation, password-reset or owner set-up link's token, by its SHA-256; single use. */
export interface UserTokensTable {
  token_hash: string
  kind: TokenKind
  /** Null for the owner's set-up link (decisions.md, "Owner set-up"): its accept names the e-mail. */
  user_id: string | null
  /** An invitation's account; null for a reset. */
  account_id: string | null
  expires_at: number
  used_at: number | null
  created_at: number
}

/** One failed sign-in, for the lockouts (decisions.md, "Sign-in"). */
export interface SignInFailuresTable {
  email_key: string
  ip: string
  created_at: number
}

/** An OpenID Connect identity (`iss`, `sub`) linked to a person. */
export interface SsoIdentitiesTable {
  issuer: string
  subject: string
  user_id: string
  created_at: number
}

/** Who did what to people and keys; never a token, password or secret. */
export interface AuditLogTable {
  id: string
  account_id: string | null
  type: string
  actor_type: 'api_key' | 'user' | 'device' | 'service'
  actor_id: string
  actor_name: string | null
  target_type: 'user' | 'api_key' | null
  target_id: string | null
  ip: string | null
  created_at: number
}
