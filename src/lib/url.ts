/**
 * A URL as it may be logged or shown: its password, if any, and a `password` or `sslpassword`
 * parameter replaced by `***`; one that does not parse, up to its scheme.
 */
export function withoutPassword(raw: string): string {
  const url = URL.parse(raw)
  if (url === null) return `${raw.split(':')[0]}:…`
  const parameters = ['password', 'sslpassword'].filter((name) => url.searchParams.has(name))
  if (url.password === '' && parameters.length === 0) return raw
  if (url.password !== '') url.password = '***'
  for (const name of parameters) url.searchParams.set(name, '***')
  return url.toString()
}
