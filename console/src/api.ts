import {
  AttendanceApiError,
  AttendanceClient,
  AttendanceConnectionError,
  type ListEnvelope,
  type SessionCredentials,
} from '../../packages/client/src/client.js'

/** A pasted key, or a signed-in person's session (its cookie, with the mode, account and CSRF token). */
export type Credentials = { apiKey: string } | { session: SessionCredentials }

/**
 * The typed client of the public /v1 API, for the service that served this page. It is the same
 * client Node.js programs use (`packages/client`), bundled from its source; `client.ts` imports
 * nothing of Node.js. `onUnauthorized` hears every 401 (a session that ended, say).
 */
export function consoleClient(credentials: Credentials, onUnauthorized?: () => void): AttendanceClient {
  // Answers carry account data: kept out of the HTTP cache. A key's requests carry no cookie; a
  // person's carry the session cookie, sent to this origin only.
  const cookies = 'session' in credentials ? 'same-origin' : 'omit'
  return new AttendanceClient({
    ...credentials,
    baseUrl: window.location.origin,
    // A manager sees a failure at once and can try again, rather than a page that keeps loading
    // through backoffs (and, rate-limited, up to a minute of Retry-After).
    maxRetries: 0,
    fetch: async (input, init) => {
      const response = await fetch(input, { ...init, cache: 'no-store', credentials: cookies })
      if (response.status === 401) onUnauthorized?.()
      return response
    },
  })
}

/**
 * The client of a page nobody is signed in to yet (signing in, the invitation and reset links): a
 * person's requests without a session, whose mode no answer depends on.
 */
export function signedOutClient(): AttendanceClient {
  return consoleClient({ session: { mode: 'live' } })
}

/**
 * What a notice shows of a failure: the API's refusal as the client reports it (an
 * `AttendanceApiError`, with the envelope's type, code, message and request id), or a
 * `ConsoleProblem` the console words itself.
 */
export type Problem = AttendanceApiError | ConsoleProblem

/** A failure with no answer of the API behind it: status 0, the console's own words. */
export class ConsoleProblem extends Error {
  readonly status = 0
  readonly requestId = undefined

  constructor(
    readonly code: 'network_error' | 'client_error' | 'invalid_key' | 'unknown_operator',
    message: string,
  ) {
    super(message)
  }
}

/** Whatever a request threw, as a notice shows it. */
export function asProblem(error: unknown): Problem {
  if (error instanceof AttendanceApiError || error instanceof ConsoleProblem) return error
  if (error instanceof AttendanceConnectionError) {
    return new ConsoleProblem(
      'network_error',
      'The service could not be reached. Check the connection and retry.',
    )
  }
  return new ConsoleProblem('client_error', String(error))
}

/**
 * The API's refusal of a form's field (its envelope's `param` names it, or an item of it:
 * `enabled_events[1]`), shown under the field; undefined for any other refusal.
 */
export function refusalOf(error: unknown, param: string): string | undefined {
  if (!(error instanceof AttendanceApiError) || error.param === undefined) return undefined
  const named =
    error.param === param || error.param.startsWith(`${param}[`) || error.param.startsWith(`${param}.`)
  return named ? error.message : undefined
}

/** The API's largest page (`limit`). */
const MAX_PAGE = 200

/**
 * The items of a resource's list (`api.sessions`, say) from its first page on, 200 a page (the
 * API's largest), stopping once `atMost` are read: `complete` says whether that was all of them.
 */
export async function firstItems<Q extends { limit?: number; cursor?: string }, T>(
  resource: { list(params?: Q): Promise<ListEnvelope<T>> },
  params: NoInfer<Q>,
  atMost: number,
): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await resource.list({ ...params, limit: MAX_PAGE, cursor })
    items.push(...page.data)
    if (!page.has_more || page.next_cursor === null) return { items, complete: true }
    if (items.length >= atMost) return { items, complete: false }
    cursor = page.next_cursor
  }
}
