import type { ComponentChildren } from 'preact'
import type { SessionListParams } from '../../../packages/client/src/client.js'
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

/**
 * A figure that counts the sessions a filter finds (up to COUNTED) in words, in the singular for
 * one and with `none` for none, and the link to where they are dealt with.
 */
function SessionsFigure({
  id,
  title,
  filter,
  none,
  one,
  other,
  to,
  link,
}: {
  id: string
  title: string
  /** Fixed for the figure: it is counted again only for another key. */
  filter: SessionListParams
  none: string
  /** "session awaits review", after the count. */
  one: string
  other: string
  to: string
  link: string
}) {
  const { api } = useSignedIn()
  const found = useLoad(() => firstItems(api.sessions, filter, COUNTED), [api])
  return (
    <Card id={id} title={title} loaded={found}>
      {(sessions) => (
        <>
          <p class="figure">{sessions.items.length === 0 ? none : counted(sessions, one, other)}</p>
          <Link to={to}>{link}</Link>
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
        <SessionsFigure
          id="home-reviews"
          title="Pending reviews"
          filter={{ review_status: 'pending' }}
          none="Nothing awaits review."
          one="session awaits review"
          other="sessions await review"
          to="/review"
          link="Open the review queue"
        />
        <SessionsFigure
          id="home-open"
          title="Open sessions"
          filter={{ status: 'open' }}
          none="Nobody is checked in now."
          one="session open now"
          other="sessions open now"
          to="/sessions?status=open"
          link="See who is checked in"
        />
        <PeriodHours />
      </div>
    </>
  )
}
