import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const COMPRESSIBLE = /\.(?:js|css|html|svg|json|txt|map)$/;
/** Below this, a compressed copy saves less than its headers cost. */
const MIN_BYTES = 1024;

/**
 * Beside every text file of the build, its gzip (`.gz`) and brotli (`.br`) copies, made once at build time at
 * the highest levels (too slow per request, free at build): the admin serves the one `Accept-Encoding` takes
 * (services/admin/src/core/ui-static.ts). A copy no smaller than its file is not written.
 */
function precompress(): Plugin {
  const compressGzip = promisify(gzip);
  const compressBrotli = promisify(brotliCompress);
  let outDir = '';
  return {
    name: 'gw-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const files = (await readdir(outDir, { recursive: true })).filter((name) => COMPRESSIBLE.test(name));
      await Promise.all(
        files.map(async (name) => {
          const path = join(outDir, name);
          const body = await readFile(path);
          if (body.length < MIN_BYTES) return;
          const copies = [
            ['.gz', await compressGzip(body, { level: 9 })],
            [
              '.br',
              await compressBrotli(body, {
                params: {
                  [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
                  [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
                },
              }),
            ],
          ] as const;
          for (const [suffix, copy] of copies)
            if (copy.length < body.length) await writeFile(path + suffix, copy);
        }),
      );
    },
  };
}

// The web UI is served by the admin service at /ui/ (docs/ui.md): everything bundled, one chunk per page.
export default defineConfig({
  root: 'app',
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  plugins: [precompress()],
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
