import type { SessionRevision } from '../../../packages/client/src/client.js'
import { Paged } from '../components/PagedTable.js'
import { flagReason, localTime, words } from '../format.js'
import type { PagedList } from '../hooks.js'
import { LocationName } from '../locations.js'

type SessionSnapshot = NonNullable<SessionRevision['after']>
type Field = keyof SessionSnapshot

/** The fields a revision's change list compares, in reading order, with how each reads. */
const TRACKED: Array<{ field: Field; label: string }> = [
  { field: 'operator_ident', label: 'Operator' },
  { field: 'device_id', label: 'Device' },
  { field: 'location_id', label: 'Location' },
  { field: 'check_in', label: 'Check-in' },
  { field: 'check_out', label: 'Check-out' },
  { field: 'breaks', label: 'Breaks' },
  { field: 'break_minutes', label: 'Break (min)' },
  { field: 'total_hours', label: 'Hours' },
  { field: 'status', label: 'Status' },
  { field: 'flag_reason', label: 'Flag' },
  { field: 'notes', label: 'Notes' },
  { field: 'review_status', label: 'Review' },
  { field: 'review_note', label: 'Review note' },
]

/** How an actor without a name (an unlabelled key, a deleted device) is called, beside its id. */
const UNNAMED = { api_key: 'key', user: 'person', device: 'device' } as const

/**
 * Who made a change, as the API names them now (`actor`): a person by name, a key by its label, a
 * device by its code; the service as itself; an id when there is no name (an unlabelled key, a
 * deleted device).
 */
export function actorOf(revision: Pick<SessionRevision, 'actor'>): string {
  const { actor } = revision
  if (actor.type === 'service') return 'the service'
  if (actor.name !== null) return actor.name
  return `${UNNAMED[actor.type]} ${actor.id}`
}

/** A revision's list of breaks in a line: "none", or each one's times and whether it is paid. */
function breaksText(breaks: SessionSnapshot['breaks'], zone: string): string {
  if (breaks.length === 0) return 'none'
  return breaks
    .map((record) => {
      const end = record.end ? localTime(record.end.time, zone) : 'going on'
      return `${localTime(record.start.time, zone)} to ${end}${record.paid ? ' (paid)' : ''}`
    })
    .join('; ')
}

/** One field's value as a manager reads it: a location by name, a time in the session's zone. */
function FieldValue({ field, value, zone }: { field: Field; value: unknown; zone: string }) {
  if (value === null || value === undefined) return <>—</>
  if (field === 'location_id') return <LocationName id={String(value)} />
  if (field === 'flag_reason') return <>{flagReason(String(value))}</>
  if (field === 'review_status') return <>{words(String(value))}</>
  if (field === 'breaks') return <>{breaksText(value as SessionSnapshot['breaks'], zone)}</>
  if (typeof value === 'object' && 'time' in value) return <>{localTime(String(value.time), zone)}</>
  return <>{String(value)}</>
}

/** What a revision changed, field by field (a creation lists what it set). */
function changesOf(revision: SessionRevision): Array<{ field: Field; label: string }> {
  return TRACKED.filter(
    ({ field }) =>
      JSON.stringify(revision.before?.[field] ?? null) !== JSON.stringify(revision.after?.[field] ?? null),
  )
}

function RevisionEntry({ revision, zone }: { revision: SessionRevision; zone: string }) {
  const changes = changesOf(revision)
  return (
    <li class="timeline-entry">
      <p class="timeline-heading">
        <strong>{words(revision.action)}</strong>{' '}
        <span class="muted">{localTime(revision.created, zone)}</span> by {actorOf(revision)}
      </p>
      {changes.length > 0 && (
        <dl class="changes">
          {changes.map(({ field, label }) => (
            <div key={field}>
              <dt>{label}</dt>
              <dd>
                <FieldValue field={field} value={revision.before?.[field]} zone={zone} /> →{' '}
                <FieldValue field={field} value={revision.after?.[field]} zone={zone} />
              </dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  )
}

/** A session's revisions, newest first, as a timeline; `ready` once the zone of its times is known. */
export function History({
  revisions,
  zone,
  ready,
}: {
  revisions: PagedList<SessionRevision>
  zone: string
  ready: boolean
}) {
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <p class="muted">Newest first, times in {zone}.</p>
      <Paged list={revisions} noun={['revision']} empty="No revision.">
        <ol class="timeline">
          {ready &&
            revisions.items.map((revision) => (
              <RevisionEntry key={revision.id} revision={revision} zone={zone} />
            ))}
        </ol>
      </Paged>
    </section>
  )
}
