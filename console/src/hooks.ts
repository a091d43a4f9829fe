import type { RefObject } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { ListEnvelope } from '../../packages/client/src/client.js'
import { asProblem, type Problem } from './api.js'

export interface Loaded<T> {
  value: T | undefined
  error: Problem | undefined
  loading: boolean
}

/** One request run when `deps` change; a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> & { set: (value: T) => void } {
  const [state, setState] = useState<Loaded<T>>({ value: undefined, error: undefined, loading: true })
  // On the render where `deps` change, `state` still holds the previous answer: it is not loaded yet.
  const loadedFor = useRef<unknown[] | undefined>(undefined)
  const changed =
    loadedFor.current === undefined || deps.some((dep, i) => !Object.is(dep, loadedFor.current?.[i]))
  useEffect(() => {
    let current = true
    loadedFor.current = deps
    setState({ value: undefined, error: undefined, loading: true })
    load().then(
      (value) => current && setState({ value, error: undefined, loading: false }),
      (error: unknown) => current && setState({ value: undefined, error: asProblem(error), loading: false }),
    )
    return () => {
      current = false
    }
  }, deps)
  const set = useCallback((value: T) => setState({ value, error: undefined, loading: false }), [])
  return changed ? { value: undefined, error: undefined, loading: true, set } : { ...state, set }
}

export interface PagedList<T> {
  items: T[]
  error: Problem | undefined
  loading: boolean
  hasMore: boolean
  loadMore: () => void
  /** Puts an updated object (same `id`) in place of the loaded one. */
  replace: (item: T) => void
}

/**
 * A list read page by page through the API's cursors: the first page when `deps` change, the next
 * one on `loadMore`. Nothing is loaded that the user did not ask for.
 */
export function usePagedList<T extends { id: string }>(
  fetchPage: (cursor: string | undefined) => Promise<ListEnvelope<T>>,
  deps: unknown[],
): PagedList<T> {
  const [items, setItems] = useState<T[]>([])
  const [error, setError] = useState<Problem | undefined>()
  const [loading, setLoading] = useState(true)
  const [cursor, setCursor] = useState<string | null>(null)
  // Filters changing while a page loads make that page stale: each first load starts a generation.
  const generation = useRef(0)

  const load = useCallback((from: string | undefined, append: boolean) => {
    const mine = generation.current
    setLoading(true)
    setError(undefined)
    fetchPage(from).then(
      (page) => {
        if (mine !== generation.current) return
        setItems((previous) => (append ? [...previous, ...page.data] : page.data))
        setCursor(page.has_more ? page.next_cursor : null)
        setLoading(false)
      },
      (failure: unknown) => {
        if (mine !== generation.current) return
        setError(asProblem(failure))
        setLoading(false)
      },
    )
  }, deps)

  useEffect(() => {
    generation.current += 1
    setItems([])
    setCursor(null)
    load(undefined, false)
  }, [load])

  return {
    items,
    error,
    loading,
    hasMore: cursor !== null,
    loadMore: () => {
      if (cursor !== null && !loading) load(cursor, true)
    },
    replace: (item) => setItems((previous) => previous.map((old) => (old.id === item.id ? item : old))),
  }
}

export interface Action {
  run: (work: () => Promise<void>) => Promise<void>
  pending: boolean
  error: Problem | undefined
}

/** A button's request: pending while it runs (the button is disabled), its error kept for display. */
export function useAction(): Action {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<Problem | undefined>()
  const run = async (work: () => Promise<void>) => {
    setPending(true)
    setError(undefined)
    try {
      await work()
    } catch (failure) {
      setError(asProblem(failure))
    } finally {
      setPending(false)
    }
  }
  return { run, pending, error }
}

export interface ReturnFocus<T extends HTMLElement> {
  /** The element that takes the focus back (the button that opened a question or a form). */
  ref: RefObject<T>
  /** Focuses it after the next render: once what it opened has closed, rather than the page's top. */
  returnFocus: () => void
}

/** Where the focus goes back to after a question or a form in the page closes. */
export function useReturnFocus<T extends HTMLElement>(): ReturnFocus<T> {
  const ref = useRef<T>(null)
  const [due, setDue] = useState(false)
  useEffect(() => {
    if (!due) return
    ref.current?.focus()
    setDue(false)
  }, [due])
  return { ref, returnFocus: () => setDue(true) }
}

/** The current time, again every `everyMs`: what a countdown or an "ago" is measured from. */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now)
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}
