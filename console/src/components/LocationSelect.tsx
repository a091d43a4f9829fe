import { useSignedIn } from '../context.js'
import { useLoad } from '../hooks.js'

/**
 * A location menu: "Any" (a filter's words for no location; a form names it with `emptyLabel`), then
 * the account's locations by name.
 */
export function LocationSelect({
  id,
  value,
  onChange,
  emptyLabel = 'Any',
}: {
  id: string
  value: string
  onChange: (locationId: string) => void
  emptyLabel?: string
}) {
  const { api } = useSignedIn()
  // The first 200 locations fill the menu; a longer list is rare for one account.
  const locations = useLoad(async () => (await api.locations.list({ limit: 200 })).data, [api])
  return (
    <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
      <option value="">{emptyLabel}</option>
      {(locations.value ?? []).map((location) => (
        <option key={location.id} value={location.id}>
          {location.name}
        </option>
      ))}
    </select>
  )
}
