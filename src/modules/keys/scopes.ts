export const SCOPE_RESOURCES = [
  'operators',
  'sessions',
  'devices',
  'locations',
  'scans',
  'webhooks',
  'events',
] as const
export type ScopeResource = (typeof SCOPE_RESOURCES)[number]
export type Scope = `${ScopeResource}:${'read' | 'write'}`

export const ALL_SCOPES: Scope[] = SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Scope[])

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as string[]).includes(value)
}

/** `write` implies `read` of the same resource. */
export function grants(scopes: ReadonlySet<string>, needed: Scope): boolean {
  if (scopes.has(needed)) return true
  return needed.endsWith(':read') && scopes.has(needed.replace(/:read$/, ':write'))
}
