/**
 * A minimal webhook receiver on node:http: verifies each delivery's signature with the package, then handles
 * each event once, de-duplicating on the event id (a delivery may arrive more than once).
 *
 *   WEBHOOK_SECRET=whsec_… PORT=3000 npx tsx packages/client/examples/receiver.ts
 *
 * During a secret rotation set WEBHOOK_SECRET to "new,previous". In your own project import from
 * '@attendance/client' instead of '../src/index.js'.
 */

import { realpathSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { constructWebhookEvent, type WebhookEvent, WebhookVerificationError } from '../src/index.js'

/** The service's bodies are far smaller; anything bigger is not a delivery. */
const MAX_BODY_BYTES = 1024 * 1024

export interface ReceiverOptions {
  /** The endpoint's signing secret(s): during a rotation, the new one and the previous one. */
  secrets: string[]
  /** Handles one event. Throwing answers 500, so the service delivers the event again later. */
  onEvent: (event: WebhookEvent) => void | Promise<void>
  /**
   * Ids of the events already handled. Kept in memory here; a real receiver stores them with the effects
   * of the event (same database transaction), so a restart forgets nothing.
   */
  handled?: Set<string>
}

export function createReceiver(options: ReceiverOptions): Server {
  const handled = options.handled ?? new Set<string>()
  // Two copies of one event arriving together: the second waits for no one; it is refused with 409 and the
  // service retries it later, by when the first has been handled.
  const inProgress = new Set<string>()

  return createServer((request, response) => {
    const answer = (status: number, text: string) => {
      response.writeHead(status, { 'content-type': 'text/plain' }).end(text)
    }
    if (request.method !== 'POST') return answer(405, 'POST only')

    readBody(request)
      .then(async (rawBody) => {
        let event: WebhookEvent
        try {
          // The raw bytes as received: a body re-serialised from parsed JSON would not verify.
          event = constructWebhookEvent(rawBody, headerOf(request, 'x-service-signature'), options.secrets)
        } catch (error) {
          if (error instanceof WebhookVerificationError) return answer(400, `rejected: ${error.reason}`)
          return answer(400, 'rejected: the body is not JSON')
        }
        if (handled.has(event.id)) return answer(200, 'duplicate')
        if (inProgress.has(event.id)) return answer(409, 'in progress')
        inProgress.add(event.id)
        try {
          await options.onEvent(event)
          handled.add(event.id)
        } finally {
          inProgress.delete(event.id)
        }
        answer(200, 'ok')
      })
      .catch((error: unknown) => {
        if (response.headersSent) return
        if (error instanceof BodyTooLargeError) return answer(413, 'body too large')
        console.error('webhook handling failed:', error)
        answer(500, 'failed')
      })
  })
}

function headerOf(request: IncomingMessage, name: string): string {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(',') : (value ?? '')
}

class BodyTooLargeError extends Error {}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLargeError())
        request.destroy()
      } else chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isEntryPoint()) {
  const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter((secret) => secret !== '')
  if (secrets.length === 0) {
    console.error('Set WEBHOOK_SECRET to the endpoint secret (whsec_…)')
    process.exit(1)
  }
  const port = Number(process.env.PORT ?? 3000)
  createReceiver({
    secrets,
    onEvent: (event) => {
      console.log(`${event.created} ${event.type} ${event.id}`)
    },
  }).listen(port, () => console.log(`Receiving webhooks on http://localhost:${port}/`))
}
