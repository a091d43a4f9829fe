import { Worker } from 'node:worker_threads'
import { SQLITE_PACKAGE_ENTRY } from './addon.js'

/**
 * Checkpoints of a SQLite file in WAL mode, off the request path.
 *
 * Left to itself, SQLite checkpoints inside the COMMIT that takes the WAL past 1,000 pages: every
 * ~36 creates one request copied the WAL's pages into the database file and waited for two fsyncs,
 * 14–15 ms with the event loop blocked — about 70 % of all commit time (docs/performance.md).
 * Instead the service turns automatic checkpoints off (`wal_autocheckpoint = 0`) and:
 *
 * 1. A worker thread with a connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` every
 *    `intervalMs`: it copies what the WAL holds into the database file and fsyncs both, while the
 *    event loop goes on serving. PASSIVE never waits for a lock and never makes anyone wait; a
 *    writer appends to the WAL meanwhile.
 * 2. The WAL starts over from its beginning only when a write finds it entirely copied back, which
 *    rarely happens while writes keep coming during every background checkpoint. So once the WAL
 *    has grown past `restartPages`, the worker checkpoints again at once until what its last pass
 *    could not copy (the pages written meanwhile) is small, then asks the main thread to hold its
 *    writes: between two of its transactions the main thread stops handing out the connection
 *    (`holdWrites`) and the worker runs one more PASSIVE checkpoint, which copies that small tail
 *    with nothing appended meanwhile (the cost is mostly its two fsyncs, a few ms); the next write
 *    restarts the WAL. The event loop goes on serving all along: requests wait for the connection,
 *    not for the thread. (The main thread ran that last checkpoint itself before: 5 % of its time
 *    under the create benchmark, with the event loop blocked ~35 ms each time.)
 *
 * Durability is SQLite's with `synchronous = NORMAL`: a COMMIT has written its pages to the WAL
 * file (a process crash loses nothing acknowledged; the operating system holds the pages) and the
 * WAL is fsynced by each checkpoint, so a power cut can lose at most the commits of the last
 * `intervalMs` and the checkpoint then running.
 */
export interface CheckpointerOptions {
  /** The database file (not `:memory:`). */
  file: string
  /** How often the worker checkpoints; default 100 ms. */
  intervalMs?: number
  /** WAL size (pages) past which a checkpoint is finished with writes held, so the WAL restarts. */
  restartPages?: number
  /** What the worker's last pass may leave for the finish, with writes held, to copy (pages); default 256. */
  tailPages?: number
  /**
   * Runs `checkpoint` while the main thread writes nothing: from between two of its transactions
   * until `checkpoint` settles, the connection is handed to no one (the driver's connection lock).
   */
  holdWrites: (checkpoint: () => Promise<void>) => Promise<void>
  /** Reports a failure (the checkpointer keeps going). */
  onError?: (error: unknown) => void
}

export interface CheckpointStats {
  /** Background checkpoints run. */
  passes: number
  /** Checkpoints run with the main thread's writes held, to let the WAL restart. */
  finishes: number
  /** The WAL's size in pages at the last background checkpoint, and how many were copied back. */
  walPages: number
  checkpointedPages: number
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100
/** 64 MB of 4 KB pages. Reads search only the WAL's pages not yet copied back, so size is cheap. */
export const DEFAULT_RESTART_PAGES = 16384
export const DEFAULT_TAIL_PAGES = 256
/** A worker that keeps failing to get the tail small asks for the finish after this many passes. */
const MAX_TAIL_ATTEMPTS = 20
/**
 * Writes are held at most this long for the last checkpoint: a thread that does not answer (it
 * died, or its disk hangs) must not stop the service. The WAL then restarts at a later finish.
 */
const FINISH_TIMEOUT_MS = 5000

/** The worker's code: CommonJS evaluated as a string, so it runs the same under tsx, Vitest and dist/. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.file, { fileMustExist: true })
// PASSIVE checkpoints do not wait for locks; the timeout only covers opening the WAL index.
db.pragma('busy_timeout = 1000')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
let stopped = false
let attempts = 0
const pass = () => {
  if (stopped) return
  let next = workerData.intervalMs
  try {
    const row = checkpoint.get()
    let finish = false
    if (row.log >= workerData.restartPages) {
      // Again at once until the pages written during the pass are few, then the finish.
      if (row.log - row.checkpointed <= workerData.tailPages || ++attempts >= workerData.maxAttempts) {
        finish = true
        attempts = 0
      } else next = 0
    }
    parentPort.postMessage({ kind: 'pass', log: row.log, checkpointed: row.checkpointed, finish })
  } catch (error) {
    parentPort.postMessage({ kind: 'error', message: String(error && error.message || error) })
  }
  timer = setTimeout(pass, next)
}
let timer = setTimeout(pass, workerData.intervalMs)
parentPort.on('message', (message) => {
  if (message === 'finish') {
    // The main thread holds its writes until this answer: nothing is appended meanwhile, so this
    // pass copies the whole WAL back and the next write restarts it.
    try {
      const row = checkpoint.get()
      parentPort.postMessage({ kind: 'finished', log: row.log, checkpointed: row.checkpointed })
    } catch (error) {
      parentPort.postMessage({ kind: 'finished', error: String(error && error.message || error) })
    }
  } else if (message === 'stop') {
    stopped = true
    clearTimeout(timer)
    db.close()
    parentPort.close()
  }
})
`

type WorkerMessage =
  | { kind: 'pass'; log: number; checkpointed: number; finish: boolean }
  | { kind: 'error'; message: string }
  | { kind: 'finished'; log: number; checkpointed: number }
  | { kind: 'finished'; error: string }

export class Checkpointer {
  readonly stats: CheckpointStats = { passes: 0, finishes: 0, walPages: 0, checkpointedPages: 0 }
  private readonly worker: Worker
  private finishing: Promise<void> | undefined
  /** Settles the worker's last checkpoint, while writes are held for it. */
  private settleFinish: ((message: WorkerMessage & { kind: 'finished' }) => void) | undefined
  private readonly exited: Promise<void>

  constructor(private readonly options: CheckpointerOptions) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file: options.file,
        driver: SQLITE_PACKAGE_ENTRY,
        intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
        restartPages: options.restartPages ?? DEFAULT_RESTART_PAGES,
        tailPages: options.tailPages ?? DEFAULT_TAIL_PAGES,
        maxAttempts: MAX_TAIL_ATTEMPTS,
      },
    })
    // The thread must not keep a process alive that has nothing else to do (a CLI command).
    this.worker.unref()
    this.worker.on('message', (message: WorkerMessage) => this.onMessage(message))
    this.worker.on('error', (error) => options.onError?.(error))
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        this.settleFinish?.({ kind: 'finished', error: 'the checkpoint thread exited' })
        resolve()
      }),
    )
  }

  private onMessage(message: WorkerMessage): void {
    if (message.kind === 'error') {
      this.options.onError?.(new Error(`background checkpoint failed: ${message.message}`))
      return
    }
    if (message.kind === 'finished') {
      this.settleFinish?.(message)
      return
    }
    this.stats.passes++
    this.stats.walPages = message.log
    this.stats.checkpointedPages = message.checkpointed
    if (message.finish && this.finishing === undefined) {
      this.finishing = this.options
        .holdWrites(() => this.finishInWorker())
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => {
          this.finishing = undefined
        })
    }
  }

  /** The worker's checkpoint of the WAL's tail; resolves when it is done (or given up). */
  private finishInWorker(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settleFinish = undefined
        reject(new Error(`the last checkpoint took over ${FINISH_TIMEOUT_MS} ms; writes resumed`))
      }, FINISH_TIMEOUT_MS)
      this.settleFinish = (message) => {
        clearTimeout(timer)
        this.settleFinish = undefined
        if ('error' in message) {
          reject(new Error(`last checkpoint failed: ${message.error}`))
          return
        }
        this.stats.finishes++
        this.stats.walPages = message.log
        this.stats.checkpointedPages = message.checkpointed
        resolve()
      }
      this.worker.postMessage('finish')
    })
  }

  /** Stops the thread and closes its connection; waits for a finish that holds the main thread's writes. */
  async stop(): Promise<void> {
    // Referenced again while it stops: otherwise a process with nothing else to do (a CLI command
    // closing its database) would end in the middle of this, skipping what its caller does next.
    this.worker.ref()
    this.worker.postMessage('stop')
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))])
    clearTimeout(timer)
    await this.worker.terminate()
    await this.finishing
  }
}
