import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { clock } from '../../src/lib/clock.js'

/** One request as the receiver saw it: the raw body is kept byte-for-byte (as UTF-8 text) for signatures. */
export interface ReceivedRequest {
  method: string
  /** Path and query, e.g. `/t3/hook`. */
  path: string
  headers: IncomingHttpHeaders
  body: string
  /**
   * The process clock's time (src/lib/clock.ts) when the body had been read: the service's own time,
   * the one its signatures and retry schedules use, so a test on a TestClock compares like with like.
   */
  receivedAt: number
}

/** What the receiver answers: 200 with an empty body unless told otherwise. */
export interface ReceiverResponse {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Waits this long before answering (for timeouts). */
  delayMs?: number
  /** Answers only once this settles (a receiver that hangs until the test lets it go). */
  heldUntil?: Promise<unknown>
}

/**
 * How a path answers: a fixed answer, a sequence (the last one repeats), or a function of the request
 * and of how many requests that path had before this one (0 for the first).
 */
export type Responder =
  | ReceiverResponse
  | ReceiverResponse[]
  | ((request: ReceivedRequest, index: number) => ReceiverResponse)

/**
 * A real HTTP server on 127.0.0.1 (a port of its own) that records every request and answers each one as
 * programmed per path. Tests give each endpoint its own path (`receiver.url('/t1')`) so they never see
 * each other's traffic.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = []
  private readonly responders = new Map<string, Responder>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private paths = 0

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: clock.now(),
        }
        receiver?.handle(received, res)
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve())
    })
    receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port)
    return receiver
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  /** A path no other caller of this method gets, e.g. `/p7/hook`. */
  freshPath(name = 'hook'): string {
    this.paths += 1
    return `/p${this.paths}/${name}`
  }

  /** Programs how `path` answers from now on. */
  respond(path: string, responder: Responder): void {
    this.responders.set(path, responder)
  }

  /** The requests to `path` (exact match, query included), oldest first. */
  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path)
  }

  /**
   * Polls until `predicate` holds, then returns its value; fails after `timeoutMs` with `description` and
   * what the receiver has seen, so a failing test says what it was waiting for.
   */
  async waitFor<T>(
    predicate: () => T | undefined | false | null | Promise<T | undefined | false | null>,
    timeoutMs: number,
    description = 'condition',
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = await predicate()
      if (value !== undefined && value !== false && value !== null) return value
      if (Date.now() > deadline) {
        const seen = this.requests.map((r) => `${r.method} ${r.path} ${r.headers['x-service-event'] ?? ''}`)
        throw new Error(
          `Timed out after ${timeoutMs} ms waiting for ${description}. The receiver has seen ${this.requests.length} request(s): ${seen.slice(-20).join('; ') || 'none'}`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
  }

  /** Waits until `path` has had at least `count` requests and returns them. */
  waitForRequests(path: string, count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    return this.waitFor(
      () => {
        const seen = this.requestsTo(path)
        return seen.length >= count ? seen : undefined
      },
      timeoutMs,
      `${count} request(s) to ${path}`,
    )
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }

  private handle(received: ReceivedRequest, res: ServerResponse): void {
    const index = this.requestsTo(received.path).length
    this.requests.push(received)
    const responder = this.responders.get(received.path)
    let answer: ReceiverResponse
    if (responder === undefined) answer = {}
    else if (typeof responder === 'function') answer = responder(received, index)
    else if (Array.isArray(responder)) answer = responder[Math.min(index, responder.length - 1)] ?? {}
    else answer = responder
    if (answer.heldUntil) {
      const { heldUntil, ...rest } = answer
      void heldUntil.finally(() => this.answer(res, rest))
      return
    }
    this.answer(res, answer)
  }

  private answer(res: ServerResponse, answer: ReceiverResponse): void {
    const send = () => {
      if (res.destroyed) return
      res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers })
      res.end(answer.body ?? '')
    }
    if (answer.delayMs) {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        send()
      }, answer.delayMs)
      this.timers.add(timer)
    } else send()
  }
}
