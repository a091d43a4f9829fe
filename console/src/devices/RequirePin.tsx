import { useState } from 'preact/hooks'
import type { Device } from '../../../packages/client/src/client.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'

/**
 * Whether scans at the device need the operator's PIN, set in place (`PATCH require_pin`); read-only
 * without `devices:write`.
 */
export function RequirePin({ device, onChanged }: { device: Device; onChanged: (device: Device) => void }) {
  const { api, can } = useSignedIn()
  const action = useAction()
  // While the API has the change, the box shows it; a refusal puts back what the device has.
  const [asked, setAsked] = useState(device.require_pin)
  const toggle = (requirePin: boolean) => {
    setAsked(requirePin)
    return action.run(async () => onChanged(await api.devices.update(device.id, { require_pin: requirePin })))
  }
  // One who may not change devices reads the setting where the box would be.
  if (!can('devices:write')) return <>{device.require_pin ? 'yes' : 'no'}</>
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
