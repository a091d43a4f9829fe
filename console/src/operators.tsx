import type { AttendanceClient } from '../../packages/client/src/client.js'
import { ConsoleProblem } from './api.js'
import { useSignedIn } from './context.js'
import { useKnown } from './directory.js'

/** The timesheet filters by operator id; a manager knows the ident. Refused with words when none has it. */
export async function operatorIdOf(api: AttendanceClient, ident: string): Promise<string> {
  const found = await api.operators.list({ ident, limit: 1 })
  const id = found.data[0]?.id
  if (!id) throw new ConsoleProblem('unknown_operator', `No operator has the ident ${ident}.`)
  return id
}

/**
 * A session's operator as a manager knows them: the name (read once per operator), then the ident;
 * the ident alone while the name loads, or when it cannot be read.
 */
export function OperatorName({ id, ident }: { id: string; ident: string }) {
  const { operators } = useSignedIn()
  const name = useKnown(operators, id).value?.name
  return name ? (
    <>
      {name} <span class="muted ident">{ident}</span>
    </>
  ) : (
    <span class="ident">{ident}</span>
  )
}
