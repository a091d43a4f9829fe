import { render } from 'preact'
import { Kiosk } from './Kiosk.js'
import './kiosk.css'

const root = document.getElementById('app')
if (root) render(<Kiosk />, root)

// The app shell cached for a reload without the network (sw.ts). Its scope, /kiosk, covers the page
// at /kiosk and at /kiosk/; the service allows it with Service-Worker-Allowed.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/kiosk/sw.js', { scope: '/kiosk' }).catch((error: unknown) => {
    // Online the kiosk works without it; only a reload offline needs it.
    console.warn('The kiosk could not install its offline copy:', error)
  })
}
