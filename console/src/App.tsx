import { useMemo, useState } from 'preact/hooks'
import type { Location, Operator } from '../../packages/client/src/types.js'
import { Api } from './api.js'
import { Layout } from './components/Layout.js'
import { PageTitle } from './components/PageTitle.js'
import { type SignedIn, SignedInContext } from './context.js'
import { Directory } from './directory.js'
import { SignInPage } from './pages/SignInPage.js'
import { NAV, PAGES } from './pages.js'
import { match, usePath } from './router.js'
import { forgetKey, type Mode, modeOfKey, storedKey, storeKey } from './session-key.js'

function NotFoundPage() {
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>There is no such page in the console.</p>
    </>
  )
}

function CurrentPage({ path }: { path: string }) {
  for (const page of PAGES) {
    const params = match(page.pattern, path)
    if (params) return page.render(params)
  }
  return <NotFoundPage />
}

function signedInWith(key: string, mode: Mode, signOut: () => void): SignedIn {
  const api = new Api(key)
  return {
    api,
    mode,
    signOut,
    locations: new Directory<Location>(api, '/v1/locations'),
    operators: new Directory<Operator>(api, '/v1/operators'),
  }
}

export function App() {
  const path = usePath()
  const [key, setKey] = useState(storedKey)
  const signOut = () => {
    forgetKey()
    setKey(undefined)
  }
  const mode = key === undefined ? undefined : modeOfKey(key)
  // One API client (and name caches) per key; signOut is the same on every render in effect.
  const signedIn = useMemo(() => (key && mode ? signedInWith(key, mode, signOut) : undefined), [key, mode])

  if (!signedIn) {
    return (
      <SignInPage
        onSignedIn={(newKey) => {
          storeKey(newKey)
          setKey(newKey)
        }}
      />
    )
  }
  return (
    <SignedInContext.Provider value={signedIn}>
      <Layout nav={NAV} currentPath={path}>
        <CurrentPage path={path} />
      </Layout>
    </SignedInContext.Provider>
  )
}
