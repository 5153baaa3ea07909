import { defineConfig } from 'vite';

// The web UI is served by the admin service at /ui/ (docs/ui.md): everything bundled, one chunk per page.
export default defineConfig({
  root: 'app',
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 350,
    rollupOptions: {
      // React Query's "use client" directives mean nothing outside a server-components bundler.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
