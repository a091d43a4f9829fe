import path from 'node:path'

export type WorkerMode = 'inline' | 'off'

export interface Config {
  port: number
  host: string
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; normalised from DATABASE_URL. */
  databaseUrl: string
  redisUrl: string | undefined
  rateLimitMax: number
  rateLimitWindowMs: number
  webhookBackoffScale: number
  webhookAllowPrivateUrls: boolean
  webhookDisableThreshold: number
  webhookTimeoutMs: number
  worker: WorkerMode
  logLevel: string
}

export class ConfigError extends Error {}

const DEFAULT_SQLITE_PATH = path.join('data', 'attendance.db')

/**
 * Reads the environment once into a typed object. Nothing else in the code reads `process.env`:
 * tests build their own `Config` and hand it to `buildApp`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: readInt(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    databaseUrl: normaliseDatabaseUrl(env.DATABASE_URL),
    redisUrl: env.REDIS_URL || undefined,
    rateLimitMax: readInt(env, 'RATE_LIMIT_MAX', 100, 1, 1_000_000_000),
    rateLimitWindowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', 1000, 1, 86_400_000),
    webhookBackoffScale: readNumber(env, 'WEBHOOK_BACKOFF_SCALE', 1, 0, 1000),
    webhookAllowPrivateUrls: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    webhookDisableThreshold: readInt(env, 'WEBHOOK_DISABLE_THRESHOLD', 5, 1, 1000),
    webhookTimeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    worker: readWorker(env),
    logLevel: env.LOG_LEVEL || 'info',
  }
}

export function normaliseDatabaseUrl(raw: string | undefined): string {
  if (!raw) return `sqlite:${DEFAULT_SQLITE_PATH}`
  if (raw.startsWith('sqlite:') || raw.startsWith('postgres://') || raw.startsWith('postgresql://'))
    return raw
  throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres:// (got "${raw.split(':')[0]}:…")`)
}

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const value = readNumber(env, name, fallback, min, max)
  if (!Number.isInteger(value)) throw new ConfigError(`${name} must be a whole number`)
  return value
}

function readNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a number from ${min} to ${max} (got "${raw}")`)
  }
  return value
}

function readBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(`${name} must be true or false (got "${raw}")`)
}

function readWorker(env: NodeJS.ProcessEnv): WorkerMode {
  const raw = env.WORKER || 'inline'
  if (raw !== 'inline' && raw !== 'off') throw new ConfigError(`WORKER must be inline or off (got "${raw}")`)
  return raw
}
