import { readFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { methodNotAllowed, notFound, serviceUnavailable } from '@gw/shared';
import { type Request, type Response, Router } from 'express';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The web UI's Content-Security-Policy: everything from this origin (the bundle has no CDN), no inline script,
 * inline styles allowed (charts size their canvas with style attributes), WebSockets to this origin (live tail).
 * Requests may go to any http(s) origin: the playground and the guardrail test call the inference API at the
 * address the operator types (the ingress's own origin in a cluster, docs/ui.md), which the ingress allows by
 * CORS (`client.cors_allowed_origins`); with no inline or foreign script there is nothing else to send them.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' http: https:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** `{"sso": boolean}`: whether single sign-on is configured (a path no build file takes). */
const SIGN_IN_PATH = '/ui/sign-in.json';

/** The precompressed copies the build writes beside a text file (packages/ui/vite.config.ts), best first. */
const ENCODINGS = [
  ['br', '.br'],
  ['gzip', '.gz'],
] as const;

/** Whether `Accept-Encoding` takes the coding: named (or `*`) with a q above 0. */
function accepts(header: string | undefined, coding: string): boolean {
  let star = false;
  for (const entry of (header ?? '').toLowerCase().split(',')) {
    const [name = '', ...parameters] = entry.split(';').map((part) => part.trim());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (name === coding) return allowed;
    if (name === '*') star = allowed;
  }
  return star;
}

/** The file to send for an Accept-Encoding: its best precompressed copy the caller takes, else itself. */
async function negotiated(path: string, acceptEncoding: string | undefined) {
  for (const [coding, suffix] of ENCODINGS) {
    if (!accepts(acceptEncoding, coding)) continue;
    const body = await readFile(path + suffix).catch(() => undefined);
    if (body) return { body, coding };
  }
  return { body: await readFile(path), coding: undefined };
}

/**
 * `/ui/*`: the built web UI (packages/ui, docs/ui.md). Hashed files under `assets/` are cached for a year
 * (immutable); any other path that names no file is a client route and answers `index.html` (never cached). A
 * path with `..`, a backslash or a NUL (decoded or not) is a 404 before the disk is touched; a path that still
 * resolves outside the folder is too. Text files go as their precompressed brotli or gzip copy when
 * `Accept-Encoding` takes it (`Vary: Accept-Encoding`). Without a build, 503 naming the command that makes it.
 */
export function createUiRouter(distDir: string, options: { sso?: boolean } = {}): Router {
  const root = resolve(distDir);
  const router = Router({ caseSensitive: true, strict: true });
  // How one signs in here, before anyone has: the sign-in page asks `/auth/session` only where single sign-on
  // is configured (elsewhere `/auth` is not served, and the browser would log a 404 at every load).
  const signIn = Buffer.from(JSON.stringify({ sso: options.sso ?? false }));
  router.use(async (request: Request, response: Response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      throw methodNotAllowed({ method: request.method, path: request.originalUrl, allowed: 'GET or HEAD' });
    const raw = request.originalUrl.split('?')[0]!;
    if (raw === '/ui') {
      response.redirect(301, '/ui/');
      return;
    }
    if (raw === SIGN_IN_PATH) {
      response.writeHead(200, {
        'content-type': TYPES['.json'],
        'content-length': signIn.length,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      });
      response.end(request.method === 'HEAD' ? undefined : signIn);
      return;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(raw.slice('/ui/'.length));
    } catch {
      throw notFound(`the file ${raw}`);
    }
    const parts = relative.split('/');
    if (parts.some((part) => part === '..' || part === '.') || /[\\\0]/.test(relative))
      throw notFound(`the file ${raw}`);
    const file = resolve(join(root, relative));
    if (file !== root && !file.startsWith(root + sep)) throw notFound(`the file ${raw}`);
    const found = relative !== '' && (await stat(file).catch(() => undefined))?.isFile();
    const asset = relative.startsWith('assets/');
    if (!found && asset) throw notFound(`the file ${raw}`);
    const path = found ? file : join(root, 'index.html');
    const { body, coding } = await negotiated(path, request.headers['accept-encoding']).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' && !found)
          throw serviceUnavailable(
            'the web UI is not built: run `pnpm install` (its postinstall builds packages/ui) or `pnpm --filter @gw/ui build`',
          );
        throw error;
      },
    );
    response.writeHead(200, {
      ...(coding && { 'content-encoding': coding }),
      vary: 'Accept-Encoding',
      'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
      'content-length': body.length,
      'cache-control': asset ? 'public, max-age=31536000, immutable' : 'no-cache',
      'content-security-policy': UI_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    });
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  return router;
}

/** `/`: the admin's port sends browsers to the web UI. */
export function redirectToUi(response: ServerResponse): void {
  response.writeHead(302, { location: '/ui/', 'content-length': 0 });
  response.end();
}
