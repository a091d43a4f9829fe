import { count } from '../format.js'

/** What a list calls its items: `['delivery', 'deliveries']`; the plural is the singular + s when left out. */
export type Noun = readonly [one: string, other?: string]

/** "1 session shown.", "50 sessions shown; more exist.". */
export function shownSummary(shown: number, [one, other]: Noun, hasMore: boolean): string {
  return `${count(shown, one, other)} shown${hasMore ? '; more exist' : ''}.`
}

/** The footer of a paged list: what is shown, in words, and the next page on request. */
export function LoadMore({
  summary,
  hasMore,
  loading,
  onLoadMore,
}: {
  summary: string
  hasMore: boolean
  loading: boolean
  onLoadMore: () => void
}) {
  return (
    <div class="list-footer">
      <p class="muted" aria-live="polite">
        {loading ? 'Loading…' : summary}
      </p>
      {hasMore && (
        <button type="button" onClick={onLoadMore} disabled={loading}>
          Load more
        </button>
      )}
    </div>
  )
}
