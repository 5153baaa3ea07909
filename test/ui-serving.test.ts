// The web UI as each mode serves it (docs/ui.md): embedded on the main port beside the inference routes, in a
// cluster on the admin's own port only. `/` redirects to `/ui/` where the admin answers, hashed assets are
// immutable, client routes answer index.html, `/ui/../` never leaves the folder, text files go precompressed
// (brotli or gzip, as Accept-Encoding takes), and the inference paths and the ingress's `/` are untouched. The build itself is the workspace's postinstall (packages/ui).
import { readdir, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { type LaunchedGateway, scaled, startCluster, startEmbedded } from '@gw/testkit';
import { uiDistDir } from '@gw/ui';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ADMIN_TOKEN = 'admin-token-for-ui-serving';

const MODES = [
  ['embedded', () => startEmbedded({ config: {}, adminToken: ADMIN_TOKEN })],
  ['cluster', () => startCluster({ config: {}, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 })],
] as const;

describe.each(MODES)('web UI serving (%s)', (mode, start) => {
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    gateway = await start();
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('redirects / to /ui/ on the admin port, and serves index.html with the CSP', async () => {
    const root = await fetch(`${gateway.adminUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    for (const path of ['/ui/', '/ui/keys', '/ui/logs/abc']) {
      const page = await fetch(`${gateway.adminUrl}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await page.text();
      expect(html).toContain('/ui/assets/');
      expect(html).not.toMatch(/https?:\/\//);
    }
  });

  it('serves every built asset with its type, immutable', async () => {
    // The precompressed copies are not assets of their own: the negotiation below serves them.
    const assets = (await readdir(join(uiDistDir, 'assets'))).filter((name) => !/\.(?:br|gz)$/.test(name));
    expect(assets.some((name) => name.endsWith('.js'))).toBe(true);
    for (const name of assets) {
      const answer = await fetch(`${gateway.adminUrl}/ui/assets/${name}`);
      expect(answer.status, name).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(answer.headers.get('content-type')).toMatch(
        name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
    }
  });

  it('sends the precompressed copy Accept-Encoding takes, with Vary, and the file itself otherwise', async () => {
    // The first load: the page and the script and stylesheet it names.
    const html = await readFile(join(uiDistDir, 'index.html'), 'utf8');
    const first = [...html.matchAll(/\/ui\/(assets\/[^"]+\.(?:js|css))/g)].map((match) => match[1]!);
    expect(first.length).toBeGreaterThanOrEqual(2);
    for (const name of first) {
      const plain = await readFile(join(uiDistDir, name));
      const cases = [
        ['br, gzip', 'br', '.br'],
        ['gzip, deflate', 'gzip', '.gz'],
        ['gzip;q=1, br;q=0', 'gzip', '.gz'],
        ['identity', undefined, ''],
        [undefined, undefined, ''],
      ] as const;
      for (const [acceptEncoding, coding, suffix] of cases) {
        const answer = await raw(`${gateway.adminUrl}/ui/${name}`, acceptEncoding);
        expect(answer.headers['content-encoding'], `${name} for ${acceptEncoding}`).toBe(coding);
        expect(answer.headers.vary).toBe('Accept-Encoding');
        expect(answer.headers['content-type']).toMatch(
          name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
        );
        expect(answer.body.equals(suffix ? await readFile(join(uiDistDir, name + suffix)) : plain)).toBe(
          true,
        );
        if (suffix) expect(answer.body.length).toBeLessThan(plain.length);
      }
    }
  });

  it('never serves a file outside the build', async () => {
    for (const path of [
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
      '/ui/%2e%2e%2f%2e%2e%2fpackage.json',
    ]) {
      const answer = await fetch(`${gateway.adminUrl}${path}`);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(await answer.text()).not.toContain('"name": "gw"');
    }
  });

  it('leaves the inference routes alone', async () => {
    // The ingress answers its own routes (here a refusal of a request without a virtual key), never the UI.
    const models = await fetch(`${gateway.url}/v1/models`, { redirect: 'manual' });
    expect(models.status).toBeGreaterThanOrEqual(400);
    expect(models.headers.get('content-type')).toMatch(/json/);
    expect(((await models.json()) as { error: { message: string } }).error.message).toBeTruthy();
    if (mode === 'cluster') {
      // The ingress has no UI: its / stays a 404.
      const root = await fetch(`${gateway.url}/`, { redirect: 'manual' });
      expect(root.status).toBe(404);
      expect((await fetch(`${gateway.url}/ui/`)).status).toBe(404);
    }
  });
});

/** A GET with exactly the Accept-Encoding given (fetch adds its own and decodes the answer). */
function raw(url: string, acceptEncoding: string | undefined) {
  return new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const headers: Record<string, string> = acceptEncoding ? { 'accept-encoding': acceptEncoding } : {};
      httpRequest(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      })
        .on('error', reject)
        .end();
    },
  );
}
