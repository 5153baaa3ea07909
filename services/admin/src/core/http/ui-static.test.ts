// The web UI's files at /ui (ui-static.ts) over a real server: content types, caching, the CSP, client routes
// answering index.html, no way out of the folder (raw paths with .., %2e%2e, backslashes), 503 without a build.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sendError } from '@gw/shared';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUiRouter, redirectToUi, UI_CSP } from './ui-static.ts';

type ErrorBody = { error: { type: string; message: string } };

let root: string;
let server: Server;
let base: string;

function serve(dist: string, options: { sso?: boolean } = {}) {
  const app = express();
  app.use('/ui', createUiRouter(dist, options));
  app.use((error: unknown, _request: Request, response: Response, _next: NextFunction) => {
    sendError(response, error, 'test');
  });
  return createServer((request, response) => {
    if (request.url === '/') return redirectToUi(response);
    app(request as Request, response as Response);
  });
}

async function listen(target: Server): Promise<string> {
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const address = target.address() as { port: number };
  return `127.0.0.1:${address.port}`;
}

/** A request sent byte for byte (fetch would normalise `..` away). */
function raw(host: string, path: string): Promise<{ status: number; text: string }> {
  const [hostname, port] = host.split(':');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname!, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
    });
    socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), text }));
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gw-ui-'));
  await mkdir(join(root, 'dist', 'assets'), { recursive: true });
  await writeFile(join(root, 'dist', 'index.html'), '<!doctype html><title>gw</title>');
  await writeFile(join(root, 'dist', 'assets', 'main-abc123.js'), 'console.log(1)');
  await writeFile(join(root, 'dist', 'assets', 'main-abc123.css'), 'body{}');
  await writeFile(join(root, 'secret.txt'), 'outside the folder');
  server = serve(join(root, 'dist'));
  base = await listen(server);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await rm(root, { recursive: true, force: true });
});

describe('/ui static files', () => {
  it('serves index.html with the CSP, never cached, for /ui/ and client routes', async () => {
    for (const path of ['/ui/', '/ui/keys', '/ui/logs/some-id']) {
      const answer = await fetch(`http://${base}${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      expect(answer.headers.get('content-security-policy')).toBe(UI_CSP);
      expect(await answer.text()).toContain('<title>gw</title>');
    }
  });

  it('serves hashed assets with their type, cached as immutable; a missing asset is a 404', async () => {
    const script = await fetch(`http://${base}/ui/assets/main-abc123.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const style = await fetch(`http://${base}/ui/assets/main-abc123.css`);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await fetch(`http://${base}/ui/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error.type).toBe('not_found');
  });

  it('redirects /ui to /ui/ and / to /ui/', async () => {
    const ui = await fetch(`http://${base}/ui`, { redirect: 'manual' });
    expect(ui.status).toBe(301);
    expect(ui.headers.get('location')).toBe('/ui/');
    const slash = await fetch(`http://${base}/`, { redirect: 'manual' });
    expect(slash.status).toBe(302);
    expect(slash.headers.get('location')).toBe('/ui/');
  });

  it('never leaves its folder', async () => {
    for (const path of [
      '/ui/../secret.txt',
      '/ui/%2e%2e/secret.txt',
      '/ui/%2E%2E/secret.txt',
      '/ui/assets/../../secret.txt',
      '/ui/..%2fsecret.txt',
      '/ui/..%5csecret.txt',
      '/ui/%00',
    ]) {
      const answer = await raw(base, path);
      expect(answer.text, path).not.toContain('outside the folder');
      expect([400, 404], path).toContain(answer.status);
    }
  });

  it('answers only GET and HEAD', async () => {
    const head = await fetch(`http://${base}/ui/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const post = await fetch(`http://${base}/ui/`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('says in /ui/sign-in.json whether single sign-on is configured, never cached', async () => {
    const off = await fetch(`http://${base}/ui/sign-in.json`);
    expect(off.status).toBe(200);
    expect(off.headers.get('cache-control')).toBe('no-cache');
    expect(await off.json()).toEqual({ sso: false });
    const withSso = serve(join(root, 'dist'), { sso: true });
    const host = await listen(withSso);
    try {
      expect(await (await fetch(`http://${host}/ui/sign-in.json`)).json()).toEqual({ sso: true });
    } finally {
      await new Promise((resolve) => withSso.close(resolve));
    }
  });

  it('answers 503 naming the build command when there is no build', async () => {
    const empty = serve(join(root, 'not-built'));
    const host = await listen(empty);
    try {
      const answer = await fetch(`http://${host}/ui/`);
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as ErrorBody).error.message).toContain('pnpm install');
    } finally {
      await new Promise((resolve) => empty.close(resolve));
    }
  });
});
