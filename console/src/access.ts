import type { Role } from '../../packages/client/src/client.js'
import { grants, KEY_SCOPES, type Scope } from '../../src/modules/keys/scopes.js'
import { ROLE_SCOPES } from '../../src/modules/users/roles.js'

export type { Scope } from '../../src/modules/keys/scopes.js'

/**
 * What the console offers the one signed in: a page or a button whose scope they lack is not shown
 * (no button that can only be refused). The table of roles is the service's own
 * (`src/modules/users/roles.ts`, bundled from its source with the scopes it is made of: both are plain
 * data without an import of Node.js), so the console and `enforce` never disagree on a role.
 */
export type Can = (scope: Scope) => boolean

export function canOfRole(role: Role): Can {
  const scopes = ROLE_SCOPES[role]
  return (scope) => grants(scopes, scope)
}

/**
 * A key's scopes are not told to the console (no endpoint answers them): it offers what any key may
 * hold, never the people's pages, and a scope the key lacks is refused with the API's message naming it.
 */
export const canOfKey: Can = (scope) => grants(ANY_KEY, scope)

const ANY_KEY: ReadonlySet<Scope> = new Set(KEY_SCOPES)

/** A role in words, for the header and the lists. */
export const ROLE_WORDS: Readonly<Record<Role, string>> = {
  owner: 'Owner',
  admin: 'Admin',
  payroll: 'Payroll',
  manager: 'Manager',
  viewer: 'Viewer',
}

/** What each role may do, in a line (decisions.md, "Roles"), under the role's menu. */
export const ROLE_MEANING: Readonly<Record<Role, string>> = {
  owner: 'everything, people and API keys included',
  admin: 'everything but people and API keys',
  payroll: 'timesheets, pay periods and pay rules; reviews sessions and leave',
  manager: 'reviews sessions, plans shifts and leave; reads operators, devices and timesheets',
  viewer: 'reads what the others do, changes nothing',
}

export const ROLE_OPTIONS: ReadonlyArray<readonly [Role, string]> = (
  ['owner', 'admin', 'payroll', 'manager', 'viewer'] as const
).map((role) => [role, ROLE_WORDS[role]] as const)
