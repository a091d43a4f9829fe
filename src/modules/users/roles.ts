import type { Role } from '../../db/schema.js'
import { ALL_SCOPES, isPeopleOnlyScope, type Scope } from '../keys/scopes.js'

export type { Role } from '../../db/schema.js'

export const ROLES: readonly Role[] = ['owner', 'admin', 'payroll', 'manager', 'viewer']

/** Read scopes a viewer does not hold: people, keys, and the integrations' own objects. */
const HIDDEN_FROM_VIEWERS = new Set(['users:read', 'keys:read', 'webhooks:read', 'events:read'])

/**
 * Each role's scopes (decisions.md, "Roles"): fixed, written out as the table says. A role is a
 * set of scopes and nothing more, so a signed-in person is judged by `enforce` exactly as a key
 * holding those scopes would be.
 */
export const ROLE_SCOPES: Readonly<Record<Role, ReadonlySet<Scope>>> = {
  owner: new Set(ALL_SCOPES),
  admin: new Set(ALL_SCOPES.filter((scope) => !isPeopleOnlyScope(scope))),
  payroll: new Set<Scope>([
    'timesheets:write',
    'sessions:write',
    'sessions:approve',
    'operators:read',
    'locations:read',
    'leave:write',
    'schedules:read',
  ]),
  manager: new Set<Scope>([
    'sessions:write',
    'sessions:approve',
    'schedules:write',
    'leave:write',
    'devices:read',
    'operators:read',
    'locations:read',
    'timesheets:read',
    'scans:read',
  ]),
  viewer: new Set(ALL_SCOPES.filter((scope) => scope.endsWith(':read') && !HIDDEN_FROM_VIEWERS.has(scope))),
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}
