import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

/**
 * Built into dist/console/, which the service serves (src/http/console.ts): the console at /console
 * (index.html) and the time clock's kiosk page at /kiosk (kiosk.html, its service worker
 * kiosk-sw.js). One build: both share Preact's chunk and the served assets folder.
 */
const KIOSK_SERVICE_WORKER = 'kiosk-sw'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // No public/ folder: everything the page loads goes through the bundle and gets a hashed name.
  publicDir: false,
  // jsxDev off: a build under NODE_ENV=test (vitest starting `npm start`) or development would
  // otherwise ship the development JSX runtime with every source location in it.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact', jsxDev: false },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Modern browsers preload modules themselves; the polyfill would only add code.
    modulePreload: { polyfill: false },
    // Inlined assets would be data: URLs in scripts and styles, which the CSP does not need to allow.
    assetsInlineLimit: 0,
    rollupOptions: {
      input: {
        console: fileURLToPath(new URL('index.html', import.meta.url)),
        kiosk: fileURLToPath(new URL('kiosk.html', import.meta.url)),
        [KIOSK_SERVICE_WORKER]: fileURLToPath(new URL('src/kiosk/sw.ts', import.meta.url)),
      },
      output: {
        // A service worker's address must stay the same from one build to the next (the browser
        // checks it for updates), so it alone has no hash in its name.
        entryFileNames: (chunk) =>
          chunk.name === KIOSK_SERVICE_WORKER ? `${KIOSK_SERVICE_WORKER}.js` : 'assets/[name]-[hash].js',
      },
    },
  },
})
