// The admin screens' build: a standalone bundle served by the daemon from dist/admin (no CDN, no
// second server). Vite 7 (Vite 8 does not install on this Node); esbuild turns the TSX into JS.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  esbuild: { jsx: 'automatic' },
  // The WordPress packages read process.env.NODE_ENV / IS_GUTENBERG_PLUGIN at run time.
  define: { 'process.env.IS_GUTENBERG_PLUGIN': 'false', 'globalThis.IS_GUTENBERG_PLUGIN': 'false' },
  build: {
    outDir: '../dist/admin',
    emptyOutDir: true,
    // No data: URIs for scripts; fonts and images stay files under the strict CSP.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
    reportCompressedSize: false,
    rollupOptions: {
      // Base UI marks its modules "use client" (a React Server Components hint): meaningless in a bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
