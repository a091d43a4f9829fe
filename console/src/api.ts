import type { ErrorEnvelope, ListEnvelope } from '../../packages/client/src/types.js'

/** A refused or failed request: the API's error envelope, or `status` 0 when the service was unreachable. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code?: string,
    readonly requestId?: string,
  ) {
    super(message)
  }
}

export type Query = Record<string, string | number | boolean | undefined>

/** The API's largest page (`limit`). */
const MAX_PAGE = 200

/** The public /v1 API of the service that served this page, called with the signed-in key. */
export class Api {
  constructor(private readonly key: string) {}

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', withQuery(path, query))
  }

  /** One page of a list, newest first; `cursor` is the previous page's `next_cursor`. */
  list<T>(path: string, query: Query, cursor?: string): Promise<ListEnvelope<T>> {
    return this.get<ListEnvelope<T>>(path, { ...query, cursor })
  }

  /**
   * The items of a list from its first page on, 200 a page (the API's largest), stopping once
   * `atMost` are read: `complete` says whether that was all of them.
   */
  async all<T>(path: string, query: Query, atMost: number): Promise<{ items: T[]; complete: boolean }> {
    const items: T[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await this.list<T>(path, { ...query, limit: MAX_PAGE }, cursor)
      items.push(...page.data)
      if (!page.has_more || page.next_cursor === null) return { items, complete: true }
      if (items.length >= atMost) return { items, complete: false }
      cursor = page.next_cursor
    }
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body)
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body)
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path)
  }

  /**
   * A CSV answer of the API (`Accept: text/csv`) as a file to save: fetched with the key in a header,
   * never put in a URL the browser opens. `filename` comes from Content-Disposition.
   */
  async csv(path: string, query: Query): Promise<{ blob: Blob; filename: string | undefined }> {
    const response = await this.send('GET', withQuery(path, query), undefined, 'text/csv')
    if (!response.ok) throw errorOf(response, await parsedBody(response))
    const disposition = response.headers.get('content-disposition') ?? ''
    return { blob: await response.blob(), filename: /filename="([^"]+)"/.exec(disposition)?.[1] }
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body, 'application/json')
    const parsed = await parsedBody(response)
    if (!response.ok) throw errorOf(response, parsed)
    return parsed as T
  }

  private async send(method: string, path: string, body: unknown, accept: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, accept }
    if (body !== undefined) headers['content-type'] = 'application/json'
    try {
      return await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // Answers carry account data: keep them out of the HTTP cache.
        cache: 'no-store',
        credentials: 'omit',
      })
    } catch {
      throw new ApiError(
        0,
        'network_error',
        'The service could not be reached. Check the connection and retry.',
      )
    }
  }
}

async function parsedBody(response: Response): Promise<unknown> {
  const text = await response.text()
  return text.length > 0 ? JSON.parse(text) : undefined
}

function errorOf(response: Response, parsed: unknown): ApiError {
  const error = (parsed as ErrorEnvelope | undefined)?.error
  return new ApiError(
    response.status,
    error?.type ?? 'api_error',
    error?.message ?? `HTTP ${response.status}`,
    error?.code ?? undefined,
    error?.request_id,
  )
}

/** Path segments are ids from the API or the address bar: encode them so they stay one segment. */
export function pathOf(...segments: string[]): string {
  return segments.map((segment, i) => (i === 0 ? segment : encodeURIComponent(segment))).join('/')
}

function withQuery(path: string, query: Query): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, String(value))
  }
  const search = params.toString()
  return search ? `${path}?${search}` : path
}
