import type { Mode } from '../../packages/client/src/client.js'

/**
 * The signed-in API key lives in this tab's sessionStorage only: never in a URL, a cookie or a log,
 * and gone when the tab closes.
 */
const STORAGE_NAME = 'attendance-console-key'

/** A key's mode, from its prefix; undefined for text that is not a key. */
export function modeOfKey(key: string): Mode | undefined {
  if (key.startsWith('sk_test_')) return 'test'
  if (key.startsWith('sk_live_')) return 'live'
  return undefined
}

export function storedKey(): string | undefined {
  return sessionStorage.getItem(STORAGE_NAME) ?? undefined
}

export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE_NAME, key)
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_NAME)
}
