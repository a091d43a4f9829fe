import { useState } from 'preact/hooks'
import { refusalOf } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { CheckboxField, Field } from '../components/Field.js'
import { LocationSelect } from '../components/LocationSelect.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'

const FORM_PARAMS = ['code', 'name', 'location_id']

/** A new device: its code (what scans name as `device_id`), a name, where it stands, and whether it asks for PINs. */
export function NewDeviceForm({ onCreated }: { onCreated: () => void }) {
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
      <LocationSelect id="device-location" value={locationId} onChange={setLocationId} emptyLabel="None" />
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
