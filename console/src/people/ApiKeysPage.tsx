import { useState } from 'preact/hooks'
import type { ApiKey, CreatedApiKey } from '../../../packages/client/src/client.js'
import { KEY_SCOPES } from '../../../src/modules/keys/scopes.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { ShownOnce } from '../components/ShownOnce.js'
import { useSignedIn } from '../context.js'
import { BROWSER_ZONE, localTime } from '../format.js'
import { useAction, useNow, usePagedList, useReturnFocus } from '../hooks.js'
import { NewKeyForm } from './NewKeyForm.js'
import { Sites } from './SitesField.js'

const KEY_COLUMNS = 7

/** A key's scopes in words: every one a key may hold is said so, rather than listed (21 of them). */
function scopesText(scopes: readonly string[]): string {
  const all = KEY_SCOPES.length === scopes.length && KEY_SCOPES.every((scope) => scopes.includes(scope))
  return all ? 'every scope a key may hold' : scopes.join(', ')
}

function KeyStatus({ apiKey, now }: { apiKey: ApiKey; now: number }) {
  if (apiKey.revoked_at !== null) return <Badge tone="neutral">revoked</Badge>
  if (apiKey.expires_at !== null && Date.parse(apiKey.expires_at) <= now)
    return <Badge tone="neutral">expired</Badge>
  return <Badge tone="good">active</Badge>
}

function When({ iso }: { iso: string | null }) {
  if (iso === null) return <>never</>
  return (
    <time class="time" dateTime={iso}>
      {localTime(iso, BROWSER_ZONE)}
    </time>
  )
}

/** A key, and under it, on request, the question before revoking it. */
function KeyRows({
  apiKey,
  now,
  onChanged,
}: {
  apiKey: ApiKey
  now: number
  onChanged: (k: ApiKey) => void
}) {
  const { api, can } = useSignedIn()
  const action = useAction()
  const [confirming, setConfirming] = useState(false)
  const button = useReturnFocus<HTMLButtonElement>()
  const name = apiKey.label ?? apiKey.prefix
  const revocable = apiKey.revoked_at === null && can('keys:write')
  const revoke = () =>
    action.run(async () => {
      onChanged(await api.apiKeys.revoke(apiKey.id))
      setConfirming(false)
    })
  return (
    <>
      <tr>
        <td>
          {name}
          <div class="muted ident">{apiKey.prefix}…</div>
        </td>
        <td>{apiKey.mode}</td>
        <td class="scopes-cell">{scopesText(apiKey.scopes)}</td>
        <td>
          <Sites value={apiKey.location_ids} />
        </td>
        <td>
          <When iso={apiKey.expires_at} />
        </td>
        <td>
          <KeyStatus apiKey={apiKey} now={now} />
        </td>
        <td>
          {revocable && (
            <button
              ref={button.ref}
              type="button"
              class="secondary"
              aria-expanded={confirming}
              aria-label={`Revoke ${name}`}
              onClick={() => setConfirming(true)}
            >
              Revoke
            </button>
          )}
        </td>
      </tr>
      {(confirming || action.error) && (
        <tr class="row-detail">
          <td colSpan={KEY_COLUMNS}>
            {confirming && (
              <Confirm
                question={`Revoke the key ${name}?`}
                action="Revoke the key"
                pending={action.pending}
                onConfirm={revoke}
                onCancel={() => {
                  setConfirming(false)
                  button.returnFocus()
                }}
              >
                <p>
                  Every request with it is refused within 5 seconds: whatever uses it stops working. It cannot
                  be undone; make a new key instead.
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

/**
 * The account's API keys, both modes' (owners'): a new one in the console's mode with its scopes,
 * sites and expiry, its secret shown once; revoke one.
 */
export function ApiKeysPage() {
  const { api, can } = useSignedIn()
  const [created, setCreated] = useState<CreatedApiKey | undefined>()
  const list = usePagedList<ApiKey>((cursor) => api.apiKeys.list({ limit: 50, cursor }), [api, created?.id])
  // A key that expires while the page is open reads "expired" soon after.
  const now = useNow(60_000)
  return (
    <>
      <PageTitle>API keys</PageTitle>
      <p class="muted">
        Keys let programs call the API (an integration, a sync, a script). People sign in with their e-mail
        instead; no key manages people or keys.
      </p>
      {can('keys:write') &&
        (created ? (
          <ShownOnce
            title={`New key ${created.label ?? created.prefix}: its secret`}
            label={`Secret of ${created.label ?? created.prefix}`}
            value={created.secret}
            lost="The secret was answered once already, to an earlier try of this request, and is not kept: revoke this key and make another."
            done="Done, the secret is kept"
            onDone={() => setCreated(undefined)}
          >
            <p>
              Put it where the program that uses it keeps its secrets, now: it is not shown again (the service
              keeps only its hash). Lost, revoke the key and make another.
            </p>
          </ShownOnce>
        ) : (
          <NewKeyForm onCreated={setCreated} />
        ))}
      <PagedTable
        list={list}
        caption="API keys of both modes, newest first"
        noun={['key']}
        empty="No API key yet."
        head={
          <>
            <th scope="col">Key</th>
            <th scope="col">Mode</th>
            <th scope="col">Scopes</th>
            <th scope="col">Sites</th>
            <th scope="col">Expires</th>
            <th scope="col">Status</th>
            <th scope="col">Actions</th>
          </>
        }
      >
        {list.items.map((apiKey) => (
          <KeyRows key={apiKey.id} apiKey={apiKey} now={now} onChanged={list.replace} />
        ))}
      </PagedTable>
    </>
  )
}
