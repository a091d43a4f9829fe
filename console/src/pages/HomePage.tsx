import type { ComponentChildren } from 'preact'
import { firstItems } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { isoDate, monthOf } from '../dates.js'
import { count, hours } from '../format.js'
import { type Loaded, useLoad } from '../hooks.js'
import { Link } from '../router.js'
import { timesheetTotals } from '../timesheets/totals.js'

/** Sessions counted for a figure; past this the figure says "more than". */
const COUNTED = 1000

/** A figure of the home page: its own request and its own error, so one refusal hides no other figure. */
function Card<T>({
  id,
  title,
  loaded,
  children,
}: {
  id: string
  title: string
  loaded: Loaded<T>
  children: (value: T) => ComponentChildren
}) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {loaded.loading && <p class="muted">Loading…</p>}
      <ErrorNotice error={loaded.error} />
      {loaded.value !== undefined && children(loaded.value)}
    </section>
  )
}

/** "3 sessions await review", "More than 1,000 sessions await review". */
function counted(found: { items: unknown[]; complete: boolean }, one: string, other: string): string {
  return found.complete ? count(found.items.length, one, other) : `More than ${count(COUNTED, one, other)}`
}

function PendingReviews() {
  const { api } = useSignedIn()
  const pending = useLoad(() => firstItems(api.sessions, { review_status: 'pending' }, COUNTED), [api])
  return (
    <Card id="home-reviews" title="Pending reviews" loaded={pending}>
      {(found) => (
        <>
          <p class="figure">
            {found.items.length === 0
              ? 'Nothing awaits review.'
              : counted(found, 'session awaits review', 'sessions await review')}
          </p>
          <Link to="/review">Open the review queue</Link>
        </>
      )}
    </Card>
  )
}

function OpenSessions() {
  const { api } = useSignedIn()
  const open = useLoad(() => firstItems(api.sessions, { status: 'open' }, COUNTED), [api])
  return (
    <Card id="home-open" title="Open sessions" loaded={open}>
      {(found) => (
        <>
          <p class="figure">
            {found.items.length === 0
              ? 'Nobody is checked in now.'
              : counted(found, 'session open now', 'sessions open now')}
          </p>
          <Link to="/sessions?status=open">See who is checked in</Link>
        </>
      )}
    </Card>
  )
}

/**
 * The hours of the open pay period that covers today (or of this month, without one), as the
 * timesheet counts them, over every row of it.
 */
function PeriodHours() {
  const { api } = useSignedIn()
  const loaded = useLoad(async () => {
    const today = isoDate(new Date())
    const periods = await api.payPeriods.list({ limit: 100 })
    const period = periods.data.find(
      (p) => p.status === 'open' && p.start_date <= today && today <= p.end_date,
    )
    const range = period ? { from: period.start_date, to: period.end_date } : monthOf(new Date())
    return { period, range, totals: await timesheetTotals(api, { ...range, group_by: 'day' }) }
  }, [api])
  return (
    <Card id="home-hours" title="Hours this period" loaded={loaded}>
      {({ period, range, totals }) => (
        <>
          <p class="muted">
            {period
              ? `Pay period ${range.from} to ${range.to}`
              : `This month, ${range.from} to ${range.to} (no open pay period covers today)`}
            {!totals.complete && `; the first ${count(totals.rows, 'row')} only`}
          </p>
          <dl class="figures">
            <div>
              <dt>Approved or needing no review</dt>
              <dd>{hours(totals.hours)}</dd>
            </div>
            <div>
              <dt>Pending review</dt>
              <dd>{hours(totals.pending_hours)}</dd>
            </div>
          </dl>
          <Link to={`/timesheets?from=${range.from}&to=${range.to}`}>Open the timesheet</Link>
        </>
      )}
    </Card>
  )
}

/** What a manager opens first: what needs doing now, each figure a link to where it is done. */
export function HomePage() {
  return (
    <>
      <PageTitle>Home</PageTitle>
      <div class="cards">
        <PendingReviews />
        <OpenSessions />
        <PeriodHours />
      </div>
    </>
  )
}
