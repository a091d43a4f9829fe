/**
 * How long `POST /v1/scans/batch` takes to answer a batch of 500 scans, the most a kiosk sends at once
 * after a day offline (issue 26: under 1 s on SQLite, under 2 s on PostgreSQL). Not a test:
 * `npm run bench:scan-batch`.
 *
 * The service runs in this process on a real port (a fresh SQLite file, and a PostgreSQL schema of
 * its own), the batches are sent over HTTP with a paired device's key, timed from sending to the
 * whole answer. Two shapes, each BENCH_ROUNDS times on fresh operators (written straight to the
 * table: the set-up is not what is measured):
 *   check-in   500 operators, one scan each: 500 check-ins
 *   in-and-out 250 operators, a check-in and a check-out 4 hours later each (sent grouped by operator,
 *              applied in time order)
 * Every scan of every batch must be recorded with the expected result, or the run fails.
 *
 *   BENCH_ROUNDS          default 5
 *   BENCH_DATABASE        `sqlite,postgres` (default), or one of them
 *   BENCH_POSTGRES_URL    default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { Db } from '../src/db/types.js'
import { newId } from '../src/lib/ids.js'
import { createKey } from '../src/modules/keys/service.js'
import { benchSchema } from './postgres-schema.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DATABASES = (process.env.BENCH_DATABASE ?? 'sqlite,postgres').split(',')
const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
const BATCH = 500
const HOUR = 3_600_000

type Shape = 'check-in' | 'in-and-out'
interface ScanItem {
  device_id: string
  operator_id: string
  time: string
  client_scan_id: string
}

async function post(base: string, secret: string | undefined, url: string, body: unknown) {
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }),
    },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as Record<string, unknown>
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** `count` active operators of the account, written in one statement. */
async function operators(db: Db, accountId: string, count: number): Promise<string[]> {
  const now = Date.now()
  const ids = Array.from({ length: count }, () => newId('op'))
  for (let i = 0; i < ids.length; i += 100) {
    await db
      .insertInto('operators')
      .values(
        ids.slice(i, i + 100).map((id) => ({
          id,
          account_id: accountId,
          livemode: 0 as const,
          ident: id,
          name: `Worker ${id.slice(-6)}`,
          employee_id: null,
          is_active: 1 as const,
          created_at: now,
          updated_at: now,
          pay_rule_id: null,
        })),
      )
      .execute()
  }
  return ids
}

function batchOf(shape: Shape, device: string, ids: string[], round: number): ScanItem[] {
  const start = Date.now() - 6 * HOUR
  const item = (op: string, at: number, n: number) => ({
    device_id: device,
    operator_id: op,
    time: new Date(at).toISOString(),
    client_scan_id: `r${round}-${n}`,
  })
  if (shape === 'check-in') return ids.map((op, i) => item(op, start + i * 1000, i))
  return ids.flatMap((op, i) => [
    item(op, start + i * 1000, 2 * i),
    item(op, start + 4 * HOUR + i * 1000, 2 * i + 1),
  ])
}

async function measure(dialect: string, databaseUrl: string) {
  const config = {
    ...loadConfig({}),
    databaseUrl,
    logLevel: 'silent',
    rateLimitMax: 1_000_000,
    worker: 'off' as const,
  }
  const { db } = openServiceDatabase(config)
  await migrateToLatest(db)
  const app = await buildApp({ config, db })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  try {
    const key = await createKey(db, { account: 'bench', mode: 'test' })
    const device = (await post(base, key.secret, '/v1/devices', { code: 'gate-1' })) as {
      id: string
      code: string
    }
    const code = (await post(base, key.secret, `/v1/devices/${device.id}/pairing-codes`, {})) as {
      code: string
    }
    const pairing = (await post(base, undefined, '/v1/device-pairings', { code: code.code })) as {
      key: { secret: string }
    }
    const results: Record<Shape, number[]> = { 'check-in': [], 'in-and-out': [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const shape of ['check-in', 'in-and-out'] as const) {
        const ids = await operators(db, key.account_id, shape === 'check-in' ? BATCH : BATCH / 2)
        const scans = batchOf(shape, device.code, ids, round * 2 + (shape === 'check-in' ? 0 : 1))
        const started = performance.now()
        const answer = (await post(base, pairing.key.secret, '/v1/scans/batch', { scans })) as {
          data: Array<{ result?: string }>
        }
        results[shape].push(performance.now() - started)
        const expected = scans.map((_, i) =>
          shape === 'check-in' || i % 2 === 0 ? 'checked_in' : 'checked_out',
        )
        const got = answer.data.map((s) => s.result)
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          throw new Error(
            `${dialect} ${shape}: unexpected results ${JSON.stringify(answer.data.slice(0, 3))}`,
          )
        }
      }
    }
    for (const [shape, times] of Object.entries(results)) {
      const sorted = [...times].sort((a, b) => a - b)
      const median = sorted[Math.floor(sorted.length / 2)] ?? 0
      console.log(
        `${dialect.padEnd(8)} ${shape.padEnd(10)} 500 scans: median ${(median / 1000).toFixed(2)} s, ` +
          `min ${((sorted[0] ?? 0) / 1000).toFixed(2)} s, max ${((sorted.at(-1) ?? 0) / 1000).toFixed(2)} s (${times.length} rounds)`,
      )
    }
  } finally {
    await app.close()
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-batch-bench-'))
try {
  if (DATABASES.includes('sqlite')) await measure('sqlite', `sqlite:${path.join(dir, 'bench.db')}`)
  if (DATABASES.includes('postgres')) {
    const schema = await benchSchema(POSTGRES_URL, `bench_scan_batch_${process.pid}`, { replace: true })
    try {
      await measure('postgres', schema.url)
    } finally {
      await schema.drop()
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
