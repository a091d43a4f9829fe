import { useState } from 'preact/hooks'
import type { Session } from '../../../packages/client/src/client.js'
import { asProblem, type Problem } from '../api.js'
import { useSignedIn } from '../context.js'

export type Decision = 'approve' | 'reject'

/** A row's review request: running, or refused with the API's error. */
export interface RowReview {
  pending: boolean
  error?: Problem
}

/** Requests at once for a selection: enough to be quick, few enough to stay clear of rate limits. */
const PARALLEL_REVIEWS = 4

/** The API's refusals of a review, in a manager's words; anything else keeps the API's message. */
export function reviewProblem(error: Problem): string {
  if (error.code === 'period_closed') {
    return 'Its work date is in a closed pay period. Reopen the period (Timesheets page) to review it.'
  }
  if (error.code === 'check_out_missing') {
    return 'It has no check-out (a forgotten check-out). Set the check-out on the session page, then approve.'
  }
  if (error.code === 'session_open') {
    return 'The session is still open (no check-out yet). It can be reviewed once it is completed.'
  }
  return error.message
}

/** A rejection says why: the API refuses one without a note, so the console asks first. */
export function missingNote(decision: Decision, note: string): string | undefined {
  return decision === 'reject' && note.trim() === '' ? 'Write a note saying why before rejecting.' : undefined
}

async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items]
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * Approve and reject, of one session or of a selection: each session is its own request, and its
 * outcome is kept by id so a refusal shows next to its row. `onReviewed` gets each updated session.
 */
export function useReviews(onReviewed: (session: Session) => void) {
  const { api } = useSignedIn()
  const [rows, setRows] = useState<ReadonlyMap<string, RowReview>>(new Map())
  const setRow = (id: string, state: RowReview) => setRows((previous) => new Map(previous).set(id, state))

  const reviewOne = async (id: string, decision: Decision, note: string): Promise<boolean> => {
    setRow(id, { pending: true })
    try {
      const text = note.trim()
      onReviewed(
        decision === 'approve'
          ? await api.sessions.approve(id, text === '' ? {} : { note: text })
          : await api.sessions.reject(id, { note: text }),
      )
      setRow(id, { pending: false })
      return true
    } catch (error) {
      setRow(id, { pending: false, error: asProblem(error) })
      return false
    }
  }

  /** Answers how many of `ids` the API accepted. */
  const review = async (ids: string[], decision: Decision, note: string): Promise<number> => {
    let accepted = 0
    await inParallel(ids, PARALLEL_REVIEWS, async (id) => {
      if (await reviewOne(id, decision, note)) accepted += 1
    })
    return accepted
  }

  return { rows, review }
}
