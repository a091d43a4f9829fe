import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { components } from '../../../packages/client/src/generated/schema.js'
import { ROLE_WORDS, type Scope } from '../access.js'
import { useSignedIn, type Who } from '../context.js'
import { useLoad } from '../hooks.js'
import { Link } from '../router.js'

export interface NavItem {
  /** A page path without the base, e.g. `/sessions`. */
  to: string
  label: string
  /** What the page needs (pages.tsx): the menu offers it only to one who has it. */
  needs?: Scope | 'person'
}

/** Which mode every answer on screen belongs to; test mode is impossible to miss. */
function ModeBanner() {
  const { mode, who } = useSignedIn()
  if (mode === 'live') {
    return (
      <p class="mode-banner mode-live" role="status">
        Live mode: real data.
      </p>
    )
  }
  return (
    <p class="mode-banner mode-test" role="status">
      {who.kind === 'key'
        ? 'Test mode: you are viewing test data (signed in with an sk_test_ key).'
        : 'Test mode: you are viewing test data.'}
    </p>
  )
}

type Account = components['schemas']['Account']

/**
 * Whose data every page shows: the account by name, and its mode. A key made for another account
 * than the one `npm start` filled (`default`) opens an empty console, which says so here. A
 * person's account is named by their session; a key's is asked of the API.
 */
function AccountName() {
  const { who, mode } = useSignedIn()
  return (
    <p class="account">
      Account{' '}
      <strong class="account-name">{who.kind === 'person' ? who.account.name : <KeyAccountName />}</strong> ·{' '}
      {mode} mode
    </p>
  )
}

function KeyAccountName() {
  const { api } = useSignedIn()
  const account = useLoad(() => api.request<Account>('GET', '/v1/account'), [api])
  return <>{account.value?.name ?? (account.error ? 'unknown' : '…')}</>
}

type Person = Extract<Who, { kind: 'person' }>

/**
 * The signed-in person, their role in this account and their own page; the switch between the
 * account's test and live data (every request then names that mode); the account, among several.
 */
function PersonBar({ person }: { person: Person }) {
  const { mode } = useSignedIn()
  return (
    <div class="person-bar">
      <p class="who">
        <span class="who-name">{person.user.name}</span> ·{' '}
        <span class="who-role">{ROLE_WORDS[person.role]}</span> · <Link to="/my-account">My account</Link>
      </p>
      <label class="mode-switch">
        <input
          type="checkbox"
          role="switch"
          checked={mode === 'test'}
          aria-checked={mode === 'test'}
          onChange={(event) => person.chooseMode(event.currentTarget.checked ? 'test' : 'live')}
        />
        Test data
      </label>
      {person.accounts.length > 1 && (
        <label class="account-choice">
          Account{' '}
          <select
            value={person.account.id}
            onChange={(event) => person.chooseAccount(event.currentTarget.value)}
          >
            {person.accounts.map((account) => (
              <option key={account.id} value={account.id}>
                {account.name}
              </option>
            ))}
          </select>
        </label>
      )}
    </div>
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
  const { signOut, who } = useSignedIn()
  // On a narrow screen the menu is folded behind a button (styles.css); opening a page folds it again.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [currentPath])
  return (
    <>
      <ModeBanner />
      <header class={who.kind === 'person' ? 'top-bar top-bar-person' : 'top-bar'}>
        <span class="brand">Attendance console</span>
        <AccountName />
        {who.kind === 'person' && <PersonBar person={who} />}
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
