import type { ComponentChildren } from 'preact'
import { useSignedIn } from '../context.js'
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
  return (
    <>
      <ModeBanner />
      <header class="top-bar">
        <span class="brand">Attendance console</span>
        <nav aria-label="Main">
          <ul>
            {nav.map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={currentPath.startsWith(item.to) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{children}</main>
    </>
  )
}
