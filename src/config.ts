import { isIP } from 'node:net'
import path from 'node:path'
import { type Static, type TSchema, Type } from 'typebox'
import Value from 'typebox/value'
import { withoutPassword } from './lib/url.js'

export type WorkerMode = 'inline' | 'off'

export interface Config {
  port: number
  host: string
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`, as DATABASE_URL gives it. */
  databaseUrl: string
  redisUrl: string | undefined
  /** TRUST_PROXY: the reverse proxies' addresses and CIDR ranges, whose `X-Forwarded-For` is believed. */
  trustProxy: string[] | undefined
  rateLimitMax: number
  rateLimitWindowMs: number
  webhookBackoffScale: number
  webhookAllowPrivateUrls: boolean
  webhookDisableThreshold: number
  webhookTimeoutMs: number
  worker: WorkerMode
  /** METRICS_PORT: where `GET /metrics` listens (http/metrics.ts); undefined: no metrics. */
  metricsPort: number | undefined
  metricsHost: string
  /**
   * How often the worker sweeps forgotten check-outs (not an environment variable: the decisions
   * promise a closure within a minute, and only tests want it faster).
   */
  sessionSweepIntervalMs: number
  /** EVENT_RETENTION_DAYS: events and webhook deliveries older than this are deleted (modules/events/retention.ts). */
  eventRetentionDays: number
  /** How often the worker runs a retention pass (not an environment variable: only tests want another). */
  retentionIntervalMs: number
  logLevel: string
  /** SHUTDOWN_GRACE_MS: after SIGTERM, how long the process still serves while `/readyz` says 503. */
  shutdownGraceMs: number
  /** DATABASE_STARTUP_TIMEOUT_MS: how long a start retries a database it cannot reach. */
  databaseStartupTimeoutMs: number
  /** DATABASE_STATEMENT_TIMEOUT_MS: the longest a PostgreSQL statement (or a wait for a connection) may take. */
  databaseStatementTimeoutMs: number
  /** FIRST_KEY_FILE: where the first-start key is written when stdout is not a terminal. */
  firstKeyFile: string
  /** PUBLIC_URL: where links (invitations, resets, SSO's callback) point; no trailing slash. */
  publicUrl: string
  /** SMTP_URL (`smtp://` or `smtps://`): invitations and resets are e-mailed; undefined: not e-mailed. */
  smtpUrl: string | undefined
  /** SMTP_FROM: the sender of those e-mails. */
  smtpFrom: string
  /** OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, all three or none: "Sign in with SSO". */
  oidc: { issuer: string; clientId: string; clientSecret: string } | undefined
}

const SESSION_SWEEP_INTERVAL_MS = 15_000
/** A pass deletes what aged past the window since the last one: minutes' worth of rows, not days'. */
const RETENTION_INTERVAL_MS = 5 * 60_000

export class ConfigError extends Error {}

/** pino's levels, and `silent` (no log at all). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A host name as RFC 1123 spells one: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i

/** A whole number in [minimum, maximum]; `multipleOf` rather than `Type.Integer`, which TypeBox would truncate. */
const WholeNumber = (minimum: number, maximum: number, fallback: number) =>
  Type.Number({ multipleOf: 1, minimum, maximum, default: fallback })

/** The environment as README.md documents it: every variable, its default and its bounds. */
export const Environment = Type.Object({
  PORT: WholeNumber(0, 65535, 8080),
  // An IP address or a host name (checked in loadConfig); a name that does not resolve stops the
  // start at listen, with a message naming HOST (listenFailure).
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:|postgres://|postgresql://)',
    default: `sqlite:${path.join('data', 'attendance.db')}`,
    expected: 'start with sqlite: or postgres://',
  }),
  REDIS_URL: Type.Optional(Type.String()),
  TRUST_PROXY: Type.Optional(Type.String()),
  RATE_LIMIT_MAX: WholeNumber(1, 1_000_000_000, 100),
  RATE_LIMIT_WINDOW_MS: WholeNumber(1, 86_400_000, 1000),
  WEBHOOK_BACKOFF_SCALE: Type.Number({ minimum: 0, maximum: 1000, default: 1 }),
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Union(
    [Type.Literal('true'), Type.Literal('1'), Type.Literal('false'), Type.Literal('0')],
    { default: 'false' },
  ),
  WEBHOOK_DISABLE_THRESHOLD: WholeNumber(1, 1000, 5),
  WEBHOOK_TIMEOUT_MS: WholeNumber(1, 600_000, 10_000),
  // At least 15 days: a recover reaches 14 days back and must find every event and delivery there.
  EVENT_RETENTION_DAYS: WholeNumber(15, 36_500, 30),
  WORKER: Type.Union([Type.Literal('inline'), Type.Literal('off')], { default: 'inline' }),
  METRICS_PORT: Type.Optional(Type.Number({ multipleOf: 1, minimum: 0, maximum: 65535 })),
  // Loopback by default: the metrics say how busy the service is and need no key, so they are
  // opened wider (0.0.0.0 for a scraper on another host) only on purpose.
  METRICS_HOST: Type.String({ default: '127.0.0.1' }),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  SHUTDOWN_GRACE_MS: WholeNumber(0, 300_000, 5000),
  DATABASE_STARTUP_TIMEOUT_MS: WholeNumber(0, 3_600_000, 60_000),
  DATABASE_STATEMENT_TIMEOUT_MS: WholeNumber(100, 3_600_000, 30_000),
  FIRST_KEY_FILE: Type.String({ default: path.join('data', 'first-key.txt') }),
  PUBLIC_URL: Type.Optional(
    Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$', expected: 'be an http:// or https:// URL' }),
  ),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://', expected: 'start with smtp:// or smtps://' })),
  SMTP_FROM: Type.String({ default: 'Attendance <no-reply@localhost>' }),
  OIDC_ISSUER: Type.Optional(
    Type.String({ pattern: '^https?://', expected: 'be an http:// or https:// URL' }),
  ),
  OIDC_CLIENT_ID: Type.Optional(Type.String()),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String()),
})
type Environment = Static<typeof Environment>
type Variable = keyof Environment

/**
 * Reads the environment once into a typed object. Nothing else in the code reads `process.env`:
 * tests build their own `Config` and hand it to `buildApp`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const values = parseEnvironment(env)
  // The metrics are never served on the API's port (0 is not a port but "pick a free one", for each).
  if (values.METRICS_PORT !== undefined && values.METRICS_PORT !== 0 && values.METRICS_PORT === values.PORT)
    throw new ConfigError(`METRICS_PORT must differ from PORT (got "${values.METRICS_PORT}" for both)`)
  for (const name of ['HOST', 'METRICS_HOST'] as const)
    if (isIP(values[name]) === 0 && !HOST_NAME.test(values[name]))
      throw new ConfigError(`${name} must be an IP address or a host name (got "${values[name]}")`)
  // Read by ioredis, which takes anything (`notaurl` is a host name) and then retries it forever.
  if (values.REDIS_URL !== undefined && !/^rediss?:$/.test(URL.parse(values.REDIS_URL)?.protocol ?? ''))
    throw new ConfigError(
      `REDIS_URL must be a redis:// or rediss:// URL (got "${shown('REDIS_URL', values.REDIS_URL)}")`,
    )
  return {
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    redisUrl: values.REDIS_URL,
    trustProxy: trustedProxies(values.TRUST_PROXY),
    rateLimitMax: values.RATE_LIMIT_MAX,
    rateLimitWindowMs: values.RATE_LIMIT_WINDOW_MS,
    webhookBackoffScale: values.WEBHOOK_BACKOFF_SCALE,
    webhookAllowPrivateUrls:
      values.WEBHOOK_ALLOW_PRIVATE_URLS === 'true' || values.WEBHOOK_ALLOW_PRIVATE_URLS === '1',
    webhookDisableThreshold: values.WEBHOOK_DISABLE_THRESHOLD,
    webhookTimeoutMs: values.WEBHOOK_TIMEOUT_MS,
    worker: values.WORKER,
    metricsPort: values.METRICS_PORT,
    metricsHost: values.METRICS_HOST,
    sessionSweepIntervalMs: SESSION_SWEEP_INTERVAL_MS,
    eventRetentionDays: values.EVENT_RETENTION_DAYS,
    retentionIntervalMs: RETENTION_INTERVAL_MS,
    logLevel: values.LOG_LEVEL,
    shutdownGraceMs: values.SHUTDOWN_GRACE_MS,
    databaseStartupTimeoutMs: values.DATABASE_STARTUP_TIMEOUT_MS,
    databaseStatementTimeoutMs: values.DATABASE_STATEMENT_TIMEOUT_MS,
    firstKeyFile: values.FIRST_KEY_FILE,
    publicUrl: (values.PUBLIC_URL ?? `http://localhost:${values.PORT}`).replace(/\/+$/, ''),
    smtpUrl: values.SMTP_URL,
    smtpFrom: values.SMTP_FROM,
    oidc: oidcSettings(values),
  }
}

/** SSO needs all three of its variables: two of them is a mistake worth stopping the start for. */
function oidcSettings(values: Environment): Config['oidc'] {
  const { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret } = values
  if (issuer === undefined && clientId === undefined && clientSecret === undefined) return undefined
  if (issuer === undefined || clientId === undefined || clientSecret === undefined)
    throw new ConfigError('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together or not at all')
  return { issuer, clientId, clientSecret }
}

/**
 * The variables of `Environment`, defaults filled in, or a ConfigError whose one-line message names the
 * first bad variable. An empty variable counts as unset (as `VAR= npm start` means). Numbers are read
 * with `Number()` rather than TypeBox's `Value.Convert`, which would also read "true" as 1.
 */
function parseEnvironment(env: NodeJS.ProcessEnv): Environment {
  const given: Record<string, string | number> = {}
  for (const [name, schema] of Object.entries(Environment.properties) as [Variable, TSchema][]) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    given[name] = (schema as { type?: unknown }).type === 'number' ? Number(raw) : raw
  }
  const values = Value.Default(Environment, given)
  if (Value.Check(Environment, values)) return values
  const first = Value.Errors(Environment, values)[0]
  const name = (first?.instancePath.split('/')[1] ?? '') as Variable
  throw new ConfigError(
    `${name} must ${expectation(Environment.properties[name])} (got "${shown(name, env[name] ?? '')}")`,
  )
}

/** What a variable must be, in words, from its schema. */
function expectation(schema: TSchema): string {
  const { type, minimum, maximum, multipleOf, anyOf, expected } = schema as {
    type?: string
    minimum?: number
    maximum?: number
    multipleOf?: number
    anyOf?: { const: string }[]
    expected?: string
  }
  if (expected !== undefined) return expected
  if (anyOf !== undefined) return `be one of ${anyOf.map((option) => option.const).join(', ')}`
  const kind = multipleOf === 1 ? 'a whole number' : 'a number'
  if (type === 'number') return `be ${kind} from ${minimum} to ${maximum}`
  return `be a ${type}`
}

/**
 * TRUST_PROXY's addresses and CIDR ranges (`10.0.0.0/8`, `::1`), comma-separated. Neither `true`
 * nor a hop count: either believes the `X-Forwarded-For` of a client that reaches the service
 * directly, so any client could choose the address it is limited by (and Fastify 5 ignores a hop count).
 */
function trustedProxies(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined
  const entries = raw.split(',').map((entry) => entry.trim())
  const bad = entries.find((entry) => !isAddressOrRange(entry))
  if (bad !== undefined)
    throw new ConfigError(
      `TRUST_PROXY must be the proxies' IP addresses or CIDR ranges, comma-separated, not true or a hop count (got "${bad}")`,
    )
  return entries
}

/** An IP address, or one with a prefix length of at least 1 (`/0` would be every address). */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/')
  const version = isIP(address)
  if (version === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  return /^\d+$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (version === 4 ? 32 : 128)
}

/**
 * The configuration in effect, for the one line each long-running process logs at its start: every
 * variable by name, with the value in use (the default where it is unset or empty, null where an
 * optional one is unset), and no secret: a URL's password (and a `password` parameter) is `***`.
 */
export function configurationSummary(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const values: Partial<Record<Variable, unknown>> = parseEnvironment(env)
  return Object.fromEntries(
    (Object.keys(Environment.properties) as Variable[]).map((name) => {
      const value = values[name] ?? null
      if (name.endsWith('_SECRET') && value !== null) return [name, '***']
      return [name, name.endsWith('_URL') && typeof value === 'string' ? withoutPassword(value) : value]
    }),
  )
}

/** URLs may carry a password: a bad one is repeated up to its scheme only. */
function shown(name: Variable, raw: string): string {
  if (name.endsWith('_SECRET')) return '***'
  return name.endsWith('_URL') ? `${raw.split(':')[0]}:…` : raw
}
