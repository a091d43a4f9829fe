import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { ConfigError, configurationSummary, Environment, LOG_LEVELS, loadConfig } from '../src/config.js'
import { listenFailure } from '../src/lib/listen-failure.js'

describe('loadConfig', () => {
  it('fills in every default of the README table', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:data/attendance.db',
      redisUrl: undefined,
      rateLimitMax: 100,
      rateLimitWindowMs: 1000,
      webhookBackoffScale: 1,
      webhookAllowPrivateUrls: false,
      webhookDisableThreshold: 5,
      webhookTimeoutMs: 10_000,
      worker: 'inline',
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      sessionSweepIntervalMs: 15_000,
      eventRetentionDays: 30,
      retentionIntervalMs: 300_000,
      logLevel: 'info',
      shutdownGraceMs: 5000,
      databaseStartupTimeoutMs: 60_000,
      databaseStatementTimeoutMs: 30_000,
      firstKeyFile: 'data/first-key.txt',
      publicUrl: 'http://localhost:8080',
      smtpUrl: undefined,
      smtpFrom: 'Attendance <no-reply@localhost>',
      oidc: undefined,
    })
  })

  it('reads every variable, and an empty one as unset', () => {
    expect(
      loadConfig({
        PORT: '0',
        HOST: '',
        DATABASE_URL: 'postgresql://db/x',
        REDIS_URL: 'redis://cache:6379',
        RATE_LIMIT_MAX: '7',
        RATE_LIMIT_WINDOW_MS: '60000',
        WEBHOOK_BACKOFF_SCALE: '0.01',
        WEBHOOK_ALLOW_PRIVATE_URLS: '1',
        WEBHOOK_DISABLE_THRESHOLD: '3',
        WEBHOOK_TIMEOUT_MS: '500',
        EVENT_RETENTION_DAYS: '15',
        WORKER: 'off',
        METRICS_PORT: '9464',
        METRICS_HOST: '0.0.0.0',
        LOG_LEVEL: 'silent',
        SHUTDOWN_GRACE_MS: '0',
        DATABASE_STARTUP_TIMEOUT_MS: '0',
        DATABASE_STATEMENT_TIMEOUT_MS: '100',
        FIRST_KEY_FILE: '/run/attendance/first-key',
        PUBLIC_URL: 'https://attendance.example.com/',
        SMTP_URL: 'smtps://mailer:pw@mail.example.com',
        SMTP_FROM: 'Time <time@example.com>',
        OIDC_ISSUER: 'https://id.example.com/realms/plant',
        OIDC_CLIENT_ID: 'attendance',
        OIDC_CLIENT_SECRET: 'sso-secret',
      }),
    ).toEqual({
      port: 0,
      host: '0.0.0.0',
      databaseUrl: 'postgresql://db/x',
      redisUrl: 'redis://cache:6379',
      rateLimitMax: 7,
      rateLimitWindowMs: 60_000,
      webhookBackoffScale: 0.01,
      webhookAllowPrivateUrls: true,
      webhookDisableThreshold: 3,
      webhookTimeoutMs: 500,
      worker: 'off',
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
      sessionSweepIntervalMs: 15_000,
      eventRetentionDays: 15,
      retentionIntervalMs: 300_000,
      logLevel: 'silent',
      shutdownGraceMs: 0,
      databaseStartupTimeoutMs: 0,
      databaseStatementTimeoutMs: 100,
      firstKeyFile: '/run/attendance/first-key',
      publicUrl: 'https://attendance.example.com',
      smtpUrl: 'smtps://mailer:pw@mail.example.com',
      smtpFrom: 'Time <time@example.com>',
      oidc: {
        issuer: 'https://id.example.com/realms/plant',
        clientId: 'attendance',
        clientSecret: 'sso-secret',
      },
    })
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls).toBe(true)
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: '0' }).webhookAllowPrivateUrls).toBe(false)
  })

  it.each([
    [{ PORT: '99999' }, 'PORT must be a whole number from 0 to 65535 (got "99999")'],
    [{ PORT: '80.5' }, 'PORT must be a whole number from 0 to 65535 (got "80.5")'],
    [{ SHUTDOWN_GRACE_MS: '-1' }, 'SHUTDOWN_GRACE_MS must be a whole number from 0 to 300000 (got "-1")'],
    [
      { DATABASE_STATEMENT_TIMEOUT_MS: '0' },
      'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number from 100 to 3600000 (got "0")',
    ],
    [{ RATE_LIMIT_MAX: 'true' }, 'RATE_LIMIT_MAX must be a whole number from 1 to 1000000000 (got "true")'],
    [{ WEBHOOK_BACKOFF_SCALE: '-1' }, 'WEBHOOK_BACKOFF_SCALE must be a number from 0 to 1000 (got "-1")'],
    [
      { WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' },
      'WEBHOOK_ALLOW_PRIVATE_URLS must be one of true, 1, false, 0 (got "yes")',
    ],
    [{ WORKER: 'both' }, 'WORKER must be one of inline, off (got "both")'],
    [{ METRICS_PORT: '65536' }, 'METRICS_PORT must be a whole number from 0 to 65535 (got "65536")'],
    // Never on the API's port.
    [{ PORT: '9000', METRICS_PORT: '9000' }, 'METRICS_PORT must differ from PORT (got "9000" for both)'],
    [{ METRICS_PORT: '8080' }, 'METRICS_PORT must differ from PORT (got "8080" for both)'],
    // Below 15 days a 14-day recover could miss events retention deleted.
    [
      { EVENT_RETENTION_DAYS: '14' },
      'EVENT_RETENTION_DAYS must be a whole number from 15 to 36500 (got "14")',
    ],
    // The URL may hold a password: only its scheme is repeated.
    [
      { DATABASE_URL: 'mysql://u:secret@db/x' },
      'DATABASE_URL must start with sqlite: or postgres:// (got "mysql:…")',
    ],
    // ioredis would read `notaurl` as a host name and retry it forever.
    [{ REDIS_URL: 'notaurl' }, 'REDIS_URL must be a redis:// or rediss:// URL (got "notaurl:…")'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL (got "localhost:…")'],
    [
      { PUBLIC_URL: 'attendance.example.com' },
      'PUBLIC_URL must be an http:// or https:// URL (got "attendance.example.com:…")',
    ],
    [
      { SMTP_URL: 'mail.example.com:25' },
      'SMTP_URL must start with smtp:// or smtps:// (got "mail.example.com:…")',
    ],
    // SSO needs its three variables; the secret is never repeated.
    [
      { OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'attendance' },
      'OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together or not at all',
    ],
    [
      { REDIS_URL: 'redis://:s3cret@cache:port' },
      'REDIS_URL must be a redis:// or rediss:// URL (got "redis:…")',
    ],
    // Trusting every peer, or a hop count, would let any client choose the address it is limited by.
    ...['true', '*', '1', '0.0.0.0/0', '10.0.0.0/33', '10.0.0.300', '127.0.0.1,', 'loopback'].map(
      (value): [NodeJS.ProcessEnv, string] => [
        { TRUST_PROXY: value },
        "TRUST_PROXY must be the proxies' IP addresses or CIDR ranges",
      ],
    ),
  ])('refuses %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  it('never repeats the password of a refused REDIS_URL', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://:s3cret@cache:port' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') }),
    )
  })

  it('reads TRUST_PROXY as a list of addresses and ranges, unset by default', () => {
    expect(loadConfig({}).trustProxy).toBeUndefined()
    expect(loadConfig({ TRUST_PROXY: '10.0.0.7' }).trustProxy).toEqual(['10.0.0.7'])
    expect(loadConfig({ TRUST_PROXY: ' 127.0.0.1, ::1 ,10.0.0.0/8,fd00::/8' }).trustProxy).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      'fd00::/8',
    ])
    expect(loadConfig({ REDIS_URL: 'rediss://user:pw@cache.internal:6380/2' }).redisUrl).toBe(
      'rediss://user:pw@cache.internal:6380/2',
    )
  })
})

describe('LOG_LEVEL and HOST', () => {
  it("LOG_LEVEL is one of pino's levels or silent; anything else is refused naming it", () => {
    expect(LOG_LEVELS).toEqual([...Object.keys(pino.levels.values).sort(byLevel), 'silent'])
    for (const level of LOG_LEVELS) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level)
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(
      new ConfigError(
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
      ),
    )
  })

  it('HOST and METRICS_HOST are an IP address or a host name', () => {
    for (const host of ['0.0.0.0', '::', '::1', '10.1.2.3', 'localhost', 'api.internal', 'not-a-host'])
      expect(loadConfig({ HOST: host, METRICS_HOST: host })).toMatchObject({ host, metricsHost: host })
    for (const name of ['HOST', 'METRICS_HOST'])
      for (const host of ['http://example.com', 'example.com:80', '-x', 'a b', 'a..b', 'under_score'])
        expect(() => loadConfig({ [name]: host })).toThrow(
          new ConfigError(`${name} must be an IP address or a host name (got "${host}")`),
        )
  })

  it.each([
    ['ENOTFOUND', 'HOST "not-a-host" does not resolve to an address (getaddrinfo ENOTFOUND not-a-host)'],
    ['EADDRNOTAVAIL', 'HOST "not-a-host" is not an address of this machine'],
    ['EADDRINUSE', 'PORT 80 is already in use on HOST "not-a-host"'],
    ['EACCES', 'PORT 80 on HOST "not-a-host" needs privileges this process lacks'],
  ])('a listen that fails with %s names the variables in one line', (code, message) => {
    const error = Object.assign(new Error(`getaddrinfo ${code} not-a-host`), { code })
    const failure = listenFailure(error, {
      host: 'not-a-host',
      port: 80,
      hostVariable: 'HOST',
      portVariable: 'PORT',
    })
    expect(failure.message).toContain(message)
    expect(failure.message).not.toContain('\n')
  })
})

describe('the configuration a process logs at its start', () => {
  it('names every variable with the value in use: defaults for unset and empty ones, null for unset optional ones', () => {
    const summary = configurationSummary({ PORT: '', LOG_LEVEL: 'warn' })
    expect(Object.keys(summary)).toEqual(Object.keys(Environment.properties))
    expect(summary).toMatchObject({ PORT: 8080, LOG_LEVEL: 'warn', REDIS_URL: null, METRICS_PORT: null })
  })

  it('never shows a password: a URL keeps its user, host and database, its password is ***', () => {
    const summary = configurationSummary({
      DATABASE_URL: 'postgres://app:s3cret@db.internal:5432/attendance?options=-c%20search_path%3Dx',
      REDIS_URL: 'rediss://:r3dis@cache:6380/2',
    })
    expect(summary.DATABASE_URL).toBe(
      'postgres://app:***@db.internal:5432/attendance?options=-c%20search_path%3Dx',
    )
    expect(summary.REDIS_URL).toBe('rediss://:***@cache:6380/2')
    expect(configurationSummary({ DATABASE_URL: 'postgres://db/x?password=s3cret' }).DATABASE_URL).toBe(
      'postgres://db/x?password=***',
    )
    expect(configurationSummary({ DATABASE_URL: 'sqlite:/var/lib/attendance/a.db' }).DATABASE_URL).toBe(
      'sqlite:/var/lib/attendance/a.db',
    )
    expect(JSON.stringify(summary)).not.toMatch(/s3cret|r3dis/)
  })

  it('never shows the SSO client secret nor an SMTP password', () => {
    const summary = configurationSummary({
      OIDC_ISSUER: 'https://id.example.com',
      OIDC_CLIENT_ID: 'attendance',
      OIDC_CLIENT_SECRET: 'sso-s3cret',
      SMTP_URL: 'smtps://mailer:m4il@mail.example.com',
    })
    expect(summary.OIDC_CLIENT_SECRET).toBe('***')
    expect(summary.SMTP_URL).toBe('smtps://mailer:***@mail.example.com')
    expect(JSON.stringify(summary)).not.toMatch(/sso-s3cret|m4il/)
  })
})

describe('README.md documents every variable with its bounds', () => {
  const readme = fs.readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8')
  const rows = readme.split('\n').filter((line) => line.startsWith('| `'))

  it.each(Object.entries(Environment.properties))('%s', (name, schema) => {
    const row = rows.find((line) => (line.split(' | ')[0] ?? '').includes(`\`${name}\``))
    expect(row, `README.md has no row for ${name}`).toBeDefined()
    const { minimum, maximum, anyOf } = schema as {
      minimum?: number
      maximum?: number
      anyOf?: { const: string }[]
    }
    if (minimum !== undefined) expect(row).toContain(`${minimum}–${maximum}`)
    for (const option of anyOf ?? []) expect(row).toContain(`\`${option.const}\``)
  })
})

/** pino's levels from the most severe. */
function byLevel(a: string, b: string): number {
  return (pino.levels.values[b] ?? 0) - (pino.levels.values[a] ?? 0)
}
