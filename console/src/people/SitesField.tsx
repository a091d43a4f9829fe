import type { Location } from '../../../packages/client/src/client.js'
import { useSignedIn } from '../context.js'
import { useLoad } from '../hooks.js'
import { LocationName } from '../locations.js'

/**
 * Where a person or a key may act (decisions.md, "Sites"): every location (`null`), or only those
 * ticked (never none: the box of the last one stays ticked). The locations listed are the mode's the
 * console is in; a site of the other mode already held is kept, named by its id.
 */
export function SitesField({
  id,
  legend,
  value,
  onValue,
  error,
}: {
  id: string
  legend: string
  value: readonly string[] | null
  onValue: (value: string[] | null) => void
  error?: string | undefined
}) {
  const { api } = useSignedIn()
  // The first 200 locations; an account has a handful of sites.
  const locations = useLoad(async () => (await api.locations.list({ limit: 200 })).data, [api])
  const known: readonly Pick<Location, 'id' | 'name'>[] = locations.value ?? []
  const held = value ?? []
  const listed = [
    ...known,
    ...held.filter((site) => !known.some((l) => l.id === site)).map((site) => ({ id: site, name: site })),
  ]
  const toggle = (site: string, on: boolean) => {
    const next = on ? [...held, site] : held.filter((other) => other !== site)
    if (next.length > 0) onValue(next)
  }
  const only = () => {
    const first = known[0]
    if (value === null && first) onValue([first.id])
  }
  return (
    <fieldset class="sites-field" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      <label class="choice">
        <input type="radio" name={id} checked={value === null} onChange={() => onValue(null)} />
        Every location
      </label>
      <label class="choice">
        <input
          type="radio"
          name={id}
          checked={value !== null}
          disabled={known.length === 0 && value === null}
          onChange={only}
        />
        Only these locations
      </label>
      {value !== null && (
        <ul class="sites">
          {listed.map((location) => (
            <li key={location.id}>
              <label class="choice">
                <input
                  type="checkbox"
                  checked={held.includes(location.id)}
                  onChange={(event) => toggle(location.id, event.currentTarget.checked)}
                />
                {location.name}
              </label>
            </li>
          ))}
        </ul>
      )}
      {locations.value?.length === 0 && (
        <p class="muted field-hint">No location yet: every location it is.</p>
      )}
      {error && (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      )}
    </fieldset>
  )
}

/** A principal's sites in words: "Every location", or the names of those it is held to. */
export function Sites({ value }: { value: readonly string[] | null }) {
  if (value === null) return <>Every location</>
  return (
    <>
      {value.map((site, i) => (
        <span key={site}>
          {i > 0 && ', '}
          <LocationName id={site} />
        </span>
      ))}
    </>
  )
}
