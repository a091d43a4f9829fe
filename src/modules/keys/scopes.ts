export const SCOPE_RESOURCES = [
  'operators',
  'sessions',
  'devices',
  'locations',
  'scans',
  'webhooks',
  'events',
  'timesheets',
  'schedules',
  'leave',
  'users',
  'keys',
] as const
export type ScopeResource = (typeof SCOPE_RESOURCES)[number]
/**
 * `sessions:approve` stands alone: `sessions:write` does not imply it, so the integration that writes
 * sessions need not be the one that approves them (docs/review-and-timesheets.md).
 */
export const APPROVE_SCOPE = 'sessions:approve'
export type Scope = `${ScopeResource}:${'read' | 'write'}` | typeof APPROVE_SCOPE

export const ALL_SCOPES: Scope[] = [
  ...SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Scope[]),
  APPROVE_SCOPE,
]

/**
 * Only people manage people and keys (decisions.md, "People and access"): no API key ever holds a
 * `users` or `keys` scope, so a leaked key cannot make an owner or a live key.
 */
export const PEOPLE_ONLY_RESOURCES: readonly ScopeResource[] = ['users', 'keys']

export function isPeopleOnlyScope(scope: Scope): boolean {
  return PEOPLE_ONLY_RESOURCES.some((resource) => scope.startsWith(`${resource}:`))
}

/** What a key may hold, and what a key made without `--scopes` holds: every scope but people's. */
export const KEY_SCOPES: Scope[] = ALL_SCOPES.filter((scope) => !isPeopleOnlyScope(scope))

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as string[]).includes(value)
}

/** `write` implies `read` of the same resource. */
export function grants(scopes: ReadonlySet<string>, needed: Scope): boolean {
  if (scopes.has(needed)) return true
  return needed.endsWith(':read') && scopes.has(needed.replace(/:read$/, ':write'))
}
