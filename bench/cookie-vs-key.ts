/**
 * What a signed-in person's request costs against an API key's (issue 36: "a cookie request costs no
 * more than a key request"). One app in this process (`app.inject`: the whole HTTP stack, no network)
 * on a fresh SQLite file; the owner made through the owner's set-up link and `POST
 * /v1/auth/accept-invite`, as a newcomer would; then BENCH_ROUNDS rounds, each sending BENCH_REQUESTS
 * `GET /v1/operators?limit=10` with the key and as many with the cookie (`Attendance-Mode: test`),
 * in alternating order, measuring this process's CPU time per request. Prints each round and the
 * median ratio cookie/key.
 *
 *   npx tsx bench/cookie-vs-key.ts
 *   BENCH_ROUNDS (default 7), BENCH_REQUESTS (default 2000)
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openServiceDatabase } from '../src/db/connection.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createKey } from '../src/modules/keys/service.js'
import { ownerSetUpLink } from '../src/modules/users/service.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cookie-vs-key-'))
const config = {
  ...loadConfig({}),
  databaseUrl: `sqlite:${path.join(dir, 'bench.db')}`,
  logLevel: 'silent',
  rateLimitMax: 1_000_000_000,
  worker: 'off' as const,
}
const { db } = openServiceDatabase(config)
await migrateToLatest(db)
const link = await ownerSetUpLink(db, config.publicUrl)
if (!link) throw new Error('a fresh database hands over an owner link')
const key = await createKey(db, { account: 'default', mode: 'test' })
const app = await buildApp({ config, db })
await app.ready()

const accepted = await app.inject({
  method: 'POST',
  url: '/v1/auth/accept-invite',
  payload: {
    token: new URL(link).hash.slice('#token='.length),
    email: 'owner@example.com',
    password: 'a bench password',
  },
})
if (accepted.statusCode !== 200)
  throw new Error(`accept-invite answered ${accepted.statusCode}: ${accepted.body}`)
const cookie = String(accepted.headers['set-cookie']).split(';')[0] ?? ''
for (let i = 0; i < 10; i++) {
  await app.inject({
    method: 'POST',
    url: '/v1/operators',
    headers: { authorization: `Bearer ${key.secret}` },
    payload: { ident: `W-${i}` },
  })
}

const byKey = { authorization: `Bearer ${key.secret}` }
const byCookie = { cookie, 'attendance-mode': 'test' }

/** CPU microseconds per request of this process, for REQUESTS lists sent one after another. */
async function cpuPerRequest(headers: Record<string, string>): Promise<number> {
  const started = process.cpuUsage()
  for (let i = 0; i < REQUESTS; i++) {
    const res = await app.inject({ method: 'GET', url: '/v1/operators?limit=10', headers })
    if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}: ${res.body}`)
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / REQUESTS
}

await cpuPerRequest(byKey)
await cpuPerRequest(byCookie)
const ratios: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  const [keyUs, cookieUs] =
    round % 2 === 0
      ? [await cpuPerRequest(byKey), await cpuPerRequest(byCookie)]
      : await cpuPerRequest(byCookie).then(async (c) => [await cpuPerRequest(byKey), c])
  ratios.push((cookieUs as number) / (keyUs as number))
  console.log(
    `round ${round + 1}: key ${(keyUs as number).toFixed(0)} µs, cookie ${(cookieUs as number).toFixed(0)} µs of CPU a request`,
  )
}
const sorted = [...ratios].sort((a, b) => a - b)
console.log(`cookie/key CPU per request, median of ${ROUNDS}: ${sorted[Math.floor(ROUNDS / 2)]?.toFixed(3)}`)
await app.close()
fs.rmSync(dir, { recursive: true, force: true })
