/**
 * The console's build (docs/CONSOLE.md "Build"): Preact through the automatic JSX runtime, served
 * under /console/, written to dist/console. Nothing is inlined as a data: URL and no script is
 * inline, so the Content-Security-Policy can allow the gateway's own origin alone.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
