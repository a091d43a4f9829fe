import { monotonicFactory } from 'ulid'

export type IdPrefix =
  | 'acct'
  | 'key'
  | 'op'
  | 'ses'
  | 'dev'
  | 'loc'
  | 'scn'
  | 'we'
  | 'whd'
  | 'wha'
  | 'evt'
  | 'rev'

// ULIDs sort by creation time, and the monotonic factory keeps that order within one millisecond in
// this process, which is what keyset pagination on `id` relies on.
const nextUlid = monotonicFactory()

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid()}`
}
