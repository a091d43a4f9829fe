import { useState } from 'preact/hooks'
import type { Session, SessionUpdateParams } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { instantOf, wallClockOf } from '../zoned-time.js'

/** Only what the manager changed is sent: an unchanged field stays out of the PATCH. */
function changesOf(
  session: Session,
  checkOut: string,
  breakMinutes: string,
  zone: string,
): SessionUpdateParams {
  const body: SessionUpdateParams = {}
  const time = instantOf(checkOut, zone)
  if (time && (!session.check_out || Date.parse(session.check_out.time) !== Date.parse(time))) {
    body.check_out = { time }
  }
  const minutes = Number(breakMinutes)
  if (breakMinutes !== '' && minutes !== session.break_minutes) body.break_minutes = minutes
  return body
}

/**
 * The check-out and the break of a session that is not open (`PATCH /v1/sessions/{id}`): how a
 * forgotten check-out, closed by the service without one, is completed before it is approved. Times
 * are entered in the session's zone (its location's, else UTC), whatever the browser's zone is.
 */
export function CorrectionForm({
  session,
  zone,
  onSaved,
}: {
  session: Session
  zone: string
  onSaved: (session: Session) => void
}) {
  const { api } = useSignedIn()
  const action = useAction()
  const [checkOut, setCheckOut] = useState(session.check_out ? wallClockOf(session.check_out.time, zone) : '')
  const [breakMinutes, setBreakMinutes] = useState(String(session.break_minutes))
  const [unchanged, setUnchanged] = useState(false)
  const submit = (event: Event) => {
    event.preventDefault()
    const body = changesOf(session, checkOut, breakMinutes, zone)
    setUnchanged(Object.keys(body).length === 0)
    if (Object.keys(body).length === 0) return
    return action.run(async () => onSaved(await api.sessions.update(session.id, body)))
  }
  return (
    <form class="filters correction" onSubmit={submit} aria-labelledby="correction-heading">
      <h2 id="correction-heading">Check-out and break</h2>
      <Field
        id="correction-check-out"
        label={`Check-out (${zone} time)`}
        type="datetime-local"
        required
        value={checkOut}
        onValue={setCheckOut}
      />
      <Field
        id="correction-break"
        label="Break (minutes)"
        type="number"
        min={0}
        step={1}
        required
        // With break records, the minutes follow from them: the API refuses both at once.
        disabled={session.breaks.length > 0}
        aria-describedby={session.breaks.length > 0 ? 'correction-break-note' : undefined}
        value={breakMinutes}
        onValue={setBreakMinutes}
      />
      {session.breaks.length > 0 && (
        <p id="correction-break-note" class="muted form-note">
          The break is the unpaid total of the breaks recorded below.
        </p>
      )}
      <button type="submit" disabled={action.pending}>
        Save check-out and break
      </button>
      <p class="muted form-note" aria-live="polite">
        {unchanged
          ? 'Nothing to save: the check-out and the break are as recorded.'
          : 'Saving records an edit: the session then awaits review again.'}
      </p>
      <ErrorNotice error={action.error} />
    </form>
  )
}
