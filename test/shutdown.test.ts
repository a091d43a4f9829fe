import http from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { DRAIN_MS } from '../src/server.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { killAll, START_MS } from './helpers/process.js'
import { firstKey, jsonLines, listeningUrl, startServerProcess } from './helpers/server-process.js'

/**
 * SIGTERM under load, on a real process from dist/: `/readyz` turns 503 at once while the API goes
 * on serving for SHUTDOWN_GRACE_MS; then the listener closes, the requests in flight finish and the
 * process exits 0. No request is lost: each one is answered (2xx, or `/readyz`'s 503 with the
 * envelope), or refused at connect once the listener has closed (ECONNREFUSED, which a client or a
 * load balancer retries elsewhere at no risk: the server never saw it). A reset, a cut or an empty
 * answer (ECONNRESET, "socket hang up") is a request the client cannot know the fate of: lost.
 */

/** Short, so that the test does not wait long; long enough for every client to see the 503 and go on. */
const GRACE_MS = 3000
const CLIENTS = 6
/** Requests answered 2xx to clients after `/readyz` said 503: the API still served. */
const SERVED_DURING_GRACE = 20

type Outcome =
  | { kind: 'answer'; path: string; status: number; body: string; afterNotReady: boolean }
  | { kind: 'error'; path: string; code: string; message: string }

const databases: TestDatabase[] = []
afterAll(async () => {
  await killAll()
  for (const database of databases) await database.drop()
})

/** One request on `agent` (keep-alive): its answer, or the error that ended it. */
function send(
  agent: http.Agent,
  base: URL,
  request: { method: string; path: string; key?: string; body?: unknown },
): Promise<{ status: number; body: string } | { code: string; message: string }> {
  return new Promise((resolve) => {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body)
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        agent,
        headers: {
          ...(request.key ? { authorization: `Bearer ${request.key}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        res.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ code: error.code ?? 'none', message: error.message }),
        )
      },
    )
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ code: error.code ?? 'none', message: error.message }),
    )
    req.end(body)
  })
}

describe('SIGTERM under load', () => {
  it('readyz turns 503 while requests still succeed; none is reset or lost; the process exits 0 with JSON lines only', {
    timeout: START_MS + 120_000,
  }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const server = startServerProcess({
      DATABASE_URL: database.url,
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      RATE_LIMIT_MAX: '1000000',
      WORKER: 'inline',
    })
    const base = new URL(await listeningUrl(server.child))
    const key = firstKey(server)
    expect(key).toMatch(/^sk_test_/)

    const outcomes: Outcome[] = []
    let notReadySeen = false
    let servedAfterNotReady = 0
    let refused = false
    const onServed = new Set<() => void>()
    const record = (path: string, result: Awaited<ReturnType<typeof send>>) => {
      if ('status' in result) {
        outcomes.push({ kind: 'answer', path, ...result, afterNotReady: notReadySeen })
        if (notReadySeen && path !== '/readyz' && result.status < 300) servedAfterNotReady++
        for (const listener of onServed) listener()
      } else {
        outcomes.push({ kind: 'error', path, ...result })
        // The listener has closed (or something failed): the loops stop at their first error.
        refused = true
      }
    }

    // Clients with keep-alive connections, each sending as fast as it is answered: reads and
    // creates in turn, until a request fails (once the listener closed, that is a refused connect).
    let sent = 0
    const client = async (n: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      try {
        for (let i = 0; !refused; i++) {
          const create = i % 2 === 1
          const path = '/v1/operators'
          const result = await send(agent, base, {
            method: create ? 'POST' : 'GET',
            path,
            key,
            body: create ? { ident: `OP-${n}-${i}` } : undefined,
          })
          sent++
          record(path, result)
        }
      } finally {
        agent.destroy()
      }
    }
    const readiness = async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      try {
        while (!refused) {
          const result = await send(agent, base, { method: 'GET', path: '/readyz' })
          record('/readyz', result)
          if ('status' in result && result.status === 503) notReadySeen = true
        }
      } finally {
        agent.destroy()
      }
    }
    const loops = [...Array.from({ length: CLIENTS }, (_, n) => client(n)), readiness()]

    const served = (condition: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (condition()) {
            onServed.delete(check)
            resolve()
          } else if (refused) {
            onServed.delete(check)
            reject(new Error(`the loops stopped early: ${JSON.stringify(outcomes.at(-1))}`))
          }
        }
        onServed.add(check)
        check()
      })
    // Under way on every connection before the signal.
    await served(() => sent >= CLIENTS * 4)
    server.child.kill('SIGTERM')
    // The grace: /readyz says 503 while the API still answers the others.
    await served(() => notReadySeen && servedAfterNotReady >= SERVED_DURING_GRACE)

    const exit = await server.child.waitForExit(START_MS)
    await Promise.all(loops)
    expect(exit).toEqual({ code: 0, signal: null })

    const errors = outcomes.filter((o) => o.kind === 'error')
    // Every error is a refused connect: no reset, no cut, no empty answer.
    expect(errors.filter((o) => o.code !== 'ECONNREFUSED')).toEqual([])
    expect(errors.length).toBeGreaterThan(0)
    const answers = outcomes.filter((o) => o.kind === 'answer')
    for (const answer of answers) {
      if (answer.path === '/readyz' && answer.status === 503) {
        expect(JSON.parse(answer.body)).toMatchObject({
          error: {
            type: 'api_error',
            code: 'not_ready',
            message: expect.stringContaining('shutting down'),
          },
        })
      } else {
        expect(answer.status, answer.body).toBeGreaterThanOrEqual(200)
        expect(answer.status, answer.body).toBeLessThan(300)
      }
    }
    // Once 503, /readyz never said ready again.
    const readyz = answers.filter((o) => o.path === '/readyz').map((o) => o.status)
    expect(readyz.slice(readyz.indexOf(503))).not.toContain(200)

    const lines = [...jsonLines(server.child.stdout), ...jsonLines(server.child.stderr)]
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }))
  })
})

describe('SIGINT (Ctrl-C at a terminal)', () => {
  it('drains without the grace: a person waits, no load balancer', { timeout: 2 * START_MS }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    // A grace far longer than the wait below: the exit says it was skipped.
    const server = startServerProcess({ DATABASE_URL: database.url, SHUTDOWN_GRACE_MS: '300000' })
    await listeningUrl(server.child)
    server.child.kill('SIGINT')
    expect(await server.child.waitForExit(START_MS)).toEqual({ code: 0, signal: null })
    expect(jsonLines(server.child.stdout)).toContainEqual(expect.objectContaining({ grace_ms: 0 }))
  })
})

describe('a drain that does not finish', () => {
  it('exits 1 past the grace and the drain bound, saying so in a JSON line', {
    timeout: 2 * START_MS + DRAIN_MS,
  }, async () => {
    const database = await createTestDatabase()
    databases.push(database)
    const server = startServerProcess({ DATABASE_URL: database.url, SHUTDOWN_GRACE_MS: '0' })
    const base = new URL(await listeningUrl(server.child))
    // A request whose body never ends: the drain waits for it until the bound.
    const request = http.request({
      host: base.hostname,
      port: base.port,
      method: 'POST',
      path: '/v1/operators',
      agent: false,
      headers: {
        authorization: `Bearer ${firstKey(server)}`,
        'content-type': 'application/json',
        'content-length': 100,
      },
    })
    request.on('error', () => undefined)
    request.write('{"ident":')
    await server.child.waitForStdout(/"url":"\/v1\/operators".*"msg":"incoming request"/)
    server.child.kill('SIGTERM')
    expect(await server.child.waitForExit(START_MS + DRAIN_MS)).toEqual({ code: 1, signal: null })
    request.destroy()
    const lines = [...jsonLines(server.child.stdout), ...jsonLines(server.child.stderr)]
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 50, msg: `shutdown did not finish within ${DRAIN_MS} ms; exiting` }),
    )
  })
})
