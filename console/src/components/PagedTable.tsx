import type { ComponentChildren } from 'preact'
import type { PagedList } from '../hooks.js'
import { ErrorNotice } from './ErrorNotice.js'
import { LoadMore, type Noun, shownSummary } from './LoadMore.js'
import { Table } from './Table.js'

/**
 * A list read page by page through the API's cursors, as every list page shows one: its error, the
 * table, what is shown in words (or `empty` when nothing is) and **Load more**.
 */
export function PagedTable({
  list,
  caption,
  head,
  children,
  foot,
  noun,
  empty,
  summary,
  class: className,
}: {
  list: Omit<PagedList<unknown>, 'replace'>
  caption: string
  head: ComponentChildren
  /** The body's rows. */
  children: ComponentChildren
  foot?: ComponentChildren
  noun: Noun
  /** Said when the list has nothing. */
  empty: string
  /** Said instead of the count of rows shown, by a page that filters what it loaded. */
  summary?: string
  class?: string
}) {
  const shown =
    summary ?? (list.items.length === 0 ? empty : shownSummary(list.items.length, noun, list.hasMore))
  return (
    <>
      <ErrorNotice error={list.error} />
      <Table caption={caption} head={head} foot={foot} class={className}>
        {children}
      </Table>
      {/* A first page that failed has nothing to sum up: its error says it all. */}
      {!(list.error && list.items.length === 0) && (
        <LoadMore summary={shown} hasMore={list.hasMore} loading={list.loading} onLoadMore={list.loadMore} />
      )}
    </>
  )
}
