import { useHash } from '../router.js'

/**
 * The token of a link the API's e-mails and CLI print (`/console/accept-invite#token=…`): in the
 * fragment, which the browser never sends to a server or in a Referer. Another link opened in the
 * same tab changes the fragment alone, and the page follows it.
 */
export function useLinkToken(): string | undefined {
  const token = new URLSearchParams(useHash().slice(1)).get('token')
  return token === null || token === '' ? undefined : token
}
