/**
 * The kiosk's own storage, IndexedDB: the device key (never in a URL, never in localStorage, which a
 * script of the same origin reads synchronously and which some browsers clear under storage
 * pressure first), what the device last learnt of itself, the clock's last offset, and the queue of
 * scans not yet acknowledged by the service.
 */

const DATABASE = 'attendance-kiosk'
const SETTINGS = 'settings'
const QUEUE = 'queue'

export type Direction = 'auto' | 'break_start' | 'break_end'

/** A scan captured while the service could not be reached, as `POST /v1/scans/batch` takes it. */
export interface QueuedScan {
  /** The queue's order: IndexedDB numbers items as they are added, so the oldest comes first. */
  seq?: number
  client_scan_id: string
  device_id: string
  operator_ident: string
  direction: Direction
  /** The capture time on the service's clock (ISO-8601 UTC). */
  time: string
  /** At a device that requires PINs: the PIN sealed to the service's key (`pin.ts`), never the PIN. */
  pin_ciphertext?: string
}

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result)
    request.onerror = () => reject(request.error)
  })
}

function committed(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve()
    transaction.onerror = () => reject(transaction.error)
    transaction.onabort = () => reject(transaction.error)
  })
}

let opened: Promise<IDBDatabase> | undefined

function database(): Promise<IDBDatabase> {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1)
    request.onupgradeneeded = () => {
      request.result.createObjectStore(SETTINGS)
      request.result.createObjectStore(QUEUE, { keyPath: 'seq', autoIncrement: true })
    }
    request.onsuccess = () => resolve(request.result)
    request.onerror = () => reject(request.error)
  })
  return opened
}

export async function readSetting<T>(name: string): Promise<T | undefined> {
  const db = await database()
  return done(db.transaction(SETTINGS).objectStore(SETTINGS).get(name)) as Promise<T | undefined>
}

export async function writeSetting(name: string, value: unknown): Promise<void> {
  const db = await database()
  const transaction = db.transaction(SETTINGS, 'readwrite')
  transaction.objectStore(SETTINGS).put(value, name)
  await committed(transaction)
}

export async function enqueue(scan: QueuedScan): Promise<void> {
  const db = await database()
  const transaction = db.transaction(QUEUE, 'readwrite')
  transaction.objectStore(QUEUE).add(scan)
  await committed(transaction)
}

/** The `limit` oldest queued scans, oldest first. */
export async function oldestQueued(limit: number): Promise<QueuedScan[]> {
  const db = await database()
  return done(db.transaction(QUEUE).objectStore(QUEUE).getAll(null, limit)) as Promise<QueuedScan[]>
}

export async function removeQueued(seqs: number[]): Promise<void> {
  if (seqs.length === 0) return
  const db = await database()
  const transaction = db.transaction(QUEUE, 'readwrite')
  const store = transaction.objectStore(QUEUE)
  for (const seq of seqs) store.delete(seq)
  await committed(transaction)
}

export async function queueLength(): Promise<number> {
  const db = await database()
  return done(db.transaction(QUEUE).objectStore(QUEUE).count())
}
