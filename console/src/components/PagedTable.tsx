import type { ComponentChildren } from 'preact'
import type { PagedList } from '../hooks.js'
import { ErrorNotice } from './ErrorNotice.js'
import { LoadMore, type Noun, shownSummary } from './LoadMore.js'
import { Table, type TableProps } from './Table.js'

interface PagedWords {
  noun: Noun
  /** Said when the list has nothing. */
  empty: string
  /** Said instead of the count of rows shown, by a page that filters what it loaded. */
  summary?: string
}

/**
 * A list read page by page through the API's cursors, however its items are shown: its error, the
 * items, what is shown in words (or `empty` when nothing is) and **Load more**.
 */
export function Paged({
  list,
  noun,
  empty,
  summary,
  children,
}: PagedWords & { list: Omit<PagedList<unknown>, 'replace'>; children: ComponentChildren }) {
  const shown =
    summary ?? (list.items.length === 0 ? empty : shownSummary(list.items.length, noun, list.hasMore))
  return (
    <>
      <ErrorNotice error={list.error} />
      {children}
      {/* A first page that failed has nothing to sum up: its error says it all. */}
      {!(list.error && list.items.length === 0) && (
        <LoadMore summary={shown} hasMore={list.hasMore} loading={list.loading} onLoadMore={list.loadMore} />
      )}
    </>
  )
}

/** A paged list as every list page shows one: a table (`Table`), read through `Paged`. */
export function PagedTable({
  list,
  noun,
  empty,
  summary,
  ...table
}: PagedWords & TableProps & { list: Omit<PagedList<unknown>, 'replace'> }) {
  return (
    <Paged list={list} noun={noun} empty={empty} summary={summary}>
      <Table {...table} />
    </Paged>
  )
}
