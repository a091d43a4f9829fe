import { useState } from 'preact/hooks'
import type { Role, User, UserWithInviteUrl } from '../../../packages/client/src/client.js'
import { ROLE_OPTIONS, ROLE_WORDS } from '../access.js'
import { Badge } from '../components/Badge.js'
import { Confirm } from '../components/Confirm.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { SelectField } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { BROWSER_ZONE, localTime } from '../format.js'
import { useAction, useReturnFocus } from '../hooks.js'
import { InviteLink } from './InviteLink.js'
import { Sites, SitesField } from './SitesField.js'

export const USER_COLUMNS = 6

const STATUS_TONE = { invited: 'warn', active: 'good', deactivated: 'neutral' } as const

type Detail =
  | { kind: 'sites'; sites: string[] | null }
  | { kind: 'deactivate' }
  | { kind: 'link'; invited: UserWithInviteUrl }
  | undefined

/**
 * A person of the account, and under the row, on request, their sites' form, the question before
 * deactivating them or their new invitation link. Nobody changes their own role, sites or status
 * (the API refuses it): one's own row offers nothing.
 */
export function UserRows({ user, onChanged }: { user: User; onChanged: (user: User) => void }) {
  const { api, who } = useSignedIn()
  const action = useAction()
  const [detail, setDetail] = useState<Detail>()
  const rowButton = useReturnFocus<HTMLButtonElement>()
  const self = who.kind === 'person' && who.user.id === user.id
  const close = () => {
    setDetail(undefined)
    rowButton.returnFocus()
  }
  const change = (work: () => Promise<User>) =>
    action.run(async () => {
      onChanged(await work())
      close()
    })
  const newLink = () =>
    action.run(async () => {
      const invited = await api.users.invite(user.id)
      onChanged(invited)
      setDetail({ kind: 'link', invited })
    })
  return (
    <>
      <tr>
        <td>
          <span class="user-name">{user.name}</span> {self && <Badge tone="neutral">you</Badge>}
          <div class="muted user-email">{user.email}</div>
        </td>
        <td>
          {self || user.status === 'deactivated' ? (
            ROLE_WORDS[user.role]
          ) : (
            <SelectField
              inline
              label={`Role of ${user.name}`}
              value={user.role}
              onValue={(role: Role) => change(() => api.users.update(user.id, { role }))}
              options={ROLE_OPTIONS}
              disabled={action.pending}
            />
          )}
        </td>
        <td>
          <Sites value={user.location_ids} />
        </td>
        <td>
          <Badge tone={STATUS_TONE[user.status]}>{user.status}</Badge>
        </td>
        <td>
          {user.last_sign_in_at ? (
            <time class="time" dateTime={user.last_sign_in_at}>
              {localTime(user.last_sign_in_at, BROWSER_ZONE)}
            </time>
          ) : (
            'never'
          )}
        </td>
        <td>
          {!self && (
            <div class="actions">
              {user.status !== 'deactivated' && (
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={detail?.kind === 'sites'}
                  aria-label={`Sites of ${user.name}`}
                  onClick={() => setDetail({ kind: 'sites', sites: user.location_ids })}
                >
                  Sites
                </button>
              )}
              {user.status === 'invited' && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.pending}
                  aria-label={`New link for ${user.name}`}
                  onClick={newLink}
                >
                  New link
                </button>
              )}
              {user.status === 'deactivated' ? (
                <button
                  ref={rowButton.ref}
                  type="button"
                  class="secondary"
                  disabled={action.pending}
                  aria-label={`Reactivate ${user.name}`}
                  onClick={() => change(() => api.users.reactivate(user.id))}
                >
                  Reactivate
                </button>
              ) : (
                <button
                  ref={rowButton.ref}
                  type="button"
                  class="secondary"
                  aria-expanded={detail?.kind === 'deactivate'}
                  aria-label={`Deactivate ${user.name}`}
                  onClick={() => setDetail({ kind: 'deactivate' })}
                >
                  Deactivate
                </button>
              )}
            </div>
          )}
        </td>
      </tr>
      {(detail || action.error) && (
        <tr class="row-detail">
          <td colSpan={USER_COLUMNS}>
            {detail?.kind === 'sites' && (
              <form
                class="sites-form"
                aria-label={`Sites of ${user.name}`}
                onSubmit={(event) => {
                  event.preventDefault()
                  change(() => api.users.update(user.id, { location_ids: detail.sites }))
                }}
              >
                <SitesField
                  id={`sites-${user.id}`}
                  legend={`Where ${user.name} may act`}
                  value={detail.sites}
                  onValue={(sites) => setDetail({ kind: 'sites', sites })}
                />
                <div class="actions">
                  <button type="submit" disabled={action.pending}>
                    Save the sites
                  </button>
                  <button type="button" class="secondary" onClick={close}>
                    Cancel
                  </button>
                </div>
              </form>
            )}
            {detail?.kind === 'deactivate' && (
              <Confirm
                question={`Deactivate ${user.name}?`}
                action="Deactivate"
                pending={action.pending}
                onConfirm={() => change(() => api.users.deactivate(user.id))}
                onCancel={close}
              >
                <p>
                  {user.status === 'invited'
                    ? 'Their invitation link stops working.'
                    : 'They can no longer act in this account, within 5 seconds.'}{' '}
                  Reactivate them to undo it.
                </p>
              </Confirm>
            )}
            {detail?.kind === 'link' && <InviteLink invited={detail.invited} onDone={close} />}
            <ErrorNotice error={action.error} />
          </td>
        </tr>
      )}
    </>
  )
}
