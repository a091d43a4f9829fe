import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { components } from '../../../packages/client/src/generated/schema.js'
import { useSignedIn } from '../context.js'
import { useLoad } from '../hooks.js'
import { Link } from '../router.js'

export interface NavItem {
  /** A page path without the base, e.g. `/sessions`. */
  to: string
  label: string
}

/** Which mode every answer on screen belongs to; test mode is impossible to miss. */
function ModeBanner() {
  const { mode } = useSignedIn()
  if (mode === 'live') {
    return (
      <p class="mode-banner mode-live" role="status">
        Live mode: real data.
      </p>
    )
  }
  return (
    <p class="mode-banner mode-test" role="status">
      Test mode: you are viewing test data (signed in with an sk_test_ key).
    </p>
  )
}

type Account = components['schemas']['Account']

/**
 * Whose data every page shows: the key's account by name, and its mode. A key made for another
 * account than the one `npm start` filled (`default`) opens an empty console, which says so here.
 */
function AccountName() {
  const { api, mode } = useSignedIn()
  const account = useLoad(() => api.request<Account>('GET', '/v1/account'), [api])
  const name = account.value?.name ?? (account.error ? 'unknown' : '…')
  return (
    <p class="account">
      Account <strong class="account-name">{name}</strong> · {mode} mode
    </p>
  )
}

/** A menu entry is current on its page and the pages under it (a delivery log is under Webhooks). */
function isCurrent(to: string, path: string): boolean {
  return path === to || (to !== '/' && path.startsWith(`${to}/`))
}

export function Layout({
  nav,
  currentPath,
  children,
}: {
  nav: NavItem[]
  currentPath: string
  children: ComponentChildren
}) {
  const { signOut } = useSignedIn()
  // On a narrow screen the menu is folded behind a button (styles.css); opening a page folds it again.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [currentPath])
  return (
    <>
      <ModeBanner />
      <header class="top-bar">
        <span class="brand">Attendance console</span>
        <AccountName />
        <button
          type="button"
          class="secondary menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="main-menu" aria-label="Main" class={menuOpen ? 'open' : undefined}>
          <ul>
            {nav.map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={isCurrent(item.to, currentPath) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{children}</main>
    </>
  )
}
