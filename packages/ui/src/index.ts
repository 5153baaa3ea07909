import { fileURLToPath } from 'node:url';

/** Where `vite build` (run by the workspace's `postinstall`) writes the web UI; git-ignored, never committed. */
export const uiDistDir = fileURLToPath(new URL('../dist/', import.meta.url));
