// The admin screens' build: a standalone bundle served by the daemon from dist/admin (no CDN, no
// second server). Vite 7 (Vite 8 does not install on this Node); esbuild turns the TSX into JS.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

/**
 * @wordpress/date (DataViews' date fields) imports moment-timezone's bare library and its utils; the
 * utils `require('./')`, the package's index, which adds the whole IANA zone database (130 KB of
 * the list chunk, gzipped). The admin names no zone: @wordpress/date formats in its own `WP` zone,
 * built from an offset with the utils' `pack`. So './' from the utils is the bare library too.
 */
function momentTimezoneWithoutData(): Plugin {
  const bare = createRequire(import.meta.url).resolve('moment-timezone/moment-timezone.js');
  return {
    name: 'cashtrack:moment-timezone-without-data',
    enforce: 'pre',
    resolveId(source, importer) {
      if (source === './' && importer?.replace(/\\/g, '/').endsWith('moment-timezone/moment-timezone-utils.js')) return bare;
      return null;
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  esbuild: { jsx: 'automatic' },
  plugins: [momentTimezoneWithoutData()],
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
