import type { ComponentChildren } from 'preact'

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
 * A table in a box that scrolls sideways on its own when the screen is narrower than the table, so
 * the page itself never does. The box is focusable, so the keyboard can scroll it too; the caption
 * names it for screen readers.
 */
export function Table({ caption, head, children, foot, class: className }: TableProps) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled from the keyboard
    <section class="table-scroll" aria-label={caption} tabIndex={0}>
      <table class={className}>
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
