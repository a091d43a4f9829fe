import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

/** Built into dist/console/, which the service serves at /console (src/http/console.ts). */
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
  },
})
