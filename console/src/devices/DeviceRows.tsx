import { useState } from 'preact/hooks'
import type { Device } from '../../../packages/client/src/client.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { useSignedIn } from '../context.js'
import { count, localTime } from '../format.js'
import { useAction, useReturnFocus } from '../hooks.js'
import { LocationName, useLocation } from '../locations.js'
import { type IssuedCode, PairingCodePanel } from './PairingCodePanel.js'
import { RequirePin } from './RequirePin.js'

/** How long ago a device was last seen, in words: "just now", "5 minutes ago", "3 days ago". */
function ago(iso: string, now: number): string {
  const minutes = Math.floor((now - Date.parse(iso)) / 60_000)
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${count(minutes, 'minute')} ago`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${count(hours, 'hour')} ago`
  return `${count(Math.floor(hours / 24), 'day')} ago`
}

/** When the device's key last made a request: how long ago, then the time in its location's zone. */
function LastSeen({ device, now }: { device: Device; now: number }) {
  const { ready, timeZone } = useLocation(device.location_id)
  if (device.last_seen_at === null) return <span class="muted">never</span>
  return (
    <>
      {ago(device.last_seen_at, now)}
      <br />
      <time class="muted time" dateTime={device.last_seen_at}>
        {/* Once the location's zone is known, never first in UTC. */}
        {ready ? localTime(device.last_seen_at, timeZone) : '…'}
      </time>
    </>
  )
}

type Detail = { kind: 'pairing'; issued: IssuedCode } | { kind: 'unpair' } | undefined

/**
 * A device's row, and under it, on request, its pairing code or the question before unpairing it,
 * and the API's refusal of either.
 */
export function DeviceRows({
  device,
  now,
  onChanged,
}: {
  device: Device
  now: number
  onChanged: (device: Device) => void
}) {
  const { api, can } = useSignedIn()
  const edits = can('devices:write')
  const action = useAction()
  const [detail, setDetail] = useState<Detail>()
  // Closing the code or the question puts the focus back on the row's button (Pair once unpaired).
  const pairButton = useReturnFocus<HTMLButtonElement>()
  const unpairButton = useReturnFocus<HTMLButtonElement>()
  const pair = () =>
    action.run(async () => {
      const code = await api.devices.createPairingCode(device.id)
      setDetail({ kind: 'pairing', issued: { code, wasPaired: device.paired } })
    })
  const unpair = async () => {
    let unpaired = false
    await action.run(async () => {
      onChanged(await api.devices.unpair(device.id))
      setDetail(undefined)
      unpaired = true
    })
    // Once the request is over, when Pair is no longer disabled; a refusal stays in the question.
    if (unpaired) pairButton.returnFocus()
  }
  return (
    <>
      <tr>
        <td>
          {device.name ?? '—'} <span class="muted ident">{device.code}</span>
        </td>
        <td>{device.location_id === null ? '—' : <LocationName id={device.location_id} />}</td>
        <td>
          {device.paired ? <Badge tone="good">paired</Badge> : <Badge tone="neutral">not paired</Badge>}
        </td>
        <td>
          <LastSeen device={device} now={now} />
        </td>
        <td>
          <RequirePin device={device} onChanged={onChanged} />
        </td>
        {edits && (
          <td>
            <div class="actions">
              <button
                ref={pairButton.ref}
                type="button"
                class="secondary"
                onClick={pair}
                disabled={action.pending}
                aria-label={`${device.paired ? 'Pair again' : 'Pair'} ${device.code}`}
              >
                {device.paired ? 'Pair again' : 'Pair'}
              </button>
              {device.paired && (
                <button
                  ref={unpairButton.ref}
                  type="button"
                  class="secondary"
                  aria-expanded={detail?.kind === 'unpair'}
                  onClick={() => setDetail({ kind: 'unpair' })}
                  aria-label={`Unpair ${device.code}`}
                >
                  Unpair
                </button>
              )}
            </div>
          </td>
        )}
      </tr>
      {(detail || action.error) && (
        <tr class="row-detail">
          <td colSpan={6}>
            {detail?.kind === 'pairing' && (
              <PairingCodePanel
                device={device}
                issued={detail.issued}
                pending={action.pending}
                onNewCode={pair}
                onPaired={onChanged}
                onClose={() => {
                  setDetail(undefined)
                  pairButton.returnFocus()
                }}
              />
            )}
            {detail?.kind === 'unpair' && (
              <Confirm
                question={`Unpair ${device.code}?`}
                action="Unpair"
                pending={action.pending}
                onConfirm={unpair}
                onCancel={() => {
                  setDetail(undefined)
                  unpairButton.returnFocus()
                }}
              >
                <p>
                  Its key is revoked: within 5 seconds the tablet can no longer scan, and shows that it was
                  unpaired (scans it saved offline stay on it). Pair it again with a new code.
                </p>
              </Confirm>
            )}
            <ErrorNotice error={action.error} />
          </td>
        </tr>
      )}
    </>
  )
}
