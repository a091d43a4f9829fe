import { useState } from 'preact/hooks'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { usePagedList } from '../hooks.js'
import { filterOf, formFromAddress, type ReviewFilter, ReviewFilters } from '../review/ReviewFilters.js'
import { ReviewRow } from '../review/ReviewRow.js'
import { type Decision, useReviews } from '../review/reviews.js'
import { SelectionBar } from '../review/SelectionBar.js'

function outcomeOf(decision: Decision, accepted: number, asked: number): string {
  const done = `${decision === 'approve' ? 'Approved' : 'Rejected'} ${accepted} of ${asked}.`
  return accepted === asked ? done : `${done} The others say why on their rows.`
}

/**
 * Sessions awaiting review (`review_status=pending`), oldest work date first (`order=work_date`), so
 * a month is reviewed in its order; 50 a page through the API's cursors: the first page is all that
 * loads until more is asked for, whatever the queue's length.
 */
export function ReviewQueuePage() {
  const { api, can } = useSignedIn()
  // One who may not approve sees the queue without its boxes, notes and buttons.
  const reviewing = can('sessions:approve')
  const [initial] = useState(formFromAddress)
  const [filter, setFilter] = useState<ReviewFilter>(() => filterOf(initial))
  const list = usePagedList(
    (cursor) =>
      api.sessions.list({ ...filter, review_status: 'pending', order: 'work_date', limit: 50, cursor }),
    [api, filter],
  )
  const reviews = useReviews(list.replace)
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [outcome, setOutcome] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)

  const selectable = list.items.filter((session) => session.review_status === 'pending')
  const selectedIds = selectable.map((session) => session.id).filter((id) => selected.has(id))
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
        Sessions awaiting review, oldest work date first. Times are local to each session's location; the work
        date is the day of its check-in there.{reviewing && ' A rejection needs a note.'}
      </p>
      {reviewing && (
        <SelectionBar
          selected={selectedIds.length}
          busy={busy}
          outcome={outcome}
          onReview={reviewSelection}
        />
      )}
      <PagedTable
        list={list}
        class={reviewing ? 'review-queue' : undefined}
        caption="Sessions awaiting review, oldest work date first"
        noun={['session']}
        empty="Nothing awaits review."
        head={
          <>
            {reviewing && (
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every session shown"
                  checked={selectable.length > 0 && selectedIds.length === selectable.length}
                  onChange={(event) =>
                    setSelected(
                      new Set(event.currentTarget.checked ? selectable.map((session) => session.id) : []),
                    )
                  }
                />
              </th>
            )}
            <th scope="col">Operator</th>
            <th scope="col">Work date</th>
            <th scope="col">Local times</th>
            <th scope="col">Hours</th>
            <th scope="col">Flag</th>
            <th scope="col">Notes</th>
            {reviewing && <th scope="col">Review</th>}
          </>
        }
      >
        {list.items.map((session) => (
          <ReviewRow
            key={session.id}
            session={session}
            reviewing={reviewing}
            state={reviews.rows.get(session.id)}
            selected={selected.has(session.id)}
            onSelect={(on) => select(session.id, on)}
            onReview={(decision, note) => reviews.review([session.id], decision, note)}
          />
        ))}
      </PagedTable>
    </>
  )
}
