import { useState } from 'preact/hooks'
import type { User, UserWithInviteUrl } from '../../../packages/client/src/client.js'
import { PagedTable } from '../components/PagedTable.js'
import { PageTitle } from '../components/PageTitle.js'
import { useSignedIn } from '../context.js'
import { usePagedList } from '../hooks.js'
import { InviteForm } from './InviteForm.js'
import { InviteLink } from './InviteLink.js'
import { UserRows } from './UserRows.js'

/**
 * The people of the account (owners'): invite one and pass on their link, change a role or sites,
 * deactivate and reactivate, a new link for an invitation not yet accepted.
 */
export function UsersPage() {
  const { api, can } = useSignedIn()
  const [invited, setInvited] = useState<UserWithInviteUrl | undefined>()
  const list = usePagedList<User>((cursor) => api.users.list({ limit: 50, cursor }), [api, invited?.id])
  return (
    <>
      <PageTitle>Users</PageTitle>
      <p class="muted">
        The people who sign in to this account, each with a role (what they may do) and sites (where). A
        person works in both its test and live data.
      </p>
      {can('users:write') &&
        (invited ? (
          <InviteLink invited={invited} onDone={() => setInvited(undefined)} />
        ) : (
          <InviteForm onInvited={setInvited} />
        ))}
      <PagedTable
        list={list}
        caption="People of the account, newest first"
        noun={['person', 'people']}
        empty="Nobody yet."
        head={
          <>
            <th scope="col">Person</th>
            <th scope="col">Role</th>
            <th scope="col">Sites</th>
            <th scope="col">Status</th>
            <th scope="col">Last sign-in</th>
            <th scope="col">Actions</th>
          </>
        }
      >
        {list.items.map((user) => (
          <UserRows key={user.id} user={user} onChanged={list.replace} />
        ))}
      </PagedTable>
    </>
  )
}
