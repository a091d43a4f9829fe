import type { UserWithInviteUrl } from '../../../packages/client/src/client.js'
import { ShownOnce } from '../components/ShownOnce.js'

/** An invitation's link, as the create or invite answer carries it: shown once, to pass on. */
export function InviteLink({ invited, onDone }: { invited: UserWithInviteUrl; onDone: () => void }) {
  return (
    <ShownOnce
      title={`Invitation link for ${invited.name}`}
      label={`Invitation link for ${invited.email}`}
      value={invited.invite_url}
      lost="The link was answered once already, to an earlier try of this request, and is not kept: send a new link from the list."
      done="Done"
      onDone={onDone}
    >
      <p>
        Send it to {invited.email} (it was e-mailed too if the service sends e-mail). It works once, for 7
        days; a new link makes this one stop working. It is not shown again.
      </p>
    </ShownOnce>
  )
}
