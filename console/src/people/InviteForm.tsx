import { useState } from 'preact/hooks'
import type { Role, UserWithInviteUrl } from '../../../packages/client/src/client.js'
import { ROLE_MEANING, ROLE_OPTIONS } from '../access.js'
import { refusalOf } from '../api.js'
import { ErrorNotice } from '../components/ErrorNotice.js'
import { Field, SelectField } from '../components/Field.js'
import { useSignedIn } from '../context.js'
import { useAction } from '../hooks.js'
import { SitesField } from './SitesField.js'

const FORM_PARAMS = ['email', 'name', 'role', 'location_ids']

/** `POST /v1/users`: a person invited with a role and sites; the answer's link goes to them. */
export function InviteForm({ onInvited }: { onInvited: (user: UserWithInviteUrl) => void }) {
  const { api } = useSignedIn()
  const action = useAction()
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [role, setRole] = useState<Role>('manager')
  const [sites, setSites] = useState<string[] | null>(null)
  const submit = (event: Event) => {
    event.preventDefault()
    return action.run(async () => {
      const invited = await api.users.create({
        email: email.trim(),
        name: name.trim(),
        role,
        location_ids: sites,
      })
      setEmail('')
      setName('')
      setSites(null)
      onInvited(invited)
    })
  }
  const fieldRefused = FORM_PARAMS.some((param) => refusalOf(action.error, param) !== undefined)
  return (
    <form class="invite-form" onSubmit={submit} aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite a person</h2>
      <div class="filters">
        <Field
          id="invite-email"
          label="E-mail"
          type="email"
          spellcheck={false}
          required
          value={email}
          onValue={setEmail}
          error={refusalOf(action.error, 'email')}
        />
        <Field
          id="invite-name"
          label="Name"
          required
          value={name}
          onValue={setName}
          error={refusalOf(action.error, 'name')}
        />
        <SelectField
          id="invite-role"
          label="Role"
          value={role}
          onValue={setRole}
          options={ROLE_OPTIONS}
          error={refusalOf(action.error, 'role')}
        />
      </div>
      <p class="muted field-hint">
        {ROLE_OPTIONS.find(([r]) => r === role)?.[1]}: {ROLE_MEANING[role]}.
      </p>
      <SitesField
        id="invite-sites"
        legend="Sites"
        value={sites}
        onValue={setSites}
        error={refusalOf(action.error, 'location_ids')}
      />
      <button type="submit" disabled={action.pending}>
        {action.pending ? 'Inviting…' : 'Invite'}
      </button>
      {!fieldRefused && <ErrorNotice error={action.error} />}
    </form>
  )
}
