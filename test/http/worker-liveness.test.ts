import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorker } from '../../src/app.js'
import {
  LOOP_STALL_MS,
  loopLiveness,
  type MetricsListener,
  startMetricsListener,
} from '../../src/http/metrics.js'
import type { WebhookWorker } from '../../src/modules/webhooks/worker.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { waitUntil } from '../helpers/assertions.js'
import { useTestClock } from '../helpers/clock.js'
import { dialect, holdDatabase } from '../helpers/database.js'
import { builtScript, killAll, START_MS, spawnChild } from '../helpers/process.js'

/**
 * `cli worker` has no API port for a probe: its metrics listener answers `GET /healthz`, 200 while
 * the delivery loops (the outbox relay and the sender) each finished a pass within LOOP_STALL_MS of
 * the process clock, 503 once one has not (stuck in a call that does not return). docs/operations.md,
 * "Health and readiness".
 */

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined }

interface Probe {
  status: number
  body: { status: string; stall_after_ms: number; loops: Record<string, { since_last_pass_ms: number }> }
}

async function probe(url: string): Promise<Probe> {
  const res = await fetch(url)
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
  return { status: res.status, body: (await res.json()) as Probe['body'] }
}

afterAll(killAll)

describe(`GET /healthz on the worker's metrics listener (${dialect})`, () => {
  const clock = useTestClock()
  let t: TestApp
  let worker: WebhookWorker
  let metrics: MetricsListener
  let healthz: string

  beforeAll(async () => {
    t = await buildTestApp()
    worker = createWorker(t.config, t.db, t.app.log)
    metrics = await startMetricsListener({
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      log: silent,
      liveness: loopLiveness(worker.lastPassAt),
    })
    healthz = metrics.url.replace(/\/metrics$/, '/healthz')
  })

  afterAll(async () => {
    await metrics.close()
    await worker.stop()
    await t.close()
  })

  it('is 200 while the loops pass, 503 once one has been stuck for LOOP_STALL_MS, 200 again once it passes', async () => {
    // The database is held before the loops start, so that their first passes wait for it (SQLite:
    // its one connection; PostgreSQL: the events table the relay reads first): no pass that began
    // before the hold can end after the clock has moved and look recent.
    const hold = await holdDatabase(t.db, 'events')
    try {
      worker.start()
      const starting = await probe(healthz)
      expect(starting.status).toBe(200)
      expect(starting.body).toMatchObject({ status: 'alive', stall_after_ms: LOOP_STALL_MS })
      expect(Object.keys(starting.body.loops).sort()).toEqual(['dispatch', 'send'])

      clock.advance(LOOP_STALL_MS + 1)
      const stalled = await probe(healthz)
      expect(stalled.status, JSON.stringify(stalled.body)).toBe(503)
      expect(stalled.body.status).toBe('stalled')
      expect(stalled.body.loops.dispatch?.since_last_pass_ms).toBeGreaterThan(LOOP_STALL_MS)
    } finally {
      await hold.release()
    }
    // Its pass ends once the database answers, at the clock's new time.
    const back = await waitUntil(
      () => probe(healthz),
      (p) => p.status === 200,
    )
    expect(back.body.status).toBe('alive')
  })

  it('answers nothing else on /healthz but GET and HEAD; the API process listener has no /healthz', async () => {
    expect((await fetch(healthz, { method: 'HEAD' })).status).toBe(200)
    expect((await fetch(healthz, { method: 'POST' })).status).toBe(404)
    const api = await startMetricsListener({ host: '127.0.0.1', port: 0, db: t.db, log: silent })
    try {
      expect((await fetch(api.url.replace(/\/metrics$/, '/healthz'))).status).toBe(404)
    } finally {
      await api.close()
    }
  })
})

describe(`cli worker, the process (${dialect})`, () => {
  it(
    'logs its configuration first, then serves /healthz 200 on its metrics port',
    async () => {
      const t = await buildTestApp()
      try {
        const worker = spawnChild(process.execPath, [builtScript('cli'), 'worker'], {
          env: {
            DATABASE_URL: t.database.url,
            METRICS_PORT: '0',
            METRICS_HOST: undefined,
            LOG_LEVEL: 'info',
          },
        })
        const url = (
          await worker.waitForStdout(/"msg":"metrics listening at (http:\/\/127\.0\.0\.1:\d+)\/metrics"/)
        )[1]
        const first = JSON.parse(worker.stdout.split('\n')[0] ?? '')
        expect(first).toMatchObject({ msg: 'configuration', config: { METRICS_PORT: 0, LOG_LEVEL: 'info' } })
        await worker.waitForStdout(/webhook worker and forgotten check-out sweep started/)
        const alive = await probe(`${url}/healthz`)
        expect(alive.status).toBe(200)
        expect(alive.body.status).toBe('alive')
        worker.kill('SIGTERM')
        expect((await worker.waitForExit()).code).toBe(0)
      } finally {
        await t.close()
      }
    },
    2 * START_MS,
  )
})
