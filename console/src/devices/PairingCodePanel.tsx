import { useEffect, useRef } from 'preact/hooks'
import type { Device, DevicePairingCode } from '../../../packages/client/src/client.js'
import { useSignedIn } from '../context.js'
import { clockTime } from '../format.js'
import { useNow } from '../hooks.js'
import { useLocation } from '../locations.js'

/** How often an open pairing code asks whether its tablet has paired yet. */
const PAIRED_POLL_MS = 3000

/** What is left of a countdown, as a kitchen timer shows it: "9:05". */
function minutesAndSeconds(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`
}

/** A code just made for a device, and whether the device held a key when it was made. */
export interface IssuedCode {
  code: DevicePairingCode
  /** A paired device is being paired again: the page cannot tell when the new tablet took the code. */
  wasPaired: boolean
}

/**
 * A pairing code as the manager reads it out to the tablet: large, with its expiry as a time of day and
 * a countdown, and where to enter it. For a device that held no key, the panel asks every few seconds
 * whether it holds one now, and says so once the tablet has used the code.
 */
export function PairingCodePanel({
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
