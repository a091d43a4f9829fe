import {
  APPROVE_SCOPE,
  PEOPLE_ONLY_RESOURCES,
  SCOPE_RESOURCES,
  type Scope,
  type ScopeResource,
} from '../../../src/modules/keys/scopes.js'
import { SelectField } from '../components/Field.js'

/** What a key may hold, by resource (the service's own list: no `users` or `keys`, people's only). */
const KEY_RESOURCES = SCOPE_RESOURCES.filter((resource) => !PEOPLE_ONLY_RESOURCES.includes(resource))

type Access = '' | 'read' | 'write'
const ACCESS_OPTIONS: ReadonlyArray<readonly [Access, string]> = [
  ['', 'none'],
  ['read', 'read'],
  ['write', 'read and write'],
]

const RESOURCE_WORDS: Readonly<Record<ScopeResource, string>> = {
  operators: 'Operators',
  sessions: 'Sessions',
  devices: 'Devices',
  locations: 'Locations',
  scans: 'Scans',
  webhooks: 'Webhooks',
  events: 'Events',
  timesheets: 'Timesheets and pay',
  schedules: 'Schedules',
  leave: 'Leave',
  users: 'People',
  keys: 'API keys',
}

function accessOf(scopes: readonly Scope[], resource: ScopeResource): Access {
  if (scopes.includes(`${resource}:write`)) return 'write'
  return scopes.includes(`${resource}:read`) ? 'read' : ''
}

/**
 * A new key's scopes: every scope a key may hold (`null`, the API's default), or chosen resource by
 * resource (none, read, or read and write), and approving sessions apart, as the API keeps it.
 */
export function ScopesField({
  value,
  onValue,
  error,
}: {
  value: readonly Scope[] | null
  onValue: (value: Scope[] | null) => void
  error?: string | undefined
}) {
  const chosen = value ?? []
  const setAccess = (resource: ScopeResource, access: Access) => {
    const others = chosen.filter((scope) => !scope.startsWith(`${resource}:`))
    onValue(access === '' ? others : [...others, `${resource}:${access}`])
  }
  return (
    <fieldset class="scopes-field" aria-describedby={error ? 'key-scopes-error' : undefined}>
      <legend>Scopes</legend>
      <label class="choice">
        <input type="radio" name="key-scopes" checked={value === null} onChange={() => onValue(null)} />
        Every scope a key may hold
      </label>
      <label class="choice">
        <input
          type="radio"
          name="key-scopes"
          checked={value !== null}
          onChange={() => value === null && onValue([])}
        />
        Only these
      </label>
      {value !== null && (
        <div class="scopes">
          {KEY_RESOURCES.map((resource) => (
            <SelectField
              key={resource}
              id={`scope-${resource}`}
              label={RESOURCE_WORDS[resource]}
              value={accessOf(chosen, resource)}
              onValue={(access) => setAccess(resource, access)}
              options={ACCESS_OPTIONS}
            />
          ))}
          <label class="choice">
            <input
              type="checkbox"
              checked={chosen.includes(APPROVE_SCOPE)}
              onChange={(event) =>
                onValue(
                  event.currentTarget.checked
                    ? [...chosen, APPROVE_SCOPE]
                    : chosen.filter((scope) => scope !== APPROVE_SCOPE),
                )
              }
            />
            Approve and reject sessions
          </label>
        </div>
      )}
      {error && (
        <p id="key-scopes-error" class="field-error">
          {error}
        </p>
      )}
    </fieldset>
  )
}
