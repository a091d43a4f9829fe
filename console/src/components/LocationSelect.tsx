import { useSignedIn } from '../context.js'
import { useLoad } from '../hooks.js'

/** A filter's location menu: "Any", then the account's locations by name. */
export function LocationSelect({
  id,
  value,
  onChange,
}: {
  id: string
  value: string
  onChange: (locationId: string) => void
}) {
  const { api } = useSignedIn()
  // The first 200 locations fill the menu; a longer list is rare for one account.
  const locations = useLoad(async () => (await api.locations.list({ limit: 200 })).data, [api])
  return (
    <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
      <option value="">Any</option>
      {(locations.value ?? []).map((location) => (
        <option key={location.id} value={location.id}>
          {location.name}
        </option>
      ))}
    </select>
  )
}
