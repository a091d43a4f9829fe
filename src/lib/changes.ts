/**
 * The fields of a PATCH whose value differs from the current one (`undefined` means "not sent").
 * Services write only these; a PATCH with none writes nothing and emits nothing.
 */
export function changedFields<T extends Record<string, unknown>>(
  current: T,
  input: { [K in keyof T]?: T[K] },
): Partial<T> {
  const changes: Partial<T> = {}
  for (const key of Object.keys(input) as Array<keyof T>) {
    const value = input[key]
    if (value !== undefined && value !== current[key]) changes[key] = value
  }
  return changes
}

/**
 * `previous_attributes` of an update event: the old API values of the fields whose API value
 * changed (`updated` aside, which every change moves). Compared as JSON, so nested values such as
 * `check_out: {time}` count by content.
 */
export function previousAttributes(before: object, after: object): Record<string, unknown> {
  const old = before as Record<string, unknown>
  const now = after as Record<string, unknown>
  return Object.fromEntries(
    Object.keys(now)
      .filter((key) => key !== 'updated' && JSON.stringify(old[key]) !== JSON.stringify(now[key]))
      .map((key) => [key, old[key]]),
  )
}
