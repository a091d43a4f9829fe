import type { Session } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { checkOutText, count, localTime } from '../format.js'

type Break = Session['breaks'][number]

const SOURCES: Record<Break['source'], string> = {
  api: 'entered through the API',
  scan: 'recorded by break scans',
}

function BreakEntry({ record, zone }: { record: Break; zone: string }) {
  const start = localTime(record.start.time, zone)
  const minutes = record.end
    ? Math.round((Date.parse(record.end.time) - Date.parse(record.start.time)) / 60_000)
    : undefined
  return (
    <li class="timeline-entry timeline-break">
      <p class="timeline-heading">
        <strong>Break</strong>{' '}
        {record.paid ? <Badge tone="good">paid</Badge> : <Badge tone="neutral">unpaid</Badge>}
        {minutes !== undefined && ` ${count(minutes, 'min', 'min')}`}
      </p>
      <p class="timeline-detail">
        {record.end ? (
          <>
            <span class="time">{start}</span> to <span class="time">{localTime(record.end.time, zone)}</span>
          </>
        ) : (
          <>
            <span class="time">{start}</span>, still going on
          </>
        )}
        <span class="muted">, {SOURCES[record.source]}</span>
      </p>
    </li>
  )
}

/**
 * What happened in the session, in order: the check-in, each break (when, how long, paid or not,
 * recorded how) and the check-out, in the session's zone. A paid break counts as worked time; the
 * unpaid ones make its `break_minutes`.
 */
export function SessionTimeline({ session, zone }: { session: Session; zone: string }) {
  const time = (iso: string) => localTime(iso, zone)
  const breaks = [...session.breaks].sort((a, b) => Date.parse(a.start.time) - Date.parse(b.start.time))
  return (
    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Check-in, breaks and check-out</h2>
      <p class="muted">
        {breaks.length === 0
          ? `No break recorded with its times${session.break_minutes > 0 ? `; ${session.break_minutes} min of break were entered as a length only` : ''}.`
          : `${count(breaks.length, 'break')}; times in ${zone}.`}
      </p>
      <ol class="timeline" aria-label="Check-in, breaks and check-out">
        <li class="timeline-entry">
          <p class="timeline-heading">
            <strong>Check-in</strong> <span class="time">{time(session.check_in.time)}</span>
          </p>
        </li>
        {breaks.map((record) => (
          <BreakEntry key={record.start.time} record={record} zone={zone} />
        ))}
        <li class="timeline-entry">
          <p class="timeline-heading">
            <strong>Check-out</strong> <span class="time">{checkOutText(session, time)}</span>
          </p>
        </li>
      </ol>
    </section>
  )
}
