import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { errors } from '../core/errors.js'

/**
 * The manager console: a single-page app (source in console/, built by `vite build` into
 * dist/console/) that calls the public /v1 API from the browser with the key its user pastes; and
 * the time clock's kiosk page, built with it (kiosk.html), which scans with a device key. This
 * plugin only serves their files; it has no data of its own and needs no key.
 */

/** This file runs from src/http/ under tsx and from dist/src/http/ once compiled. */
function builtConsoleDirectory(): string {
  const parent = path.resolve(import.meta.dirname, '..', '..')
  return path.basename(parent) === 'dist'
    ? path.join(parent, 'console')
    : path.join(parent, 'dist', 'console')
}

/**
 * Nothing runs but the bundle's own files, and the only server it talks to is this one: a key
 * pasted into the page can be sent nowhere else.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Vite names every asset after a hash of its content, so a name never changes meaning. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}

interface Asset {
  body: Buffer
  type: string
}

/** Read once at start-up: a few small files, and a deploy replaces them with the process. */
function loadAssets(directory: string): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  const assetsDirectory = path.join(directory, 'assets')
  if (!existsSync(assetsDirectory)) return assets
  for (const name of readdirSync(assetsDirectory)) {
    assets.set(name, {
      body: readFileSync(path.join(assetsDirectory, name)),
      type: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
    })
  }
  return assets
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
}

/**
 * The kiosk's service worker is served from inside the scope it controls, /kiosk (the page answers at
 * /kiosk and /kiosk/, and only a worker allowed that scope covers both).
 */
export const KIOSK_SERVICE_WORKER_PATH = '/kiosk/sw.js'
export const KIOSK_SCOPE = '/kiosk'

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const directory = builtConsoleDirectory()
  const read = (name: string) => {
    const file = path.join(directory, name)
    return existsSync(file) ? readFileSync(file) : undefined
  }
  const index = read('index.html')
  const kiosk = read('kiosk.html')
  const kioskWorker = read('kiosk-sw.js')
  const assets = loadAssets(directory)
  const schema = { hide: true }

  /** A page names its assets by their hashes, so it must be revalidated to find a new build's. */
  const sendBuilt = (reply: FastifyReply, file: Buffer | undefined, type: string) => {
    if (!file) {
      return secure(reply)
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build`.\n')
    }
    return secure(reply).header('cache-control', 'no-cache').type(type).send(file)
  }
  const sendIndex = (reply: FastifyReply) => sendBuilt(reply, index, 'text/html; charset=utf-8')

  app.get<{ Params: { name: string } }>('/console/assets/:name', { schema }, async (request, reply) => {
    const asset = assets.get(request.params.name)
    // Not index.html: a missing script must fail as a missing script, not parse HTML as JavaScript.
    if (!asset) throw errors.notFound('console asset', request.params.name)
    return secure(reply).header('cache-control', IMMUTABLE).type(asset.type).send(asset.body)
  })
  // Every other path under /console is a page of the app, which routes in the browser.
  app.get('/console', { schema }, async (_request, reply) => sendIndex(reply))
  app.get('/console/*', { schema }, async (_request, reply) => sendIndex(reply))

  const sendKiosk = (reply: FastifyReply) => sendBuilt(reply, kiosk, 'text/html; charset=utf-8')
  app.get('/kiosk', { schema }, async (_request, reply) => sendKiosk(reply))
  app.get('/kiosk/', { schema }, async (_request, reply) => sendKiosk(reply))
  app.get(KIOSK_SERVICE_WORKER_PATH, { schema }, async (_request, reply) =>
    sendBuilt(
      reply.header('service-worker-allowed', KIOSK_SCOPE),
      kioskWorker,
      CONTENT_TYPES['.js'] as string,
    ),
  )
}
