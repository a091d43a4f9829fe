import { useEffect, useRef, useState } from 'preact/hooks'
import type { Device, DevicePairingCode } from '../../../packages/client/src/client.js'
import { refusalOf } from '../api.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { CheckboxField, Field } from '../components/Field.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { clockTime, count, localTime } from '../format.js'
import { useAction, usePagedList, useReturnFocus } from '../hooks.js'
import { LocationName, useLocation } from '../locations.js'

/** How often an open pairing code asks whether its tablet has paired yet. */
const PAIRED_POLL_MS = 3000

/** What is left of a countdown, as a kitchen timer shows it: "9:05". */
function minutesAndSeconds(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`
}

/** How long ago a device was last seen, in words: "just now", "5 minutes ago", "3 days ago". */
function ago(iso: string, now: number): string {
  const minutes = Math.floor((now - Date.parse(iso)) / 60_000)
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${count(minutes, 'minute')} ago`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${count(hours, 'hour')} ago`
  return `${count(Math.floor(hours / 24), 'day')} ago`
}

/** The current time, again every `everyMs`: what a countdown or an "ago" is measured from. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now)
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
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

/** A code just made for a device, and whether the device held a key when it was made. */
interface IssuedCode {
  code: DevicePairingCode
  /** A paired device is being paired again: the page cannot tell when the new tablet took the code. */
  wasPaired: boolean
}

/**
 * A pairing code as the manager reads it out to the tablet: large, with its expiry as a time of day and
 * a countdown, and where to enter it. For a device that held no key, the panel asks every few seconds
 * whether it holds one now, and says so once the tablet has used the code.
 */
function PairingCodePanel({
  device,
  issued,
  pending,
  onNewCode,
  onPaired,
  onClose,
}: {
  device: Device
  issued: IssuedCode
  pending: boolean
  onNewCode: () => void
  onPaired: (device: Device) => void
  onClose: () => void
}) {
  const { api } = useSignedIn()
  const now = useNow(1000)
  const panel = useRef<HTMLElement>(null)
  // The tablet's clock shows its location's time: the expiry is said in that zone, named, as the
  // last sighting is (UTC, named too, for a device at no location).
  const { ready, timeZone } = useLocation(device.location_id)
  const { code, wasPaired } = issued
  const expiresAt = Date.parse(code.expires_at)
  const paired = !wasPaired && device.paired
  const expired = !paired && now >= expiresAt
  const waiting = !wasPaired && !paired && !expired
  // The panel takes the focus when a code is shown, so a screen reader reads it out.
  useEffect(() => panel.current?.focus(), [code.code])
  useEffect(() => {
    if (!waiting) return
    const timer = setInterval(() => {
      api.devices.retrieve(device.id).then(
        (latest) => {
          if (latest.paired) onPaired(latest)
        },
        // A failed look is tried again at the next tick: the code itself is still good.
        () => undefined,
      )
    }, PAIRED_POLL_MS)
    return () => clearInterval(timer)
  }, [api, device.id, waiting])
  const title = `Pairing code for ${device.code}`
  return (
    <section ref={panel} class="pairing" aria-label={title} tabIndex={-1}>
      <h2>{title}</h2>
      {!paired && (
        <>
          <p class={expired ? 'pairing-code pairing-code-expired' : 'pairing-code'}>{code.code}</p>
          {/* The countdown is no live region: a screen reader would read it out every second. */}
          {!expired && (
            <p>
              Expires at{' '}
              <time dateTime={code.expires_at}>{ready ? clockTime(code.expires_at, timeZone) : '…'}</time>{' '}
              <span class="muted">(in {minutesAndSeconds(expiresAt - now)})</span>; it pairs one tablet, once.
            </p>
          )}
        </>
      )}
      {/* One live region, there from the start, says what changed: paired, or the code expired. */}
      <p role="status" class={paired ? 'pairing-status pairing-done' : 'pairing-status'}>
        {paired && `Paired: the tablet at ${device.code} holds its key and can scan.`}
        {expired && <strong>This code has expired: make a new one.</strong>}
      </p>
      {!paired && (
        <p>
          On the tablet at the gate, open{' '}
          <strong class="kiosk-address">{`${window.location.origin}/kiosk`}</strong> and enter this code.
          {wasPaired &&
            ' The tablet paired now stops scanning as soon as the code is used: pairing replaces its key.'}
          {waiting && ' This page says when the tablet has paired.'}
        </p>
      )}
      <div class="actions">
        {!paired && (
          <button type="button" class="secondary" onClick={onNewCode} disabled={pending}>
            New code
          </button>
        )}
        <button type="button" class="secondary" onClick={onClose}>
          Done
        </button>
      </div>
    </section>
  )
}

/** Whether scans at the device need the operator's PIN, set in place (`PATCH require_pin`). */
function RequirePin({ device, onChanged }: { device: Device; onChanged: (device: Device) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  // While the API has the change, the box shows it; a refusal puts back what the device has.
  const [asked, setAsked] = useState(device.require_pin)
  const toggle = (requirePin: boolean) => {
    setAsked(requirePin)
    return action.run(async () => onChanged(await api.devices.update(device.id, { require_pin: requirePin })))
  }
  return (
    <>
      <input
        type="checkbox"
        aria-label={`Require a PIN at ${device.code}`}
        checked={action.pending ? asked : device.require_pin}
        disabled={action.pending}
        onChange={(event) => toggle(event.currentTarget.checked)}
      />
      <ErrorNotice error={action.error} />
    </>
  )
}

type Detail = { kind: 'pairing'; issued: IssuedCode } | { kind: 'unpair' } | undefined

/**
 * A device's row, and under it, on request, its pairing code or the question before unpairing it,
 * and the API's refusal of either.
 */
function DeviceRows({
  device,
  now,
  onChanged,
}: {
  device: Device
  now: number
  onChanged: (device: Device) => void
}) {
  const { api } = useSignedIn()
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

const FORM_PARAMS = ['code', 'name', 'location_id']

/** A new device: its code (what scans name as `device_id`), a name, where it stands, and whether it asks for PINs. */
function NewDeviceForm({ onCreated }: { onCreated: () => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const [code, setCode] = useState('')
  const [name, setName] = useState('')
  const [locationId, setLocationId] = useState('')
  const [requirePin, setRequirePin] = useState(false)
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      await api.devices.create({
        code: code.trim(),
        name: name.trim() || null,
        location_id: locationId || null,
        require_pin: requirePin,
      })
      setCode('')
      setName('')
      setLocationId('')
      setRequirePin(false)
      onCreated()
    })
  }
  const fieldError = FORM_PARAMS.some((param) => refusalOf(action.error, param) !== undefined)
  return (
    <form class="filters" onSubmit={submit} aria-label="New device">
      <Field
        id="device-code"
        label="Code"
        required
        value={code}
        onValue={setCode}
        error={refusalOf(action.error, 'code')}
      />
      <Field
        id="device-name"
        label="Name"
        value={name}
        onValue={setName}
        error={refusalOf(action.error, 'name')}
      />
      <div>
        <label for="device-location">Location</label>
        <LocationSelect id="device-location" value={locationId} onChange={setLocationId} emptyLabel="None" />
      </div>
      <CheckboxField
        id="device-require-pin"
        label="Require a PIN"
        checked={requirePin}
        onChecked={setRequirePin}
      />
      <button type="submit" disabled={action.pending}>
        Add device
      </button>
      {!fieldError && <ErrorNotice error={action.error} />}
    </form>
  )
}

/**
 * The account's devices (the time clocks at its gates): add one, pair a tablet with a code, unpair
 * it, and whether its scans need the operator's PIN (decisions.md, "The time clock").
 */
export function DevicesPage() {
  const { api } = useSignedIn()
  const [created, setCreated] = useState(0)
  const list = usePagedList((cursor) => api.devices.list({ limit: 50, cursor }), [api, created])
  // "Last seen 3 minutes ago" moves on while the page is open.
  const now = useNow(30_000)
  return (
    <>
      <PageTitle>Devices</PageTitle>
      <p class="muted">
        A device is a time clock: a tablet at a gate running the kiosk page, paired with a code made here. A
        paired device's key can only scan at that device.
      </p>
      <NewDeviceForm onCreated={() => setCreated((n) => n + 1)} />
      <PagedTable
        list={list}
        caption="Devices, newest first"
        noun={['device']}
        empty="No device yet."
        head={
          <>
            <th scope="col">Device</th>
            <th scope="col">Location</th>
            <th scope="col">Status</th>
            <th scope="col">Last seen</th>
            <th scope="col">PIN required</th>
            <th scope="col">Actions</th>
          </>
        }
      >
        {list.items.map((device) => (
          <DeviceRows key={device.id} device={device} now={now} onChanged={list.replace} />
        ))}
      </PagedTable>
    </>
  )
}
