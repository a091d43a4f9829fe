export const SCOPE_RESOURCES = [
  'operators',
  'sessions',
  'devices',
  'locations',
  'scans',
  'webhooks',
  'events',
  'timesheets',
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

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as string[]).includes(value)
}

/** `write` implies `read` of the same resource. */
export function grants(scopes: ReadonlySet<string>, needed: Scope): boolean {
  if (scopes.has(needed)) return true
  return needed.endsWith(':read') && scopes.has(needed.replace(/:read$/, ':write'))
}
