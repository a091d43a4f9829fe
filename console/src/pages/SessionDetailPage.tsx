import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import type { Location, Session, SessionRevision } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { useKnown } from '../directory.js'
import { calendarDate, checkOutText, flagReason, hours, localTime } from '../format.js'
import { type PagedList, useLoad, usePagedList } from '../hooks.js'
import { useLocation } from '../locations.js'
import { OperatorName } from '../operators.js'
import { ReviewControls } from '../review/ReviewControls.js'
import { useReviews } from '../review/reviews.js'
import { CorrectionForm } from '../session/CorrectionForm.js'
import { actorOf, History } from '../session/History.js'
import { SessionTimeline } from '../session/Timeline.js'

const REVIEW_STATUS: Record<Session['review_status'], string> = {
  pending: 'awaiting review',
  approved: 'approved',
  rejected: 'rejected',
  not_required: 'no review needed',
}

/**
 * Why the session was flagged, as it stands: a reason to review while the review is pending, and
 * only history ("was flagged") once it was approved or rejected.
 */
function flagText(session: Session): string {
  if (!session.is_flagged) return 'not flagged'
  const reason = flagReason(session.flag_reason)
  return session.review_status === 'pending' ? `flagged: ${reason}` : `was flagged: ${reason}`
}

function StatusLine({ session }: { session: Session }) {
  const tone =
    session.review_status === 'pending' ? 'warn' : session.review_status === 'rejected' ? 'bad' : 'good'
  return (
    <p class="status-line">
      <Badge tone={tone}>{REVIEW_STATUS[session.review_status]}</Badge> {flagText(session)}
    </p>
  )
}

/**
 * Who reviewed the session: the actor of its latest approve or reject (the history names the
 * person or the key), else the id in `reviewed_by`; nothing yet while the history is read.
 */
function reviewerOf(session: Session, revisions: PagedList<SessionRevision>): string {
  if (session.reviewed_by === null) return '—'
  const review = revisions.items.find(
    (revision) =>
      (revision.action === 'approved' || revision.action === 'rejected') &&
      revision.key_id === session.reviewed_by,
  )
  if (review) return actorOf(review)
  return revisions.loading ? '…' : session.reviewed_by
}

function Fields({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="fields">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  )
}

function SessionFields({
  session,
  location,
  zone,
  reviewer,
}: {
  session: Session
  location: Location | undefined
  zone: string
  reviewer: string
}) {
  const time = (iso: string) => localTime(iso, zone)
  return (
    <Fields
      rows={[
        ['Operator', <OperatorName key="operator" id={session.operator_id} ident={session.operator_ident} />],
        ['Work date', session.work_date],
        ['Location', location ? `${location.name} (${location.timezone})` : (session.location_id ?? '—')],
        ['Device', session.device_id],
        ['Check-in', time(session.check_in.time)],
        ['Check-out', checkOutText(session, time)],
        ['Break', `${session.break_minutes} min`],
        ['Hours', hours(session.total_hours)],
        ['Status', session.status],
        ['Flag', flagText(session)],
        ['Notes', session.notes ?? '—'],
        ['Review', REVIEW_STATUS[session.review_status]],
        ['Reviewed at', session.reviewed_at ? time(session.reviewed_at) : '—'],
        ['Reviewer', reviewer],
        ['Review note', session.review_note ?? '—'],
        ['Source', session.source],
        ['Created', time(session.created)],
        ['Updated', time(session.updated)],
        ['Id', session.id],
      ]}
    />
  )
}

/** Approve or reject on the session's own page; approving waits for a check-out. */
function ReviewSection({ session, onReviewed }: { session: Session; onReviewed: (s: Session) => void }) {
  const reviews = useReviews(onReviewed)
  return (
    <section aria-labelledby="review-heading">
      <h2 id="review-heading">Review</h2>
      <ReviewControls
        session={session}
        state={reviews.rows.get(session.id)}
        onReview={(decision, note) => reviews.review([session.id], decision, note)}
        noCheckOut="No check-out yet: set it above, then approve."
      />
    </section>
  )
}

/**
 * What a session's page is titled: whose session, on which work date ("Ada Lovelace (W-001), Tue 20
 * Oct 2026"); the ident alone until the name is read, and the id while the session is not (or no
 * longer) there.
 */
function useSessionTitle(id: string, session: Session | undefined): string {
  const { operators } = useSignedIn()
  const name = useKnown(operators, session?.operator_id ?? null).value?.name
  if (!session) return `Session ${id}`
  const who = name ? `${name} (${session.operator_ident})` : session.operator_ident
  return `${who}, ${calendarDate(session.work_date)}`
}

/**
 * All of a session's fields, its review, the check-out and break a manager may set, its check-in,
 * breaks and check-out in order, and its edit history; the history stays readable after a delete.
 */
export function SessionDetailPage({ id }: { id: string }) {
  const { api, can } = useSignedIn()
  const session = useLoad(() => api.sessions.retrieve(id), [api, id])
  // Each change made here is a new revision: the history is read again after it.
  const [changes, setChanges] = useState(0)
  const revisions = usePagedList(
    (cursor) => api.sessions.revisions(id, { limit: 50, cursor }),
    [api, id, changes],
  )
  const place = useLocation(session.value?.location_id ?? null)
  const zone = place.timeZone
  // Times are shown once the location's zone is known, never first in UTC.
  const timesReady = !session.loading && place.ready
  const missing = session.error?.status === 404
  const deleted = missing && revisions.items.length > 0
  const changed = (updated: Session) => {
    session.set(updated)
    setChanges((n) => n + 1)
  }
  const current = session.value
  const title = useSessionTitle(id, current)

  return (
    <>
      <PageTitle>{title}</PageTitle>
      {deleted ? (
        <p class="notice">This session was deleted; its history is kept.</p>
      ) : (
        <ErrorNotice error={session.error} />
      )}
      {current && timesReady && (
        <>
          <StatusLine session={current} />
          {/* Side by side on a wide screen: what the session is, and what a manager may do with it. */}
          <div class="session-layout">
            <SessionFields
              session={current}
              location={place.location}
              zone={zone}
              reviewer={reviewerOf(current, revisions)}
            />
            <div>
              {current.status !== 'open' && can('sessions:write') && (
                <CorrectionForm key={current.id} session={current} zone={zone} onSaved={changed} />
              )}
              {current.review_status === 'pending' && can('sessions:approve') && (
                <ReviewSection session={current} onReviewed={changed} />
              )}
            </div>
          </div>
          <SessionTimeline session={current} zone={zone} />
        </>
      )}
      {/* An unknown id is refused for its history too: the one notice above says it. */}
      {!(missing && !deleted) && <History revisions={revisions} zone={zone} ready={timesReady} />}
    </>
  )
}
