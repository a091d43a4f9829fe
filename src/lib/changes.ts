/**
 * The fields of a PATCH whose value differs from the current one (`undefined` means "not sent").
 * Services write only these and report the old values as the events' `previous_attributes`.
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

/** `previous_attributes` of an update event: the old API values of the changed fields. */
export function previousAttributes(before: object, changed: Iterable<string>): Record<string, unknown> {
  const source = before as Record<string, unknown>
  return Object.fromEntries([...changed].map((key) => [key, source[key]]))
}
