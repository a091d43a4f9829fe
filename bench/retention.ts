/**
 * Whether retention keeps up with the fastest writes: rows a pass deletes per second against the rows
 * creates make per second, on each database. Not a test (tests check what a pass deletes and keeps,
 * on a stepped clock: test/modules/events/retention.test.ts): `npm run bench:retention`.
 *
 * Per dialect (BENCH_DIALECTS, comma-separated, default sqlite,postgres):
 *   1. creates: BENCH_CREATES (default 3000) `POST /v1/operators` through `app.inject`,
 *      BENCH_CONCURRENCY (default 8) in flight, as fast as the API takes them, with one webhook
 *      endpoint subscribed: each create makes an event, and the inline worker a delivery and its
 *      attempt (to a receiver on 127.0.0.1 that answers 200). Creates per second.
 *   2. retention: once every delivery has succeeded, every event and delivery is aged past the
 *      window, and one pass with the service's batch (RETENTION_BATCH) and pause between batches
 *      (RETENTION_BATCH_PAUSE_MS) deletes them. Events (each with its delivery and attempt) deleted
 *      per second.
 *
 * Prints both rates and their ratio: above 1, a pass deletes a second's worth of the fastest writes
 * in less than a second. Exits 1 when a pass left a row it should have deleted.
 *
 *   BENCH_POSTGRES_URL default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test; the
 *                      PostgreSQL run uses a schema of its own, dropped afterwards
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildApp } from '../src/app.js'
import { type Config, loadConfig } from '../src/config.js'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { EventRetention, retentionWindowMs } from '../src/modules/events/retention.js'
import { createKey } from '../src/modules/keys/service.js'
import { deliveryRetention } from '../src/modules/webhooks/service.js'
import { rowCount } from '../test/helpers/rows.js'
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js'
import { benchSchema } from './postgres-schema.js'

const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim())
const CREATES = intEnv('BENCH_CREATES', 3000)
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 8)
const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const DAY_MS = 86_400_000

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number ≥ 1`)
  return value
}

interface Result {
  dialect: string
  createsPerSecond: number
  eventsDeletedPerSecond: number
  deleted: { events: number; deliveries: number; attempts: number }
  left: number
}

async function run(dialect: string, databaseUrl: string, receiver: WebhookReceiver): Promise<Result> {
  const config: Config = {
    ...loadConfig({}),
    databaseUrl,
    logLevel: 'silent',
    rateLimitMax: 1_000_000_000,
    worker: 'inline',
    webhookAllowPrivateUrls: true,
  }
  const { db } = openServiceDatabase(config)
  await migrateToLatest(db)
  const key = await createKey(db, { account: 'bench-retention', mode: 'test' })
  const app = await buildApp({ config, db })
  await app.ready()
  const authorization = `Bearer ${key.secret}`
  const endpoint = await app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: { authorization },
    payload: { url: receiver.url(receiver.freshPath()), enabled_events: ['operator.created'] },
  })
  if (endpoint.statusCode !== 201) throw new Error(`endpoint: ${endpoint.statusCode} ${endpoint.body}`)

  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CREATES) {
        const i = next++
        const res = await app.inject({
          method: 'POST',
          url: '/v1/operators',
          headers: { authorization },
          payload: { ident: `op-${i}` },
        })
        if (res.statusCode !== 201) throw new Error(`create ${i}: ${res.statusCode} ${res.body}`)
      }
    }),
  )
  const createsPerSecond = CREATES / ((performance.now() - started) / 1000)

  // Every delivery sent and recorded, so the pass finds them all finished.
  for (;;) {
    const done = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'succeeded')
      .executeTakeFirstOrThrow()
    if (Number(done.n) >= CREATES) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  await app.close()

  const handle = openServiceDatabase(config).db
  try {
    const windowMs = retentionWindowMs(config.eventRetentionDays)
    for (const table of ['events', 'webhook_deliveries'] as const)
      await handle
        .updateTable(table)
        .set((eb) => ({ created_at: eb('created_at', '-', windowMs + DAY_MS) }))
        .execute()
    const retention = new EventRetention(handle, deliveryRetention, { windowMs, intervalMs: DAY_MS }, console)
    const passStarted = performance.now()
    const pass = await retention.purge()
    const seconds = (performance.now() - passStarted) / 1000
    const left =
      (await rowCount(handle, 'events')) +
      (await rowCount(handle, 'webhook_deliveries')) +
      (await rowCount(handle, 'webhook_attempts'))
    return {
      dialect,
      createsPerSecond,
      eventsDeletedPerSecond: pass.events / seconds,
      deleted: { events: pass.events, deliveries: pass.deliveries, attempts: pass.attempts },
      left,
    }
  } finally {
    await handle.destroy()
  }
}

async function main() {
  const receiver = await WebhookReceiver.start()
  let failed = false
  try {
    for (const dialect of DIALECTS) {
      let result: Result
      if (dialect === 'sqlite') {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-retention-'))
        try {
          result = await run(dialect, `sqlite:${path.join(dir, 'bench.db')}`, receiver)
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      } else if (dialect === 'postgres') {
        const schema = await benchSchema(POSTGRES_URL, 'bench_retention', { replace: true })
        try {
          result = await run(dialect, schema.url, receiver)
        } finally {
          await schema.drop()
        }
      } else throw new Error(`unknown dialect ${dialect}`)
      const ratio = result.eventsDeletedPerSecond / result.createsPerSecond
      console.log(
        `${dialect}: ${CREATES} creates at ${result.createsPerSecond.toFixed(0)}/s; one pass deleted ` +
          `${result.deleted.events} events, ${result.deleted.deliveries} deliveries, ${result.deleted.attempts} ` +
          `attempts at ${result.eventsDeletedPerSecond.toFixed(0)} events/s: ${ratio.toFixed(1)}× the create rate` +
          (result.left > 0 ? `; ${result.left} rows left (FAIL)` : ''),
      )
      if (result.left > 0) failed = true
    }
  } finally {
    await receiver.close()
  }
  process.exitCode = failed ? 1 : 0
}

await main()
