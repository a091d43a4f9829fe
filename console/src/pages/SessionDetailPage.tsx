import type { Location, Session, SessionRevision } from '../../../packages/client/src/types.js'
import { pathOf } from '../api.js'
import { Badge } from '../components/Badge.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { LoadMore } from '../components/LoadMore.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { hours, localTime, words } from '../format.js'
import { useLoad, usePagedList } from '../hooks.js'
import { useLocation } from '../locations.js'

type SessionSnapshot = NonNullable<SessionRevision['after']>

/** The fields a revision's change list compares, in reading order, with how each reads. */
const TRACKED: Array<{ field: keyof SessionSnapshot; label: string }> = [
  { field: 'operator_ident', label: 'Operator' },
  { field: 'device_id', label: 'Device' },
  { field: 'location_id', label: 'Location' },
  { field: 'check_in', label: 'Check-in' },
  { field: 'check_out', label: 'Check-out' },
  { field: 'break_minutes', label: 'Break (min)' },
  { field: 'total_hours', label: 'Hours' },
  { field: 'status', label: 'Status' },
  { field: 'flag_reason', label: 'Flag' },
  { field: 'notes', label: 'Notes' },
]

function display(value: unknown, zone: string): string {
  if (value === null || value === undefined) return '—'
  if (typeof value === 'object' && 'time' in value) return localTime(String(value.time), zone)
  return String(value)
}

interface Change {
  label: string
  before: string
  after: string
}

/** What a revision changed, compared field by field (a creation lists what it set). */
function changesOf(revision: SessionRevision, zone: string): Change[] {
  return TRACKED.flatMap(({ field, label }) => {
    const before = display(revision.before?.[field], zone)
    const after = display(revision.after?.[field], zone)
    return before === after ? [] : [{ label, before, after }]
  })
}

function RevisionEntry({ revision, zone }: { revision: SessionRevision; zone: string }) {
  const changes = changesOf(revision, zone)
  return (
    <li class="timeline-entry">
      <p class="timeline-heading">
        <strong>{words(revision.action)}</strong>{' '}
        <span class="muted">{localTime(revision.created, zone)}</span> by key <code>{revision.key_id}</code>
      </p>
      {changes.length > 0 && (
        <dl class="changes">
          {changes.map((change) => (
            <div key={change.label}>
              <dt>{change.label}</dt>
              <dd>
                {change.before} → {change.after}
              </dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  )
}

function SessionFields({
  session,
  location,
  zone,
}: {
  session: Session
  location: Location | undefined
  zone: string
}) {
  const rows: Array<[string, string]> = [
    ['Id', session.id],
    ['Operator', `${session.operator_ident} (${session.operator_id})`],
    ['Device', session.device_id],
    ['Location', location ? `${location.name} (${location.timezone})` : (session.location_id ?? '—')],
    ['Check-in', localTime(session.check_in.time, zone)],
    ['Check-out', session.check_out ? localTime(session.check_out.time, zone) : '—'],
    ['Break', `${session.break_minutes} min`],
    ['Hours', hours(session.total_hours)],
    ['Status', session.status],
    ['Flag', session.is_flagged ? words(session.flag_reason) : 'not flagged'],
    ['Source', session.source],
    ['Notes', session.notes ?? '—'],
    ['Created', localTime(session.created, zone)],
    ['Updated', localTime(session.updated, zone)],
  ]
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

/** All of a session's fields and its edit history; the history stays readable after a delete. */
export function SessionDetailPage({ id }: { id: string }) {
  const { api } = useSignedIn()
  const session = useLoad(() => api.get<Session>(pathOf('/v1/sessions', id)), [api, id])
  const revisions = usePagedList<SessionRevision>(
    (cursor) => api.list<SessionRevision>(pathOf('/v1/sessions', id, 'revisions'), { limit: 50 }, cursor),
    [api, id],
  )
  const place = useLocation(session.value?.location_id ?? null)
  const zone = place.timeZone
  // Times are shown once the location's zone is known, never first in UTC.
  const timesReady = !session.loading && place.ready
  const deleted = session.error?.status === 404 && revisions.items.length > 0

  return (
    <>
      <PageTitle>{`Session ${id}`}</PageTitle>
      {session.value && (
        <p>
          {session.value.is_flagged ? (
            <Badge tone="warn">flagged for review</Badge>
          ) : (
            <Badge tone="good">not flagged</Badge>
          )}
        </p>
      )}
      {deleted ? (
        <p class="notice">This session was deleted; its history is kept.</p>
      ) : (
        <ErrorNotice error={session.error} />
      )}
      {session.value && timesReady && (
        <SessionFields session={session.value} location={place.location} zone={zone} />
      )}
      <h2>History</h2>
      <p class="muted">Newest first, times in {zone}.</p>
      <ErrorNotice error={revisions.error} />
      <ol class="timeline">
        {timesReady &&
          revisions.items.map((revision) => (
            <RevisionEntry key={revision.id} revision={revision} zone={zone} />
          ))}
      </ol>
      <LoadMore
        count={revisions.items.length}
        noun="revisions"
        hasMore={revisions.hasMore}
        loading={revisions.loading}
        onLoadMore={revisions.loadMore}
      />
    </>
  )
}
