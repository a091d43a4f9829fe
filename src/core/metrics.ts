import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The process's Prometheus series that are counted where their thing happens (a request answered,
 * a delivery recorded, a session swept, an answer replayed). Here, at the bottom, so that modules
 * and http/ both count into one registry; the gauges read from the database at scrape time and the
 * listener that serves them are `http/metrics.ts`'s. docs/operations.md lists every series.
 */
export const processRegistry = new Registry()

/** Counted by the onResponse hook of `http/metrics.ts`; `route` is the route's template. */
export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template (`unmatched` for no route) and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [processRegistry],
})

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request received to its answer sent, by method and route template',
  labelNames: ['method', 'route'] as const,
  registers: [processRegistry],
})

/**
 * What the webhook worker recorded for a delivery it took: `succeeded` (a 2xx), `retry` (a failed
 * attempt, another one scheduled), `failed` (a failed attempt, no more: the delivery failed),
 * `stopped` (its endpoint was disabled or deleted, or its event is gone: it ends without a decision).
 */
export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed' | 'stopped'

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Scheduled webhook deliveries the worker recorded, by outcome (succeeded, retry, failed, stopped)',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
})
// Every outcome's series exists from the start at 0: a rate() over a series that appears only with
// its first failure misses that failure.
for (const outcome of ['succeeded', 'retry', 'failed', 'stopped'] satisfies DeliveryOutcome[])
  webhookDeliveries.labels(outcome).inc(0)

export const webhookDeliveryDuration = new Histogram({
  name: 'webhook_delivery_duration_seconds',
  help: 'Duration of the worker’s webhook attempts, from the request sent to the answer (or timeout)',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [processRegistry],
})

export const webhookEndpointsAutoDisabled = new Counter({
  name: 'webhook_endpoints_auto_disabled_total',
  help: 'Webhook endpoints the worker disabled after consecutive failed deliveries',
  registers: [processRegistry],
})

export const sessionsClosedBySweep = new Counter({
  name: 'sessions_closed_by_sweep_total',
  help: 'Open sessions closed by the forgotten check-out sweep (older than 16 hours)',
  registers: [processRegistry],
})

export const idempotencyReplays = new Counter({
  name: 'idempotency_replays_total',
  help: 'Requests answered with the stored answer of an earlier request with the same Idempotency-Key',
  registers: [processRegistry],
})

let redisUp: Gauge | undefined

/**
 * Set by the rate limit's Redis client (http/rate-limit.ts): registered by the first app built with
 * REDIS_URL, so that a process without Redis (or `cli worker`) has no such series rather than a 0 that
 * reads as an outage.
 */
export function rateLimitRedisUp(): Gauge {
  redisUp ??= new Gauge({
    name: 'rate_limit_redis_up',
    help: '1 while the rate-limit counters are in Redis (REDIS_URL), 0 while Redis is unreachable and this process counts alone',
    registers: [processRegistry],
  })
  return redisUp
}

let processMetricsCollected = false

/**
 * prom-client's default process metrics (CPU, memory, event-loop lag, handles, GC) into the same
 * registry. Started with the metrics listener rather than at import: the event-loop lag monitor
 * runs from then on, and a process that serves no metrics needs none of it. Once per process, as
 * prom-client refuses to register them twice.
 */
export function collectProcessMetrics(): void {
  if (processMetricsCollected) return
  processMetricsCollected = true
  collectDefaultMetrics({ register: processRegistry })
}
