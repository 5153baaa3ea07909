// Origin checks of the admin (issue 25 defect 4), both modes: a page of another origin may not use the session
// cookie (on /api, /auth/session, /auth/logout) nor open the live tail with any credential, since a WebSocket
// upgrade is never held back by CORS and any page can offer a `gw-bearer.` subprotocol. The admin's own origin,
// `admin.allowed_origins` and the origin of `auth.oidc.redirect_uri` are allowed; a bearer token in the
// Authorization header (which no page can make a browser send) is not asked for its Origin on /api. Every /api
// and /auth answer carries `cache-control: no-store`.
import { once } from 'node:events';
import {
  freePort,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { call, get } from './support/http.ts';
import { Browser, type Person, signIn, startOidcProvider } from './support/oidc-provider.ts';

const ADMIN_TOKEN = 'origin-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const REDIRECT_URI = 'http://gw.localhost/auth/oidc/callback';
const ALLOWED = 'https://console.example';
const EVIL = 'http://evil.example';

const MODES = [
  [
    'embedded',
    async (config: GatewayConfigInput) => ({
      gateway: await startEmbedded({ config, adminToken: ADMIN_TOKEN }),
      database: undefined,
    }),
  ],
  [
    'cluster',
    async (config: GatewayConfigInput) => {
      const database = await createTestDatabase();
      const gateway = await startCluster({
        config,
        adminToken: ADMIN_TOKEN,
        env: { GW_LOGS_DATABASE_URL: database.url },
        readyTimeoutMs: 60_000,
      });
      return { gateway, database };
    },
  ],
] as const;

/** The live tail's upgrade as a browser page would send it: the status answered (101 when it opened). */
async function upgrade(
  url: string,
  options: { origin?: string; headers?: Record<string, string>; protocols?: string[] },
): Promise<number> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/api/logs/stream`, options.protocols ?? [], {
    headers: options.headers ?? {},
    ...(options.origin && { origin: options.origin }),
  });
  socket.on('error', () => {});
  const status = await Promise.race([
    once(socket, 'open').then(() => 101),
    once(socket, 'unexpected-response').then(
      ([, response]) => (response as { statusCode: number }).statusCode,
    ),
  ]);
  socket.terminate();
  return status;
}

describe.each(MODES)('admin origin checks (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;
  let closeProvider: (() => Promise<void>) | undefined;
  const browser = new Browser();
  let csrf: string;
  const own = () => gateway.adminUrl;
  const cookie = (extra: Record<string, string> = {}) => ({ cookie: browser.cookieHeader(), ...extra });

  beforeAll(async () => {
    const people = new Map<string, Person>([
      ['ada', { email: 'ada@example.com', name: 'Ada', groups: ['gw-admins'] }],
    ]);
    const providerPort = await freePort();
    const provider = await startOidcProvider({
      port: providerPort,
      people,
      clients: [
        { client_id: 'gw-origin', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT_URI] },
      ],
    });
    closeProvider = () => provider.close();
    ({ gateway, database } = await start({
      auth: {
        oidc: {
          issuer: provider.issuer,
          client_id: 'gw-origin',
          redirect_uri: REDIRECT_URI,
          scopes: ['openid', 'email', 'profile', 'groups'],
        },
        role_mappings: [{ claim: 'groups', value: 'gw-admins', role: 'admin' }],
      },
      admin: { allowed_origins: [ALLOWED] },
    }));
    const done = await signIn({
      browser,
      gateway: own(),
      accountId: 'ada',
      redirectUri: REDIRECT_URI,
      returnTo: '/ui/',
    });
    expect(done.status).toBe(302);
    csrf = (await get(`${own()}/auth/session`, cookie())).body.csrf_token;
    expect(csrf).toBeTruthy();
  }, scaled(120_000));
  afterAll(async () => {
    await gateway?.close();
    await closeProvider?.();
    await database?.drop();
  });

  it('refuses a live tail upgrade from another origin with the session cookie, and takes its own', async () => {
    expect(await upgrade(own(), { origin: EVIL, headers: cookie() })).toBe(403);
    expect(await upgrade(own(), { origin: 'null', headers: cookie() })).toBe(403);
    // The same host on another port, or the other scheme, is another origin.
    const port = Number(new URL(own()).port);
    expect(await upgrade(own(), { origin: `http://127.0.0.1:${port + 1}`, headers: cookie() })).toBe(403);
    expect(await upgrade(own(), { origin: `https://127.0.0.1:${port}`, headers: cookie() })).toBe(403);

    expect(await upgrade(own(), { origin: own(), headers: cookie() })).toBe(101);
    // Behind a proxy that ends TLS: the scheme it names.
    expect(
      await upgrade(own(), {
        origin: `https://127.0.0.1:${port}`,
        headers: cookie({ 'x-forwarded-proto': 'https' }),
      }),
    ).toBe(101);
    expect(await upgrade(own(), { origin: ALLOWED, headers: cookie() })).toBe(101);
    expect(await upgrade(own(), { origin: 'http://gw.localhost', headers: cookie() })).toBe(101);
    // Not a browser: no Origin at all.
    expect(await upgrade(own(), { headers: cookie() })).toBe(101);
  });

  it('refuses a foreign origin on the upgrade whatever the credential: any page can offer a subprotocol', async () => {
    const protocols = ['gw-admin', `gw-bearer.${Buffer.from(ADMIN_TOKEN).toString('base64url')}`];
    expect(await upgrade(own(), { origin: EVIL, protocols })).toBe(403);
    expect(await upgrade(own(), { origin: EVIL, headers: ADMIN })).toBe(403);
    expect(await upgrade(own(), { origin: own(), protocols })).toBe(101);
    expect(await upgrade(own(), { headers: ADMIN })).toBe(101);
  });

  it('refuses /api and the session routes with the cookie from another origin, with 403 naming the reason', async () => {
    const read = await get(`${own()}/api/providers`, cookie({ origin: EVIL }));
    expect(read.status).toBe(403);
    expect(read.body.error).toMatchObject({ type: 'forbidden', code: 'origin_not_allowed' });
    expect(read.body.error.message).toContain(EVIL);
    const change = await call(
      'POST',
      `${own()}/api/governance/teams`,
      { name: 'from-evil' },
      cookie({ origin: EVIL, 'x-csrf-token': csrf }),
    );
    expect(change.status).toBe(403);
    expect(change.body.error.code).toBe('origin_not_allowed');
    const session = await get(`${own()}/auth/session`, cookie({ origin: EVIL }));
    expect(session.status).toBe(403);
    expect(JSON.stringify(session.body)).not.toContain(csrf);
    const logout = await call(
      'POST',
      `${own()}/auth/logout`,
      undefined,
      cookie({ origin: EVIL, 'x-csrf-token': csrf }),
    );
    expect(logout.status).toBe(403);

    // Nothing was made, and the session still works from its own origin and the allowed one.
    const teams = await get(`${own()}/api/governance/teams`, ADMIN);
    expect(JSON.stringify(teams.body)).not.toContain('from-evil');
    expect((await get(`${own()}/api/providers`, cookie({ origin: own() }))).status).toBe(200);
    expect((await get(`${own()}/api/providers`, cookie({ origin: ALLOWED }))).status).toBe(200);
    expect((await get(`${own()}/api/providers`, cookie())).status).toBe(200);
    const made = await call(
      'POST',
      `${own()}/api/governance/teams`,
      { name: 'from-home' },
      cookie({ origin: own(), 'x-csrf-token': csrf }),
    );
    expect(made.status).toBe(201);
    // A bearer token in the Authorization header is no ambient credential: its Origin is not asked.
    expect((await get(`${own()}/api/providers`, { ...ADMIN, origin: EVIL })).status).toBe(200);
  });

  it('answers every /api and /auth answer with cache-control: no-store', async () => {
    const answers = [
      await get(`${own()}/api/providers`, ADMIN),
      await get(`${own()}/api/providers`),
      await get(`${own()}/api/no-such-module`, ADMIN),
      await get(`${own()}/api/providers`, cookie({ origin: EVIL })),
      await call('POST', `${own()}/api/governance/teams`, { name: 't2' }, ADMIN),
      await get(`${own()}/auth/session`, cookie()),
      await get(`${own()}/auth/session`),
      await get(`${own()}/auth/nothing-here`),
    ];
    expect(answers.map((answer) => answer.headers.get('cache-control'))).toEqual(
      answers.map(() => 'no-store'),
    );
  });
});
