import { useSignedIn } from '../context.js'
import { useLoad } from '../hooks.js'
import { SelectField } from './Field.js'

/**
 * A location menu under its label ("Location" unless named): "Any" (a filter's words for no location;
 * a form names it with `emptyLabel`), then the account's locations by name.
 */
export function LocationSelect({
  id,
  label = 'Location',
  value,
  onChange,
  emptyLabel = 'Any',
}: {
  id: string
  label?: string
  value: string
  onChange: (locationId: string) => void
  emptyLabel?: string
}) {
  const { api } = useSignedIn()
  // The first 200 locations fill the menu; a longer list is rare for one account.
  const locations = useLoad(async () => (await api.locations.list({ limit: 200 })).data, [api])
  const options: ReadonlyArray<readonly [string, string]> = [
    ['', emptyLabel],
    ...(locations.value ?? []).map((location) => [location.id, location.name] as const),
  ]
  return <SelectField id={id} label={label} value={value} onValue={onChange} options={options} />
}
