import { useEffect, useMemo, useState } from 'preact/hooks'
import { AttendanceApiError, type AuthSession, type Mode } from '../../packages/client/src/client.js'
import { canOfKey, canOfRole, type Scope } from './access.js'
import { asProblem, consoleClient, signedOutClient } from './api.js'
import { Layout } from './components/Layout.js'
import { PageTitle } from './components/PageTitle.js'
import { type SignedIn, SignedInContext, type Who } from './context.js'
import { Directory } from './directory.js'
import { NAV, PAGES } from './pages.js'
import {
  forgetSignedIn,
  mightBeSignedIn,
  preferAccount,
  preferMode,
  preferredAccount,
  preferredMode,
  rememberSignedIn,
} from './person-preferences.js'
import { BASE, dropHash, match, navigate, usePath } from './router.js'
import { forgetKey, modeOfKey, storedKey, storeKey } from './session-key.js'
import { AcceptInvitePage } from './sign-in/AcceptInvitePage.js'
import { KEY_FORM } from './sign-in/forms.js'
import { ResetPasswordPage } from './sign-in/ResetPasswordPage.js'
import { SignInPage } from './sign-in/SignInPage.js'

function NotFoundPage() {
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>There is no such page in the console.</p>
    </>
  )
}

function NotOfferedPage() {
  return (
    <>
      <PageTitle>Not available</PageTitle>
      <p>This page is not part of what you may do in this account. An owner can change your role.</p>
    </>
  )
}

/** Whether the console offers a page (its menu entry, the page itself) to the one signed in. */
function offers(signedIn: SignedIn, needs: Scope | 'person' | undefined): boolean {
  if (needs === undefined) return true
  return needs === 'person' ? signedIn.who.kind === 'person' : signedIn.can(needs)
}

function CurrentPage({ path, signedIn }: { path: string; signedIn: SignedIn }) {
  for (const page of PAGES) {
    const params = match(page.pattern, path)
    if (!params) continue
    return offers(signedIn, page.needs) ? page.render(params) : <NotOfferedPage />
  }
  return <NotFoundPage />
}

/** Who the console works for, or why nobody: asked of the service at start when a person may be signed in. */
type State =
  | { kind: 'checking' }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'key'; key: string; mode: Mode }
  | { kind: 'person'; session: AuthSession }

function initialState(): State {
  const key = storedKey()
  const mode = key === undefined ? undefined : modeOfKey(key)
  if (key !== undefined && mode) return { kind: 'key', key, mode }
  return mightBeSignedIn() ? { kind: 'checking' } : { kind: 'signed-out' }
}

/**
 * Single sign-on's refusals land on `/console/sign-in` (any page signs in where it is, but this one
 * is no page of a signed-in console): signed in, home.
 */
function leaveSignInPage(): void {
  if (window.location.pathname === `${BASE}/sign-in`) navigate('/', { replace: true })
}

function withDirectories(signedIn: Omit<SignedIn, 'locations' | 'operators'>): SignedIn {
  const { api } = signedIn
  return {
    ...signedIn,
    locations: new Directory((id) => api.locations.retrieve(id)),
    operators: new Directory((id) => api.operators.retrieve(id)),
  }
}

export function App() {
  const path = usePath()
  const [state, setState] = useState<State>(initialState)
  const [mode, setMode] = useState<Mode>(preferredMode)
  const [accountId, setAccountId] = useState(preferredAccount)

  const signedOut = (notice?: string) => {
    forgetSignedIn()
    setState({ kind: 'signed-out', notice })
  }
  /** Whoever signs in next starts at home, not on the page the last one left. */
  const signedOutHome = () => {
    signedOut()
    navigate('/', { replace: true })
  }
  const personSignedIn = (session: AuthSession) => {
    rememberSignedIn()
    setState({ kind: 'person', session })
    leaveSignInPage()
  }
  /** A 401 in the middle of work: is the session over (signed out elsewhere, idle, a new password)? */
  const recheck = () =>
    signedOutClient()
      .auth.session()
      .then(personSignedIn, (error: unknown) => {
        if (error instanceof AttendanceApiError && error.status === 401)
          signedOut('Your sign-in has ended: sign in again.')
      })

  useEffect(() => {
    if (state.kind !== 'checking') return
    signedOutClient()
      .auth.session()
      .then(personSignedIn, (error: unknown) =>
        signedOut(
          error instanceof AttendanceApiError && error.status === 401 ? undefined : asProblem(error).message,
        ),
      )
  }, [state.kind])

  const session = state.kind === 'person' ? state.session : undefined
  const account = session?.accounts.find((a) => a.id === accountId) ?? session?.accounts[0]
  const key = state.kind === 'key' ? state.key : undefined
  const keyMode = state.kind === 'key' ? state.mode : undefined
  // One API client (and name caches) per key, or per session, account and mode.
  const signedIn = useMemo((): SignedIn | undefined => {
    if (key !== undefined && keyMode !== undefined) {
      return withDirectories({
        api: consoleClient({ apiKey: key }),
        mode: keyMode,
        who: { kind: 'key' },
        can: canOfKey,
        signOut: () => {
          forgetKey()
          // Home, on the form it signed in with: whoever signs in next starts there.
          window.history.replaceState(null, '', `${BASE}/${KEY_FORM}`)
          setState({ kind: 'signed-out' })
        },
      })
    }
    if (!session || !account) return undefined
    const api = consoleClient(
      { session: { mode, accountId: account.id, csrfToken: session.csrf_token } },
      recheck,
    )
    const who: Who = {
      kind: 'person',
      user: session.user,
      account,
      role: account.role,
      accounts: session.accounts,
      chooseMode: (chosen) => {
        preferMode(chosen)
        setMode(chosen)
      },
      chooseAccount: (chosen) => {
        preferAccount(chosen)
        setAccountId(chosen)
      },
    }
    return withDirectories({
      api,
      mode,
      who,
      can: canOfRole(account.role),
      signOut: () => {
        // Signed out here whatever the answer: a session already ended elsewhere is ended here too.
        api.auth.signOut().then(signedOutHome, signedOutHome)
      },
    })
  }, [key, keyMode, session, account, mode])

  // The links the API's e-mails and CLI print work whoever is signed in.
  if (path === '/accept-invite') {
    return (
      <AcceptInvitePage
        onSignedIn={(accepted) => {
          personSignedIn(accepted)
          navigate('/', { replace: true })
        }}
      />
    )
  }
  if (path === '/reset-password') {
    return (
      <ResetPasswordPage
        onDone={() => {
          signedOut('Your new password is set: sign in with it.')
          navigate('/', { replace: true })
        }}
      />
    )
  }

  if (state.kind === 'checking') return <main class="sign-in" aria-busy="true" />
  if (!signedIn) {
    return (
      <SignInPage
        notice={state.kind === 'signed-out' ? state.notice : undefined}
        onKey={(newKey) => {
          storeKey(newKey)
          dropHash()
          setState({ kind: 'key', key: newKey, mode: modeOfKey(newKey) ?? 'test' })
          leaveSignInPage()
        }}
        onSession={personSignedIn}
      />
    )
  }
  return (
    <SignedInContext.Provider value={signedIn}>
      <Layout nav={NAV.filter((item) => offers(signedIn, item.needs))} currentPath={path}>
        <CurrentPage path={path} signedIn={signedIn} />
      </Layout>
    </SignedInContext.Provider>
  )
}
