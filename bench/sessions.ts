/**
 * Session latency on a large table: the first page, the 200th page (keyset pagination), a
 * filtered list and a create, measured in-process with `app.inject` (no network). Not a test: `npm run bench`.
 *
 *   DATABASE_URL      default: a fresh SQLite file under os.tmpdir() (removed afterwards)
 *   BENCH_SESSIONS    default 1000000
 *   BENCH_OPERATORS   default 1000
 *   BENCH_HEAVY_SESSIONS  sessions of one more operator, back to back, default 100000: creates
 *                     are timed into the gaps of its history (the overlap check's worst case)
 *   BENCH_BATCH       rows per multi-row INSERT, default 500
 *   BENCH_RUNS        timed runs per query (after warm-up), default 50
 *   BENCH_PG_SCHEMA   PostgreSQL only: (re)create this schema, run in it, drop it afterwards
 *   BENCH_KEEP=1      keep the SQLite file / PostgreSQL schema
 *   BENCH_SCAN_BATCH_ROUNDS  rounds of the scan batches (below), default 3
 *
 * Then, on the same dialect, `POST /v1/scans/batch` of 500 scans over HTTP on a database of its own
 * (`measureScanBatches` of bench/scan-batch.ts, `npm run bench:scan-batch`), against its budget.
 *
 * Exits 1 when page 200 costs 1.5 times page 1 or more, or a budget is missed.
 */
import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'

import type { FastifyInstance } from 'fastify'
import { type CompiledQuery, type Insertable, sql } from 'kysely'

import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { DevicesTable, OperatorsTable, SessionsTable } from '../src/db/schema.js'
import type { Db } from '../src/db/types.js'
import { newId } from '../src/lib/ids.js'
import { createKey } from '../src/modules/keys/service.js'
import { sessionPayRowsQuery } from '../src/modules/timesheets/timesheet-read-model.js'
import { benchSchema } from './postgres-schema.js'
import { measureScanBatches, scanBatchReport } from './scan-batch.js'

const SESSIONS = intEnv('BENCH_SESSIONS', 1_000_000)
const OPERATORS = intEnv('BENCH_OPERATORS', 1000)
const HEAVY_SESSIONS = intEnv('BENCH_HEAVY_SESSIONS', 100_000)
/** The heavy operator works 2 hours in every 2.5, up to the start of 2026: 30-minute gaps. */
const HEAVY_SHIFT_MS = 2 * 60 * 60 * 1000
const HEAVY_PERIOD_MS = 2.5 * 60 * 60 * 1000
const HEAVY_START = Date.parse('2026-01-01T00:00:00Z') - HEAVY_SESSIONS * HEAVY_PERIOD_MS
const DEVICES = 20
const LOCATIONS = 5
const BATCH = intEnv('BENCH_BATCH', 500)
const RUNS = intEnv('BENCH_RUNS', 50)
const WARMUP = 10
const PAGE = 100
const ROWS_PER_TRANSACTION = 50_000
const YEAR_MS = 365 * 24 * 60 * 60 * 1000
const START = Date.parse('2025-01-01T00:00:00Z')
const KEEP = process.env.BENCH_KEEP === '1'

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`)
  return value
}

/** Deterministic data from run to run. */
function mulberry32(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = mulberry32(42)
const pick = (n: number) => Math.floor(random() * n)

const log = (message: string) => process.stderr.write(`${message}\n`)

interface Target {
  url: string
  dialect: 'sqlite' | 'postgres'
  cleanup: () => Promise<void>
}

async function prepareTarget(): Promise<Target> {
  const raw = process.env.DATABASE_URL
  if (!raw || raw.startsWith('sqlite:')) {
    if (raw) return { url: raw, dialect: 'sqlite', cleanup: async () => {} }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attendance-bench-'))
    return {
      url: `sqlite:${path.join(dir, 'bench.db')}`,
      dialect: 'sqlite',
      cleanup: async () => {
        if (!KEEP) fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const schema = process.env.BENCH_PG_SCHEMA
  if (!schema) return { url: raw, dialect: 'postgres', cleanup: async () => {} }
  const { url, drop } = await benchSchema(raw, schema, { replace: true, keep: KEEP })
  return { url, dialect: 'postgres', cleanup: drop }
}

async function insertBatched<T>(db: Db, rows: T[], insert: (db: Db, chunk: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += BATCH) await insert(db, rows.slice(i, i + BATCH))
}

async function fill(db: Db, accountId: string) {
  const now = Date.now()
  const locationIds = Array.from({ length: LOCATIONS }, () => newId('loc'))
  await db
    .insertInto('locations')
    .values(
      locationIds.map((id, i) => ({
        id,
        account_id: accountId,
        livemode: 0 as const,
        name: `Plant ${i + 1}`,
        timezone: 'UTC',
        address: null,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute()
  const devices: Insertable<DevicesTable>[] = Array.from({ length: DEVICES }, (_, i) => ({
    id: newId('dev'),
    account_id: accountId,
    livemode: 0,
    code: `gate-${String(i + 1).padStart(2, '0')}`,
    name: null,
    location_id: locationIds[i % LOCATIONS] ?? null,
    created_at: now,
    updated_at: now,
  }))
  await db.insertInto('devices').values(devices).execute()
  const operators: Insertable<OperatorsTable>[] = Array.from({ length: OPERATORS }, (_, i) => ({
    id: newId('op'),
    account_id: accountId,
    livemode: 0,
    ident: `op-${String(i + 1).padStart(5, '0')}`,
    name: `Operator ${i + 1}`,
    employee_id: null,
    is_active: 1,
    created_at: now,
    updated_at: now,
    pay_rule_id: null,
  }))
  await insertBatched(db, operators, (d, chunk) => d.insertInto('operators').values(chunk).execute())

  // Sessions in creation order: ids (ULIDs) and check-in times both rise over one year.
  const started = performance.now()
  let done = 0
  while (done < SESSIONS) {
    const inThisTransaction = Math.min(ROWS_PER_TRANSACTION, SESSIONS - done)
    await db.transaction().execute(async (trx) => {
      for (let offset = 0; offset < inThisTransaction; offset += BATCH) {
        const rows: Insertable<SessionsTable>[] = []
        for (let k = 0; k < Math.min(BATCH, inThisTransaction - offset); k++) {
          const i = done + offset + k
          const operator = operators[pick(OPERATORS)] as Insertable<OperatorsTable>
          const device = devices[pick(DEVICES)] as Insertable<DevicesTable>
          const checkIn = START + Math.floor((i / SESSIONS) * YEAR_MS)
          const checkOut = checkIn + (4 * 60 + pick(6 * 60)) * 60_000
          const api = random() < 0.05
          rows.push({
            id: newId('ses'),
            account_id: accountId,
            livemode: 0,
            operator_id: operator.id,
            operator_ident: operator.ident,
            device_code: device.code,
            location_id: device.location_id,
            check_in_at: checkIn,
            check_out_at: checkOut,
            break_minutes: [0, 30, 45][pick(3)] ?? 0,
            notes: null,
            is_flagged: api ? 1 : 0,
            flag_reason: api ? 'manual_api_entry' : null,
            source: api ? 'api' : 'scan',
            status: 'completed',
            deleted_at: null,
            created_at: checkOut,
            updated_at: checkOut,
            // Locations of the bench are in UTC: the work date is the check-in's UTC date.
            work_date: new Date(checkIn).toISOString().slice(0, 10),
            review_status: api ? 'pending' : 'not_required',
            reviewed_at: null,
            reviewed_by: null,
            review_note: null,
          })
        }
        await trx.insertInto('sessions').values(rows).execute()
      }
    })
    done += inThisTransaction
    const seconds = (performance.now() - started) / 1000
    log(`  ${done.toLocaleString('en-US')} sessions, ${seconds.toFixed(1)} s`)
  }
  const heavy = await fillHeavyOperator(db, accountId, devices[0] as Insertable<DevicesTable>, now)
  return { operators, heavy, seconds: (performance.now() - started) / 1000 }
}

/** One operator with HEAVY_SESSIONS sessions back to back, 30 minutes apart. */
async function fillHeavyOperator(db: Db, accountId: string, device: Insertable<DevicesTable>, now: number) {
  const heavy: Insertable<OperatorsTable> = {
    id: newId('op'),
    account_id: accountId,
    livemode: 0,
    ident: 'op-heavy',
    name: 'Heavy operator',
    employee_id: null,
    is_active: 1,
    created_at: now,
    updated_at: now,
    pay_rule_id: null,
  }
  await db.insertInto('operators').values(heavy).execute()
  for (let done = 0; done < HEAVY_SESSIONS; done += ROWS_PER_TRANSACTION) {
    await db.transaction().execute(async (trx) => {
      const last = Math.min(HEAVY_SESSIONS, done + ROWS_PER_TRANSACTION)
      for (let offset = done; offset < last; offset += BATCH) {
        const rows: Insertable<SessionsTable>[] = []
        for (let i = offset; i < Math.min(last, offset + BATCH); i++) {
          const checkIn = HEAVY_START + i * HEAVY_PERIOD_MS
          rows.push({
            id: newId('ses'),
            account_id: accountId,
            livemode: 0,
            operator_id: heavy.id,
            operator_ident: heavy.ident,
            device_code: device.code,
            location_id: device.location_id,
            check_in_at: checkIn,
            check_out_at: checkIn + HEAVY_SHIFT_MS,
            break_minutes: 0,
            notes: null,
            is_flagged: 0,
            flag_reason: null,
            source: 'scan',
            status: 'completed',
            work_date: new Date(checkIn).toISOString().slice(0, 10),
            review_status: 'not_required',
            reviewed_at: null,
            reviewed_by: null,
            review_note: null,
            deleted_at: null,
            created_at: checkIn + HEAVY_SHIFT_MS,
            updated_at: checkIn + HEAVY_SHIFT_MS,
          })
        }
        await trx.insertInto('sessions').values(rows).execute()
      }
    })
  }
  log(`  + ${HEAVY_SESSIONS.toLocaleString('en-US')} sessions of ${heavy.ident}`)
  return heavy
}

/** The 30-minute gap after the heavy operator's session `k`: touching both neighbours. */
function heavyGap(k: number): { from: number; to: number } {
  const from = HEAVY_START + k * HEAVY_PERIOD_MS + HEAVY_SHIFT_MS
  return { from, to: from + (HEAVY_PERIOD_MS - HEAVY_SHIFT_MS) }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
}

async function main() {
  const target = await prepareTarget()
  const config = {
    ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000000' }),
    databaseUrl: target.url,
  }
  const { db } = openDatabase(target.url)
  let exitCode = 0
  try {
    await migrateToLatest(db)
    const key = await createKey(db, { account: `bench-${Date.now()}`, mode: 'test' })
    log(
      `Filling ${target.dialect} with ${SESSIONS.toLocaleString('en-US')} sessions (${OPERATORS} operators, ${BATCH} rows per INSERT)…`,
    )
    const { operators, heavy, seconds: fillSeconds } = await fill(db, key.account_id)
    // What autovacuum would do shortly after a bulk load; SQLite is measured as the service runs
    // it (no ANALYZE).
    if (target.dialect === 'postgres') await sql`analyze`.execute(db)

    const app = await buildApp({ config, db })
    await app.ready()
    const headers = { authorization: `Bearer ${key.secret}` }
    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers })
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
      return res.json() as { data: Array<{ id: string }>; next_cursor: string | null }
    }
    const first = `/v1/sessions?limit=${PAGE}`
    let cursor: string | null = null
    let lastId = ''
    for (let page = 1; page < 200; page++) {
      const body = await get(cursor === null ? first : `${first}&cursor=${encodeURIComponent(cursor)}`)
      cursor = body.next_cursor
      lastId = body.data[body.data.length - 1]?.id ?? ''
      if (cursor === null) throw new Error(`only ${page} pages of ${PAGE}: raise BENCH_SESSIONS`)
    }
    const page200 = `${first}&cursor=${encodeURIComponent(cursor ?? '')}`
    const operator = operators[Math.floor(OPERATORS / 2)] as Insertable<OperatorsTable>
    const from = new Date(START + YEAR_MS / 4).toISOString()
    const to = new Date(START + YEAR_MS / 2).toISOString()
    const filtered = `/v1/sessions?limit=${PAGE}&operator_id=${operator.id}&check_in_from=${from}&check_in_to=${to}`

    // Each create fills a gap of its own in the heavy operator's history, spread over all of it.
    let creates = 0
    const create = async () => {
      creates += 1
      const gap = heavyGap(Math.floor((creates * HEAVY_SESSIONS) / (WARMUP + RUNS + 1)))
      const payload = {
        operator_id: heavy.id,
        device_id: 'gate-01',
        check_in: { time: new Date(gap.from).toISOString() },
        check_out: { time: new Date(gap.to).toISOString() },
      }
      const res = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload })
      if (res.statusCode !== 201) throw new Error(`POST /v1/sessions: ${res.statusCode} ${res.body}`)
      return 1
    }
    const list = (url: string) => async () => (await get(url)).data.length

    // Interleaved: each round runs every query once, so a burst of background load hits all of them
    // alike instead of skewing the ratio.
    const queries = [
      { name: 'page 1 (limit=100)', run: list(first) },
      { name: 'page 200 (limit=100)', run: list(page200) },
      { name: 'operator + check_in range', run: list(filtered) },
      { name: `create (${HEAVY_SESSIONS.toLocaleString('en-US')}-session operator)`, run: create },
    ]
    for (let i = 0; i < WARMUP; i++) for (const q of queries) await q.run()
    const samples = queries.map(() => [] as number[])
    const rowCounts = queries.map(() => 0)
    for (let i = 0; i < RUNS; i++) {
      for (const [n, q] of queries.entries()) {
        const t0 = performance.now()
        rowCounts[n] = await q.run()
        samples[n]?.push(performance.now() - t0)
      }
    }
    const results = queries.map((q, n) => ({
      name: q.name,
      median: median(samples[n] ?? []),
      p90: percentile(samples[n] ?? [], 90),
      rows: rowCounts[n] ?? 0,
    }))
    const timesheets = await benchTimesheets(app, headers, target.dialect, key.account_id)
    await app.close()

    const ratio = (results[1]?.median ?? 0) / (results[0]?.median ?? 1)
    console.log('')
    console.log(
      `${target.dialect}, ${SESSIONS.toLocaleString('en-US')} sessions, fill ${fillSeconds.toFixed(1)} s, ${RUNS} runs each after ${WARMUP} warm-up`,
    )
    console.log('')
    console.log('| query | median ms | p90 ms | rows |')
    console.log('|---|---:|---:|---:|')
    for (const r of results) {
      console.log(`| ${r.name} | ${r.median.toFixed(2)} | ${r.p90.toFixed(2)} | ${r.rows} |`)
    }
    console.log('')
    console.log(`page200/page1 = ${ratio.toFixed(2)}`)
    console.log(`filtered: ${filtered}`)
    if (ratio >= 1.5) {
      console.error('FAIL: page 200 costs 1.5 times page 1 or more')
      exitCode = 1
    }
    for (const line of timesheets.lines) console.log(line)
    if (timesheets.failed) exitCode = 1
    // Its own database: the 1M sessions above are not what a kiosk's batch meets.
    const scanBatches = scanBatchReport(
      target.dialect,
      await measureScanBatches(target.dialect, intEnv('BENCH_SCAN_BATCH_ROUNDS', 3), target.url),
    )
    console.log('')
    for (const line of scanBatches.lines) console.log(line)
    if (scanBatches.failed) exitCode = 1
    if (process.env.BENCH_EXPLAIN !== '0') {
      await explain(target, key.account_id, lastId, operator.id, from, to)
      await explainOverlap(target, key.account_id, heavy.id)
      const scanned = await explainEveryFilter(target, key.account_id, operator)
      if (scanned.length > 0) {
        console.error(`FAIL: no index serves the filter ${scanned.join(', ')}`)
        exitCode = 1
      }
    }
  } finally {
    // app.close() destroyed `db` already on success; destroying twice is harmless.
    await db.destroy().catch(() => undefined)
    await target.cleanup()
  }
  process.exit(exitCode)
}

/** The plans of the page-200 and filtered list queries, as listSessionRows builds them. */
async function explain(
  target: Target,
  accountId: string,
  beforeId: string,
  operatorId: string,
  from: string,
  to: string,
) {
  const { db } = openDatabase(target.url)
  try {
    const visible = () =>
      db
        .selectFrom('sessions')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('livemode', '=', 0)
        .where('deleted_at', 'is', null)
    const plans = [
      {
        name: 'page 200',
        query: visible()
          .where('id', '<', beforeId)
          .orderBy('id', 'desc')
          .limit(PAGE + 1)
          .compile(),
      },
      {
        name: 'operator + check_in range',
        query: visible()
          .where('operator_id', '=', operatorId)
          .where('check_in_at', '>=', Date.parse(from))
          .where('check_in_at', '<', Date.parse(to))
          .orderBy('id', 'desc')
          .limit(PAGE + 1)
          .compile(),
      },
    ]
    const prefix = target.dialect === 'postgres' ? 'explain (analyze, buffers) ' : 'explain query plan '
    for (const { name, query } of plans) {
      const plan = await db.executeQuery<Record<string, unknown>>({ ...query, sql: prefix + query.sql })
      console.log('')
      console.log(`Plan, ${name}: ${query.sql}`)
      for (const row of plan.rows) {
        console.log(`  ${target.dialect === 'postgres' ? String(row['QUERY PLAN']) : String(row.detail)}`)
      }
    }
  } finally {
    await db.destroy()
  }
}

/**
 * The first page of the list with each of its filters alone (and by work date), as the sessions
 * repository builds it: the index each plan reads, whether it reads in the list's order (no sort of
 * what it found), and on PostgreSQL its buffers and time. Answers the filters that no index serves
 * (a scan of the table), which fail the run.
 */
async function explainEveryFilter(target: Target, accountId: string, operator: Insertable<OperatorsTable>) {
  const { filteredSessionsQuery } = await import('../src/modules/sessions/repository.js')
  const { db } = openDatabase(target.url)
  const auth = { principalId: 'bench', locationIds: null, accountId, livemode: false }
  const month = { from: Date.parse('2025-06-01T00:00:00Z'), to: Date.parse('2025-07-01T00:00:00Z') }
  const sample = await db
    .selectFrom('sessions')
    .select(['device_code', 'location_id'])
    .where('operator_id', '=', operator.id as string)
    .executeTakeFirstOrThrow()
  const created = { order: 'created', beforeId: undefined } as const
  const lists = [
    ['operator_id', { operator_id: operator.id as string }, created],
    ['operator_ident', { operator_ident: operator.ident as string }, created],
    ['device_id', { device_id: sample.device_code }, created],
    ['location_id', { location_id: sample.location_id ?? '' }, created],
    ['is_flagged=true', { is_flagged: true }, created],
    ['is_flagged=false', { is_flagged: false }, created],
    ['status=open', { status: 'open' }, created],
    ['status=completed', { status: 'completed' }, created],
    ['check_in range (June)', { checkInFrom: month.from, checkInTo: month.to }, created],
    ['review_status=pending', { review_status: 'pending' }, created],
    ['work_date range (June)', { work_date_from: '2025-06-01', work_date_to: '2025-06-30' }, created],
    ['order=work_date', {}, { order: 'work_date', after: undefined }],
    [
      'order=work_date, work_date range',
      { work_date_from: '2025-06-01' },
      { order: 'work_date', after: undefined },
    ],
  ] as const
  const scanned: string[] = []
  const plans: string[] = []
  console.log('')
  console.log(`Every filter's first page (limit ${PAGE}), ${target.dialect}:`)
  console.log('')
  console.log('| filter | index | in order | rows | ms | buffers (hit + read) |')
  console.log('|---|---|---|---:|---:|---:|')
  try {
    for (const [name, filters, start] of lists) {
      const query = filteredSessionsQuery(db, auth, filters, start, PAGE + 1).compile()
      const prefix = target.dialect === 'postgres' ? 'explain (analyze, buffers) ' : 'explain query plan '
      const plan = await db.executeQuery<Record<string, unknown>>({ ...query, sql: prefix + query.sql })
      const lines = plan.rows.map((row) =>
        String(target.dialect === 'postgres' ? row['QUERY PLAN'] : row.detail),
      )
      const indexes = [
        ...new Set(
          lines.flatMap((line) => [...line.matchAll(/\b(?:using|on|INDEX) (\w+)/g)].map((m) => m[1])),
        ),
      ].filter((name) => name !== 'sessions' && name !== undefined)
      const seqScan = lines.some((line) => /Seq Scan on sessions|^SCAN sessions$/.test(line.trim()))
      // An incremental sort orders only rows the index already gives in its leading order (one work
      // date's sessions by id); a full sort orders everything the filter found.
      const order = lines.some((line) => /\bIncremental Sort\b/.test(line))
        ? 'sorted within the index order'
        : lines.some((line) => /\bSort\b|TEMP B-TREE/.test(line))
          ? 'no (sort)'
          : 'yes'
      if (seqScan) scanned.push(name)
      plans.push('', `Plan, ${name}: ${query.sql}`, ...lines.map((line) => `  ${line}`))
      const rows = (await db.executeQuery(query)).rows.length
      const ms = lines.find((line) => line.startsWith('Execution Time'))?.match(/[\d.]+/)?.[0] ?? '—'
      // Hit in PostgreSQL's cache and read from the OS: both are pages the plan had to visit.
      const top = lines.find((line) => line.includes('Buffers:'))
      const visited = (kind: string) => Number(top?.match(new RegExp(`${kind}=(\\d+)`))?.[1] ?? 0)
      const buffers = top === undefined ? '—' : String(visited('hit') + visited('read'))
      console.log(
        `| ${name} | ${seqScan ? 'none (scan)' : indexes.join(', ')} | ${order} | ${rows} | ${ms} | ${buffers} |`,
      )
    }
  } finally {
    await db.destroy()
  }
  for (const line of plans) console.log(line)
  return scanned
}

/** The budgets of docs/performance.md: first page of a month, whole CSV of a month. */
const FIRST_PAGE_BUDGET_MS = 100
const CSV_BUDGET_MS = 5000

/**
 * Timesheets on the filled table (1,000 operators, sessions spread over 2025): the first JSON page
 * of one month (in-process, `app.inject`), and the whole CSV of that month and of the whole year,
 * downloaded over a real socket and read as it streams, with the process's heap sampled every
 * 20 ms while it does (the server and this client are one process: a server holding the result
 * would show here). Plus the query plans of a page and of a CSV batch.
 */
async function benchTimesheets(
  app: FastifyInstance,
  headers: Record<string, string>,
  dialect: 'sqlite' | 'postgres',
  accountId: string,
) {
  const lines: string[] = ['', `Timesheets (${dialect})`, '']
  let failed = false
  const month = 'from=2025-06-01&to=2025-06-30'
  const pageUrl = `/v1/timesheets?${month}&limit=${PAGE}`
  const samples: number[] = []
  let rows = 0
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now()
    const res = await app.inject({ method: 'GET', url: pageUrl, headers })
    const ms = performance.now() - t0
    if (res.statusCode !== 200) throw new Error(`${pageUrl}: ${res.statusCode} ${res.body}`)
    rows = (res.json() as { data: unknown[] }).data.length
    if (i >= WARMUP) samples.push(ms)
  }
  const weekSamples: number[] = []
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now()
    const res = await app.inject({ method: 'GET', url: `${pageUrl}&group_by=week`, headers })
    if (res.statusCode !== 200) throw new Error(`week page: ${res.statusCode} ${res.body}`)
    if (i >= WARMUP) weekSamples.push(performance.now() - t0)
  }

  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const download = async (query: string) => {
    global.gc?.()
    const heapBefore = process.memoryUsage().heapUsed
    let heapMax = heapBefore
    const sampler = setInterval(() => {
      heapMax = Math.max(heapMax, process.memoryUsage().heapUsed)
    }, 20)
    const t0 = performance.now()
    const res = await fetch(`${base}/v1/timesheets?${query}`, { headers: { ...headers, accept: 'text/csv' } })
    if (res.status !== 200 || !res.body) throw new Error(`CSV ${query}: ${res.status} ${await res.text()}`)
    let bytes = 0
    let lineCount = 0
    const firstByte = performance.now() - t0
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length
      for (const byte of chunk) if (byte === 0x0a) lineCount++
    }
    const ms = performance.now() - t0
    clearInterval(sampler)
    return { ms, firstByte, bytes, rows: lineCount - 1, heapGrowthMb: (heapMax - heapBefore) / 1e6 }
  }
  await download(month) // warm-up
  const monthCsv = await download(month)
  const yearCsv = await download('from=2025-01-01&to=2025-12-31')

  // The month under a pay rule that rounds, deducts and splits (the account's default), beside the
  // same without it: alternating rounds (the rule made default, then not), medians.
  const ruleRes = await app.inject({
    method: 'POST',
    url: '/v1/pay-rules',
    headers,
    payload: {
      name: 'bench: California',
      rounding: { interval_minutes: 15, check_in: 'nearest', check_out: 'nearest' },
      breaks: [{ after_minutes: 360, minutes: 30, action: 'deduct' }],
      overtime: { daily_minutes: 480, daily_double_minutes: 720, weekly_minutes: 2400, seventh_day: true },
    },
  })
  if (ruleRes.statusCode !== 201) throw new Error(`pay rule: ${ruleRes.statusCode} ${ruleRes.body}`)
  const ruleId = (ruleRes.json() as { id: string }).id
  const setDefault = async (on: boolean) => {
    const res = await app.inject({
      method: 'PATCH',
      url: `/v1/pay-rules/${ruleId}`,
      headers,
      payload: { is_default: on },
    })
    if (res.statusCode !== 200) throw new Error(`pay rule default: ${res.statusCode} ${res.body}`)
  }
  const plain: Array<Awaited<ReturnType<typeof download>>> = []
  const ruled: Array<Awaited<ReturnType<typeof download>>> = []
  const rulePages: number[] = []
  for (let round = 0; round < 3; round++) {
    await setDefault(false)
    plain.push(await download(month))
    await setDefault(true)
    ruled.push(await download(month))
    const t0 = performance.now()
    const res = await app.inject({ method: 'GET', url: pageUrl, headers })
    if (res.statusCode !== 200) throw new Error(`${pageUrl}: ${res.statusCode} ${res.body}`)
    rulePages.push(performance.now() - t0)
  }
  await setDefault(false)
  const plainMs = median(plain.map((r) => r.ms))
  const ruledMs = median(ruled.map((r) => r.ms))
  const csvRatio = ruledMs / plainMs

  const pageMedian = median(samples)
  lines.push('| query | median ms | p90 ms | rows |', '|---|---:|---:|---:|')
  lines.push(
    `| first page, June 2025, limit=${PAGE} | ${pageMedian.toFixed(2)} | ${percentile(samples, 90).toFixed(2)} | ${rows} |`,
  )
  lines.push(
    `| first page, June 2025, group_by=week | ${median(weekSamples).toFixed(2)} | ${percentile(weekSamples, 90).toFixed(2)} | ${rows} |`,
  )
  lines.push(
    '',
    '| CSV | rows | MB | first byte ms | total ms | heap growth MB |',
    '|---|---:|---:|---:|---:|---:|',
  )
  for (const [name, r] of [
    ['June 2025', monthCsv],
    ['all of 2025', yearCsv],
  ] as const) {
    lines.push(
      `| ${name} | ${r.rows} | ${(r.bytes / 1e6).toFixed(1)} | ${r.firstByte.toFixed(0)} | ${r.ms.toFixed(0)} | ${r.heapGrowthMb.toFixed(1)} |`,
    )
  }
  if (pageMedian >= FIRST_PAGE_BUDGET_MS) {
    lines.push(
      `FAIL: the first timesheet page takes ${pageMedian.toFixed(0)} ms (budget ${FIRST_PAGE_BUDGET_MS})`,
    )
    failed = true
  }
  lines.push(
    '',
    '| June 2025 CSV, 3 alternating rounds | median ms | rows | max heap growth MB |',
    '|---|---:|---:|---:|',
    `| without a pay rule | ${plainMs.toFixed(0)} | ${plain[0]?.rows ?? 0} | ${Math.max(...plain.map((r) => r.heapGrowthMb)).toFixed(1)} |`,
    `| with a rule (rounds 15 min, deducts 30 min after 6 h, daily/double/weekly/7th day) | ${ruledMs.toFixed(0)} | ${ruled[0]?.rows ?? 0} | ${Math.max(...ruled.map((r) => r.heapGrowthMb)).toFixed(1)} |`,
    '',
    `with rule / without = ${csvRatio.toFixed(2)} (budget 1.5); first page with the rule: median ${median(rulePages).toFixed(2)} ms`,
  )
  if (csvRatio > 1.5) {
    lines.push(`FAIL: the month's CSV with a pay rule takes ${csvRatio.toFixed(2)} times the CSV without`)
    failed = true
  }
  if (monthCsv.ms >= CSV_BUDGET_MS) {
    lines.push(`FAIL: the month's CSV takes ${monthCsv.ms.toFixed(0)} ms (budget ${CSV_BUDGET_MS})`)
    failed = true
  }

  if (process.env.BENCH_EXPLAIN !== '0') {
    const auth = { principalId: 'bench', locationIds: null, accountId, livemode: false }
    const filters = { from: '2025-06-01', to: '2025-06-30' }
    // The statements the timesheet runs: a first page, and a CSV batch in the middle of the month.
    const compiled = [
      [
        'timesheet first page',
        sessionPayRowsQuery(app.db, auth, filters, { ident: '', inclusive: true }, 2 * PAGE + 50).compile(),
      ],
      [
        'timesheet CSV batch',
        sessionPayRowsQuery(app.db, auth, filters, { ident: 'op-00500', inclusive: false }, 5000).compile(),
      ],
    ] as const
    const prefix = dialect === 'postgres' ? 'explain (analyze, buffers) ' : 'explain query plan '
    for (const [name, query] of compiled) {
      const plan = await app.db.executeQuery<Record<string, unknown>>({ ...query, sql: prefix + query.sql })
      lines.push('', `Plan, ${name}: ${query.sql}`)
      for (const row of plan.rows) {
        lines.push(`  ${dialect === 'postgres' ? String(row['QUERY PLAN']) : String(row.detail)}`)
      }
    }
  }
  return { lines, failed }
}

/**
 * The plan of the overlap check of a create in the middle of the heavy operator's history, as the
 * sessions lifecycle runs it (imported when run, so this file also runs against code without it).
 */
async function explainOverlap(target: Target, accountId: string, operatorId: string) {
  const repository: Record<string, unknown> = await import('../src/modules/sessions/repository.js')
  const lifecycle: Record<string, unknown> = await import('../src/modules/sessions/lifecycle.js')
  const build = repository.overlappingSessionQuery as
    | ((db: Db, auth: object, q: object) => CompiledQuery)
    | undefined
  if (!build) return
  const { db } = openDatabase(target.url)
  try {
    const gap = heavyGap(Math.floor(HEAVY_SESSIONS / 2))
    const query = build(
      db,
      { principalId: 'bench', locationIds: null, accountId, livemode: false },
      {
        operatorId,
        start: gap.from,
        end: gap.to,
        closedShiftMs: lifecycle.MAX_SHIFT_MS,
        longestSessionMs: lifecycle.MAX_API_SESSION_MS,
      },
    )
    const prefix = target.dialect === 'postgres' ? 'explain (analyze, buffers) ' : 'explain query plan '
    const plan = await db.executeQuery<Record<string, unknown>>({ ...query, sql: prefix + query.sql })
    console.log('')
    console.log(`Plan, overlap check of a create (operator with ${HEAVY_SESSIONS} sessions): ${query.sql}`)
    console.log(`  parameters: ${JSON.stringify(query.parameters)}`)
    for (const row of plan.rows) {
      console.log(`  ${target.dialect === 'postgres' ? String(row['QUERY PLAN']) : String(row.detail)}`)
    }
  } finally {
    await db.destroy()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
