/**
 * The kiosk's service worker (served at /kiosk/sw.js, scope /kiosk): it keeps the app shell, the
 * page and the hashed files it names, so that a reload without the network still opens the kiosk.
 * API requests are never touched: a scan goes to the network or, failing that, into the page's queue.
 */

// The console's TypeScript has the DOM's types, not a worker's: the few this file uses.
interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request
  respondWith(response: Promise<Response>): void
}
interface WorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void
  skipWaiting(): Promise<void>
  clients: { claim(): Promise<void> }
}

const worker = globalThis as unknown as WorkerScope
const CACHE = 'kiosk-shell'
const PAGE = '/kiosk/'

/**
 * The page and every file it names (script, styles, preloaded chunks), as the build wrote them; then
 * nothing else. Each build names new hashed files and a deploy changes the page, often not this worker:
 * without the pruning, every build's files would stay on the tablet for good. An earlier worker's
 * caches of another name (`kiosk-…`) go too; the origin's other caches are not the kiosk's to delete.
 */
async function keepShell(page: Response): Promise<void> {
  const cache = await caches.open(CACHE)
  const html = await page.clone().text()
  const files = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((match) => match[1] as string)
  await cache.addAll(files)
  await cache.put(PAGE, page)
  const kept = new Set([PAGE, ...files].map((file) => new URL(file, location.origin).href))
  for (const request of await cache.keys()) {
    if (!kept.has(request.url)) await cache.delete(request)
  }
  for (const name of await caches.keys()) {
    if (name.startsWith('kiosk-') && name !== CACHE) await caches.delete(name)
  }
}

worker.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      await keepShell(await fetch(PAGE, { cache: 'no-store' }))
      await worker.skipWaiting()
    })(),
  )
})

worker.addEventListener('activate', (event) => event.waitUntil(worker.clients.claim()))

worker.addEventListener('fetch', (event) => {
  const request = event.request
  const url = new URL(request.url)
  if (request.method !== 'GET' || url.origin !== location.origin || url.pathname.startsWith('/v1/')) return
  if (request.mode === 'navigate') {
    // The network first, so a new build is picked up; its copy is kept for the next offline reload.
    event.respondWith(
      fetch(request).then(
        (response) => {
          if (response.ok) event.waitUntil(keepShell(response.clone()))
          return response
        },
        async () => (await caches.match(PAGE)) ?? Response.error(),
      ),
    )
    return
  }
  // Hashed names never change meaning: a kept copy is as good as the network's.
  event.respondWith(caches.match(request).then((kept) => kept ?? fetch(request)))
})

export {}
