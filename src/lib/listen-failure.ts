/**
 * A listen that failed (the API's on HOST:PORT, the metrics' on METRICS_HOST:METRICS_PORT), in one
 * line that names the variables to change: Node's own message (`getaddrinfo ENOTFOUND not-a-host`,
 * `listen EADDRINUSE: address already in use 0.0.0.0:8080`) names none. The variables are the
 * caller's (config.ts reads them), so this module stays below http/ and the processes.
 */
export function listenFailure(
  error: unknown,
  where: { host: string; port: number; hostVariable: string; portVariable: string },
): Error {
  const { host, port, hostVariable, portVariable } = where
  const code = (error as { code?: unknown } | undefined)?.code
  const reason = error instanceof Error ? error.message : String(error)
  const message = (() => {
    switch (code) {
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EAI_FAIL':
      case 'EAI_NONAME':
        return `${hostVariable} "${host}" does not resolve to an address (${reason})`
      case 'EADDRNOTAVAIL':
        return `${hostVariable} "${host}" is not an address of this machine (${reason})`
      case 'EADDRINUSE':
        return `${portVariable} ${port} is already in use on ${hostVariable} "${host}" (${reason})`
      case 'EACCES':
        return `${portVariable} ${port} on ${hostVariable} "${host}" needs privileges this process lacks: choose a port above 1023 (${reason})`
      default:
        return `could not listen on ${hostVariable} "${host}", ${portVariable} ${port}: ${reason}`
    }
  })()
  return Object.assign(new Error(message), { code })
}
