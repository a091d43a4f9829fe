import type { Action, ActionKind } from './plan.js'

/** The part of the client's `operators` resource the sync uses (AttendanceClient satisfies it). */
export interface OperatorsWriter {
  create(
    body: { ident: string; name?: string | null; employee_id?: string | null },
    options?: { idempotencyKey?: string },
  ): Promise<unknown>
  update(
    id: string,
    body: { name?: string | null; employee_id?: string | null; is_active?: boolean },
  ): Promise<unknown>
  del(id: string): Promise<unknown>
}

export interface ApplyProgress {
  /** Actions finished so far (succeeded or failed). */
  done: number
  total: number
  failed: number
  /** The action that just finished. */
  action: Action
}

export interface ApplyFailure {
  action: Action
  error: unknown
}

export interface ApplyResult {
  /** Actions that succeeded, per kind. */
  succeeded: Record<ActionKind, number>
  failures: ApplyFailure[]
  /** Actions never started because `signal` was aborted. */
  notStarted: number
}

export interface ApplyOptions {
  /** Requests in flight at most (default 8). */
  concurrency?: number
  onProgress?: (progress: ApplyProgress) => void
  /** Once aborted, no further action starts; those in flight finish. */
  signal?: AbortSignal
  /**
   * Waits before retrying a create answered 409 `idempotency_key_in_use` (the same create of an
   * earlier, interrupted run is still being processed). The service's lease on a key is 60 s.
   */
  inUseRetryDelaysMs?: readonly number[]
}

const IN_USE_RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 15_000, 30_000]

/**
 * Runs the actions through the client with bounded concurrency. A failed action does not stop
 * the others: each failure is collected with its error. The client itself retries 429, 5xx and
 * network errors; creates carry the action's deterministic Idempotency-Key.
 */
export async function applyPlan(
  operators: OperatorsWriter,
  actions: readonly Action[],
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8))
  const delays = options.inUseRetryDelaysMs ?? IN_USE_RETRY_DELAYS_MS
  const succeeded: Record<ActionKind, number> = { create: 0, update: 0, reactivate: 0, deactivate: 0 }
  const failures: ApplyFailure[] = []
  let next = 0
  let done = 0

  const runOne = async (action: Action): Promise<void> => {
    if (action.kind === 'create') {
      for (let attempt = 0; ; attempt++) {
        try {
          await operators.create(action.body, { idempotencyKey: action.idempotencyKey })
          return
        } catch (error) {
          const delay = delays[attempt]
          if (delay === undefined || !isKeyInUse(error)) throw error
          await sleep(delay)
        }
      }
    }
    // A pure deactivation is the documented DELETE; anything else is one PATCH of the changed fields.
    const onlyDeactivates = action.kind === 'deactivate' && Object.keys(action.patch).length === 1
    if (onlyDeactivates) await operators.del(action.operatorId)
    else await operators.update(action.operatorId, action.patch)
  }

  const worker = async (): Promise<void> => {
    for (;;) {
      if (options.signal?.aborted) return
      const action = actions[next++]
      if (action === undefined) return
      try {
        await runOne(action)
        succeeded[action.kind]++
      } catch (error) {
        failures.push({ action, error })
      }
      done++
      options.onProgress?.({ done, total: actions.length, failed: failures.length, action })
    }
  }

  await Promise.all(Array.from({ length: Math.min(concurrency, actions.length) }, worker))
  return { succeeded, failures, notStarted: actions.length - done }
}

function isKeyInUse(error: unknown): boolean {
  const e = error as { status?: unknown; code?: unknown } | null
  return typeof e === 'object' && e !== null && e.status === 409 && e.code === 'idempotency_key_in_use'
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
