import { useEffect, useRef } from 'preact/hooks'

/**
 * The page's heading and the document title. Focus moves to the heading when a page opens, so a
 * screen reader announces the new page and Tab continues from its top.
 */
export function PageTitle({ children }: { children: string }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${children} · Attendance console`
    heading.current?.focus()
  }, [children])
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  )
}
