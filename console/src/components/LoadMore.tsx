/** The footer of a paged list: how much is shown, and the next page on request. */
export function LoadMore({
  count,
  noun,
  hasMore,
  loading,
  onLoadMore,
}: {
  count: number
  noun: string
  hasMore: boolean
  loading: boolean
  onLoadMore: () => void
}) {
  return (
    <div class="list-footer">
      <p class="muted" aria-live="polite">
        {loading ? 'Loading…' : `${count} ${noun} shown${hasMore ? '; more exist' : ''}.`}
      </p>
      {hasMore && (
        <button type="button" onClick={onLoadMore} disabled={loading}>
          Load more
        </button>
      )}
    </div>
  )
}
