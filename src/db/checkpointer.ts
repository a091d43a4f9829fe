import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

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
 *    could not copy (the pages written meanwhile) is small, then asks the main thread, which runs
 *    one more PASSIVE checkpoint between two transactions of its own: only that small tail is left
 *    to copy (the cost is mostly its two fsyncs, a few ms), and the next write restarts the WAL.
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
  /** WAL size (pages) past which the main thread finishes a checkpoint so the WAL restarts. */
  restartPages?: number
  /** What the worker's last pass may have left for the main thread to copy (pages); default 256. */
  tailPages?: number
  /** Runs the main thread's checkpoint between two transactions (the driver's connection lock). */
  finishOnMainThread: () => Promise<void>
  /** Reports a failure (the checkpointer keeps going). */
  onError?: (error: unknown) => void
}

export interface CheckpointStats {
  /** Background checkpoints run. */
  passes: number
  /** Checkpoints the main thread ran to let the WAL restart. */
  finishes: number
  /** The WAL's size in pages at the last background checkpoint, and how many were copied back. */
  walPages: number
  checkpointedPages: number
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100
/** 64 MB of 4 KB pages. Reads search only the WAL's pages not yet copied back, so size is cheap. */
export const DEFAULT_RESTART_PAGES = 16384
export const DEFAULT_TAIL_PAGES = 256
/** A worker pass that keeps failing to get the tail small asks the main thread after this many. */
const MAX_TAIL_ATTEMPTS = 20

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
      // Again at once until the pages written during the pass are few, then the main thread.
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
  if (message === 'stop') {
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

export class Checkpointer {
  readonly stats: CheckpointStats = { passes: 0, finishes: 0, walPages: 0, checkpointedPages: 0 }
  private readonly worker: Worker
  private finishing: Promise<void> | undefined
  private readonly exited: Promise<void>

  constructor(private readonly options: CheckpointerOptions) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file: options.file,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
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
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()))
  }

  private onMessage(message: WorkerMessage): void {
    if (message.kind === 'error') {
      this.options.onError?.(new Error(`background checkpoint failed: ${message.message}`))
      return
    }
    this.stats.passes++
    this.stats.walPages = message.log
    this.stats.checkpointedPages = message.checkpointed
    if (message.finish && this.finishing === undefined) {
      this.finishing = this.options
        .finishOnMainThread()
        .then(
          () => {
            this.stats.finishes++
          },
          (error: unknown) => this.options.onError?.(error),
        )
        .finally(() => {
          this.finishing = undefined
        })
    }
  }

  /** Stops the thread and closes its connection; waits for a checkpoint the main thread is running. */
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
