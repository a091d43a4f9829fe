import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

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
    })
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls).toBe(true)
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: '0' }).webhookAllowPrivateUrls).toBe(false)
  })

  it.each([
    [{ PORT: '99999' }, 'PORT must be a whole number from 0 to 65535 (got "99999")'],
    [{ PORT: '80.5' }, 'PORT must be a whole number from 0 to 65535 (got "80.5")'],
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
