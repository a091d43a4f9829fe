import type { Mode } from '../../packages/client/src/client.js'

/**
 * A person's session is an HttpOnly cookie the page cannot read: what the page keeps is whether to
 * ask the service for it at all (so that a visitor who never signed in is not answered 401 on every
 * load) and the person's last choices of mode and account. None of it is a secret: localStorage,
 * shared by the browser's tabs.
 */
const SIGNED_IN = 'attendance-console-signed-in'
const MODE = 'attendance-console-mode'
const ACCOUNT = 'attendance-console-account'

export function mightBeSignedIn(): boolean {
  return localStorage.getItem(SIGNED_IN) === '1'
}

export function rememberSignedIn(): void {
  localStorage.setItem(SIGNED_IN, '1')
}

export function forgetSignedIn(): void {
  localStorage.removeItem(SIGNED_IN)
}

/** Live unless the person chose test: people sign in to do the real work; test data is one switch away. */
export function preferredMode(): Mode {
  return localStorage.getItem(MODE) === 'test' ? 'test' : 'live'
}

export function preferMode(mode: Mode): void {
  localStorage.setItem(MODE, mode)
}

export function preferredAccount(): string | undefined {
  return localStorage.getItem(ACCOUNT) ?? undefined
}

export function preferAccount(accountId: string): void {
  localStorage.setItem(ACCOUNT, accountId)
}
