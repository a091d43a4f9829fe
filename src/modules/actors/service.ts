import type { Executor } from '../../db/types.js'
import { deviceCodes } from '../devices/service.js'
import { keyPrincipals } from '../keys/service.js'
import { userNames } from '../users/names.js'
import type { Actor } from './schemas.js'

/** What the service's own changes are shown as (a forgotten check-out closed by the sweep). */
const SERVICE_ACTOR_NAME = 'Attendance service'

const isKeyId = (id: string) => id.startsWith('key_')
const isPersonId = (id: string) => id.startsWith('usr_')

/**
 * Who made changes, by the principal id they recorded (a revision's `key_id`, a review's
 * `reviewed_by`, a pay period's `closed_by`), as they are now: a key by its label, a device key by
 * its device's code, a person by their name; any other id is the service's own (`service`, the
 * sweep). Answers the lookup of those ids' actors, read in the same three statements at most for any
 * number of ids, so a page of a list costs no more than one object.
 */
export async function actorsOf(
  db: Executor,
  accountId: string,
  principalIds: Iterable<string>,
): Promise<(principalId: string) => Actor> {
  const ids = [...new Set(principalIds)]
  // One after another: the statements of a transaction share its one connection.
  const keys = await keyPrincipals(db, accountId, ids.filter(isKeyId))
  const people = await userNames(db, ids.filter(isPersonId))
  const devices = await deviceCodes(
    db,
    accountId,
    [...keys.values()].flatMap((key) => (key.deviceId === null ? [] : [key.deviceId])),
  )
  return (id) => {
    const key = keys.get(id)
    if (key?.deviceId) return { type: 'device', id: key.deviceId, name: devices.get(key.deviceId) ?? null }
    if (isKeyId(id)) return { type: 'api_key', id, name: key?.label ?? null }
    if (isPersonId(id)) return { type: 'user', id, name: people.get(id) ?? null }
    return { type: 'service', id, name: SERVICE_ACTOR_NAME }
  }
}
