import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'

export interface TableProps {
  caption: string
  /** The header row's cells. */
  head: ComponentChildren
  /** The body's rows. */
  children: ComponentChildren
  foot?: ComponentChildren
  class?: string
}

/**
 * Names each body and footer data cell after its column (`data-column`, the header cell's text),
 * which a phone shows before the cell once rows become cards (styles.css). A cell spanning columns
 * takes the first one's name; a row's own header (a total's) and a row's details (`row-detail`, one
 * cell across the row) need none.
 */
function nameCellsByColumn(table: HTMLTableElement): void {
  const names = [...(table.tHead?.rows[0]?.cells ?? [])].flatMap((th) =>
    Array<string>(th.colSpan).fill(th.textContent?.trim() ?? ''),
  )
  const rows = [...table.tBodies].flatMap((body) => [...body.rows]).concat([...(table.tFoot?.rows ?? [])])
  for (const row of rows) {
    if (row.classList.contains('row-detail')) continue
    let column = 0
    for (const cell of row.cells) {
      const name = cell.tagName === 'TD' ? (names[column] ?? '') : ''
      if (name === '') cell.removeAttribute('data-column')
      else if (cell.dataset.column !== name) cell.dataset.column = name
      column += cell.colSpan
    }
  }
}

/**
 * A table that fits its screen: on a desktop, in a box that scrolls sideways on its own should the
 * table be wider (the box is focusable, so the keyboard can scroll it too); on a phone, each row a
 * card, its cells one under the other, each named after its column (styles.css), so that who,
 * when, how much and the row's buttons are all in view without scrolling sideways. The caption
 * names it for screen readers.
 */
export function Table({ caption, head, children, foot, class: className }: TableProps) {
  const table = useRef<HTMLTableElement>(null)
  useLayoutEffect(() => {
    const element = table.current
    if (!element) return
    nameCellsByColumn(element)
    // Rows come and go (a page loaded, a row's details opened), and the header's names may change
    // (a timesheet by week): every change of the table's elements or text names its cells again.
    const observer = new MutationObserver(() => nameCellsByColumn(element))
    observer.observe(element, { childList: true, subtree: true, characterData: true })
    return () => observer.disconnect()
  }, [])
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled from the keyboard
    <section class="table-scroll" aria-label={caption} tabIndex={0}>
      <table ref={table} class={className}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>{head}</tr>
        </thead>
        <tbody>{children}</tbody>
        {foot && <tfoot>{foot}</tfoot>}
      </table>
    </section>
  )
}
