/**
 * How long `POST /v1/scans/batch` takes to answer a batch of 500 scans, the most a kiosk sends at once
 * after a day offline (issue 26: under 1 s on SQLite, under 2 s on PostgreSQL). Not a test:
 * `npm run bench:scan-batch`.
 *
 * The service runs in this process on a real port (a fresh SQLite file, and a PostgreSQL schema of
 * its own), the batches are sent over HTTP with a paired device's key, timed from sending to the
 * whole answer. Two shapes, each BENCH_ROUNDS times on fresh operators (written straight to the
 * table: the set-up is not what is measured), named by `operator_ident` as the kiosk names them:
 *   check-in   500 operators, one scan each: 500 check-ins
 *   in-and-out 250 operators, a check-in and a check-out 4 hours later each (sent grouped by operator,
 *              applied in time order)
 * Every scan of every batch must be recorded with the expected result, or the run fails. Each
 * shape's median is held to the budget of its dialect (1 s on SQLite, 2 s on PostgreSQL): a median
 * over it prints FAIL and the exit code is 1. `npm run bench` (bench/sessions.ts) runs the same
 * measurement (`measureScanBatches`) on its dialect.
 *
 *   BENCH_ROUNDS          default 5
 *   BENCH_DATABASE        `sqlite,postgres` (default), or one of them
 *   BENCH_POSTGRES_URL    default TEST_POSTGRES_URL or postgres://root@127.0.0.1:5432/test
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { Db } from '../src/db/types.js'
import { newId } from '../src/lib/ids.js'
import { createKey } from '../src/modules/keys/service.js'
import { benchSchema } from './postgres-schema.js'

const BATCH = 500
const HOUR = 3_600_000

/** Issue 26: a batch of 500 scans answers within these, by dialect. */
export const SCAN_BATCH_BUDGET_MS = { sqlite: 1000, postgres: 2000 } as const
type Dialect = keyof typeof SCAN_BATCH_BUDGET_MS

type Shape = 'check-in' | 'in-and-out'
interface ScanItem {
  device_id: string
  operator_ident: string
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
    operator_ident: op,
    time: new Date(at).toISOString(),
    client_scan_id: `r${round}-${n}`,
  })
  if (shape === 'check-in') return ids.map((op, i) => item(op, start + i * 1000, i))
  return ids.flatMap((op, i) => [
    item(op, start + i * 1000, 2 * i),
    item(op, start + 4 * HOUR + i * 1000, 2 * i + 1),
  ])
}

async function measure(dialect: Dialect, databaseUrl: string, rounds: number) {
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
    for (let round = 0; round < rounds; round++) {
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
    return results
  } finally {
    await app.close()
  }
}

/**
 * Times `POST /v1/scans/batch` of 500 scans on a fresh database of `dialect` (a SQLite file in a
 * folder of its own, or a PostgreSQL schema of its own under `postgresUrl`), `rounds` times each
 * shape, the shapes alternating: the milliseconds of each batch, by shape.
 */
export async function measureScanBatches(
  dialect: Dialect,
  rounds: number,
  postgresUrl: string,
): Promise<Record<Shape, number[]>> {
  if (dialect === 'postgres') {
    const schema = await benchSchema(postgresUrl, `bench_scan_batch_${process.pid}`, { replace: true })
    try {
      return await measure('postgres', schema.url, rounds)
    } finally {
      await schema.drop()
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-batch-bench-'))
  try {
    return await measure('sqlite', `sqlite:${path.join(dir, 'bench.db')}`, rounds)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** One line per shape: the median, min and max, and the median against the dialect's budget. */
export function scanBatchReport(dialect: Dialect, results: Record<Shape, number[]>) {
  const budget = SCAN_BATCH_BUDGET_MS[dialect]
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  let failed = false
  const lines = Object.entries(results).map(([shape, times]) => {
    const sorted = [...times].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0
    const pass = median < budget
    failed ||= !pass
    return (
      `${dialect.padEnd(8)} ${shape.padEnd(10)} 500 scans: median ${seconds(median)}, ` +
      `min ${seconds(sorted[0] ?? 0)}, max ${seconds(sorted.at(-1) ?? 0)} (${times.length} rounds): ` +
      `${pass ? 'PASS' : 'FAIL'} (budget ${seconds(budget)})`
    )
  })
  return { lines, failed }
}

async function main() {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const databases = (process.env.BENCH_DATABASE ?? 'sqlite,postgres').split(',')
  const postgresUrl =
    process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test'
  let failed = false
  for (const dialect of ['sqlite', 'postgres'] as const) {
    if (!databases.includes(dialect)) continue
    const report = scanBatchReport(dialect, await measureScanBatches(dialect, rounds, postgresUrl))
    for (const line of report.lines) console.log(line)
    failed ||= report.failed
  }
  process.exit(failed ? 1 : 0)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
