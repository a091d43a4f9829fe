import { useMemo, useState } from 'preact/hooks'
import type { Mode } from '../../packages/client/src/client.js'
import { consoleClient } from './api.js'
import { Layout } from './components/Layout.js'
import { PageTitle } from './components/PageTitle.js'
import { type SignedIn, SignedInContext } from './context.js'
import { Directory } from './directory.js'
import { SignInPage } from './pages/SignInPage.js'
import { NAV, PAGES } from './pages.js'
import { match, usePath } from './router.js'
import { forgetKey, modeOfKey, storedKey, storeKey } from './session-key.js'

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
  const api = consoleClient(key)
  return {
    api,
    mode,
    signOut,
    locations: new Directory((id) => api.locations.retrieve(id)),
    operators: new Directory((id) => api.operators.retrieve(id)),
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
