import { useState } from 'preact/hooks'
import type { Session } from '../../../packages/client/src/types.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { usePagedList } from '../hooks.js'
import { formFromAddress, plainFilterOf, type ReviewFilter, ReviewFilters } from '../review/ReviewFilters.js'
import { ReviewRow } from '../review/ReviewRow.js'
import { type Decision, useReviews } from '../review/reviews.js'
import { SelectionBar } from '../review/SelectionBar.js'

function outcomeOf(decision: Decision, accepted: number, asked: number): string {
  const done = `${decision === 'approve' ? 'Approved' : 'Rejected'} ${accepted} of ${asked}.`
  return accepted === asked ? done : `${done} The others say why on their rows.`
}

/**
 * Sessions awaiting review (`review_status=pending`), newest first, 50 a page through the API's
 * cursors: the first page is all that loads until more is asked for, whatever the queue's length.
 */
export function ReviewQueuePage() {
  const { api } = useSignedIn()
  const [initial] = useState(() => formFromAddress(window.location.search))
  const [filter, setFilter] = useState<ReviewFilter>(() => plainFilterOf(initial))
  const list = usePagedList<Session>(
    (cursor) => api.list<Session>('/v1/sessions', { ...filter, review_status: 'pending', limit: 50 }, cursor),
    [api, filter],
  )
  const reviews = useReviews(list.replace)
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [outcome, setOutcome] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)

  const reviewable = list.items.filter((session) => session.review_status === 'pending')
  const selectedIds = reviewable.map((session) => session.id).filter((id) => selected.has(id))
  const select = (id: string, on: boolean) =>
    setSelected((previous) => {
      const next = new Set(previous)
      if (on) next.add(id)
      else next.delete(id)
      return next
    })
  const reviewSelection = async (decision: Decision, note: string) => {
    setBusy(true)
    setOutcome(undefined)
    const accepted = await reviews.review(selectedIds, decision, note)
    setOutcome(outcomeOf(decision, accepted, selectedIds.length))
    setSelected(new Set())
    setBusy(false)
  }

  return (
    <>
      <PageTitle>Review queue</PageTitle>
      <ReviewFilters
        initial={initial}
        onApply={(next) => {
          setSelected(new Set())
          setFilter(next)
        }}
      />
      <p class="muted">
        Sessions awaiting review, newest first. Times are local to each session's location; the work date is
        the day of its check-in there. A rejection needs a note.
      </p>
      <SelectionBar count={selectedIds.length} busy={busy} outcome={outcome} onReview={reviewSelection} />
      <ErrorNotice error={list.error} />
      <table class="review-queue">
        <caption class="visually-hidden">Sessions awaiting review, newest first</caption>
        <thead>
          <tr>
            <th scope="col">
              <input
                type="checkbox"
                aria-label="Select every session shown"
                checked={reviewable.length > 0 && selectedIds.length === reviewable.length}
                onChange={(event) =>
                  setSelected(
                    new Set(event.currentTarget.checked ? reviewable.map((session) => session.id) : []),
                  )
                }
              />
            </th>
            <th scope="col">Work date</th>
            <th scope="col">Local times</th>
            <th scope="col">Operator</th>
            <th scope="col">Location</th>
            <th scope="col">Hours</th>
            <th scope="col">Flag</th>
            <th scope="col">Review</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((session) => (
            <ReviewRow
              key={session.id}
              session={session}
              state={reviews.rows.get(session.id)}
              selected={selected.has(session.id)}
              onSelect={(on) => select(session.id, on)}
              onReview={(decision, note) => reviews.review([session.id], decision, note)}
            />
          ))}
        </tbody>
      </table>
      <LoadMore
        count={list.items.length}
        noun="sessions"
        hasMore={list.hasMore}
        loading={list.loading}
        onLoadMore={list.loadMore}
      />
    </>
  )
}
