import { useEffect, useMemo, useState } from 'preact/hooks'
import { Api } from './api.js'
import { Layout } from './components/Layout.js'
import { PageTitle } from './components/PageTitle.js'
import { type SignedIn, SignedInContext } from './context.js'
import { LocationDirectory } from './locations.js'
import { SignInPage } from './pages/SignInPage.js'
import { HOME, NAV, PAGES } from './pages.js'
import { match, navigate, usePath } from './router.js'
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
  return { api, mode, signOut, locations: new LocationDirectory(api) }
}

export function App() {
  const path = usePath()
  const [key, setKey] = useState(storedKey)
  const signOut = () => {
    forgetKey()
    setKey(undefined)
  }
  const mode = key === undefined ? undefined : modeOfKey(key)
  // One API client (and location cache) per key; signOut is the same on every render in effect.
  const signedIn = useMemo(() => (key && mode ? signedInWith(key, mode, signOut) : undefined), [key, mode])

  useEffect(() => {
    if (signedIn && path === '/') navigate(HOME, { replace: true })
  }, [signedIn, path])

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
