/**
 * The token of a link the API's e-mails and CLI print (`/console/accept-invite#token=…`): in the
 * fragment, which the browser never sends to a server or in a Referer. Read once when the page opens.
 */
export function linkToken(): string | undefined {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token')
  return token === null || token === '' ? undefined : token
}
