import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'

/** Every page lives under this path; the service answers index.html for all of them. */
export const BASE = '/console'

const NAVIGATED = 'console:navigated'

/** The page path without the base, e.g. `/sessions/ses_1`. */
function currentPath(): string {
  const path = window.location.pathname.slice(BASE.length)
  return path === '' ? '/' : path
}

/** Opens a page; `replace` for a redirect, which the back button should skip. */
export function navigate(path: string, { replace = false } = {}): void {
  if (replace) window.history.replaceState(null, '', `${BASE}${path}`)
  else window.history.pushState(null, '', `${BASE}${path}`)
  window.dispatchEvent(new Event(NAVIGATED))
}

/** The current page path, re-rendering on links and on the browser's back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath)
  useEffect(() => {
    const update = () => setPath(currentPath())
    window.addEventListener('popstate', update)
    window.addEventListener(NAVIGATED, update)
    return () => {
      window.removeEventListener('popstate', update)
      window.removeEventListener(NAVIGATED, update)
    }
  }, [])
  return path
}

/**
 * Matches `/sessions/:id` against a path; answers the named segments, or undefined. A pattern
 * segment `:name` matches one non-empty segment.
 */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  // `/` is the home page: without its trailing slash it is the empty path, as `/sessions/` is `/sessions`.
  const want = pattern.replace(/\/$/, '').split('/')
  const have = path.replace(/\/$/, '').split('/')
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (const [i, part] of want.entries()) {
    const actual = have[i] ?? ''
    if (part.startsWith(':') && actual !== '') params[part.slice(1)] = decodeURIComponent(actual)
    else if (part !== actual) return undefined
  }
  return params
}

/** The query of the address a page was opened with: links between pages carry filters in it. */
export function addressQuery(): URLSearchParams {
  return new URLSearchParams(window.location.search)
}

interface LinkProps extends Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> {
  /** A page path, without the base. */
  to: string
  children: ComponentChildren
}

/** A real link (it opens in a new tab too) that changes page without reloading the app. */
export function Link({ to, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to)
  }
  return (
    <a {...rest} href={`${BASE}${to}`} onClick={onClick}>
      {children}
    </a>
  )
}

/**
 * The address's fragment (`#api-key`), re-rendering when it changes. The sign-in page's forms and the
 * links' tokens live there: a fragment is never sent to a server, nor in a Referer.
 */
export function useHash(): string {
  const [hash, setHash] = useState(() => window.location.hash)
  useEffect(() => {
    const update = () => setHash(window.location.hash)
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  return hash
}

/** The address without its fragment, in place (a used link's token, a form's `#api-key`), leaving no history entry. */
export function dropHash(): void {
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`)
}
