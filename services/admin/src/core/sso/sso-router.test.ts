import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AuthConfig,
  authConfigSchema,
  ConfigError,
  outboundPolicy,
  sendError,
  silentLogger,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Browser,
  type OidcProviderOptions,
  type Person,
  type RunningOidcProvider,
  signIn,
  startOidcProvider,
} from '../../../../../test/support/oidc-provider.ts';
import { IdentityStore } from '../access/identity-store.ts';
import type { AuditEvent } from '../audit/audit-sink.ts';
import { createSso } from './sso-router.ts';

const REDIRECT_URI = 'https://gw.example/auth/oidc/callback';
const CLIENT_SECRET = 'router-test-secret';

const authOf = (issuer: string, extra: Record<string, unknown> = {}): AuthConfig =>
  authConfigSchema.parse({
    oidc: { issuer, client_id: 'gw', redirect_uri: REDIRECT_URI, scopes: ['openid', 'email', 'groups'] },
    role_mappings: [{ value: 'gw-admins', role: 'admin' }],
    ...extra,
  });

describe('createSso', () => {
  it('is off without auth.oidc, and refuses at start without a store or with a cleartext issuer', async () => {
    const store = await MemoryStore.open();
    const identities = new IdentityStore({ store, logger: silentLogger() });
    const base = { clientSecret: undefined, identities, logger: silentLogger(), outbound: outboundPolicy() };
    expect(createSso({ ...base, auth: authConfigSchema.parse({}), store })).toBeUndefined();
    expect(() => createSso({ ...base, auth: authOf('http://127.0.0.1:9'), store: undefined })).toThrow(
      'auth.oidc: single sign-on keeps sessions in the state store, and this admin has none (set REDIS_URL)',
    );
    expect(() => createSso({ ...base, auth: authOf('http://idp.example.com'), store })).toThrow(ConfigError);
  });
});

/** An admin app holding only the `/auth` router of `createSso`, on a loopback port. */
async function serveSso(options: {
  issuer: string;
  events?: AuditEvent[];
}): Promise<{ url: string; close: () => Promise<void> }> {
  const store = await MemoryStore.open();
  const sso = createSso({
    auth: authOf(options.issuer),
    outbound: outboundPolicy(),
    clientSecret: CLIENT_SECRET,
    store,
    identities: new IdentityStore({ store, logger: silentLogger() }),
    logger: silentLogger(),
    audit: { record: async (event) => void options.events?.push(event) },
  })!;
  const app = express();
  app.use((_request: Request, response: Response, next: NextFunction) => {
    response.locals['admin'] = { requestId: 'req_test' };
    next();
  });
  app.use('/auth', sso.router);
  app.use((error: unknown, _request: Request, response: Response, _next: NextFunction) => {
    sendError(response, error, 'req_test');
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const CLIENTS: OidcProviderOptions['clients'] = [
  {
    client_id: 'gw',
    client_secret: CLIENT_SECRET,
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: [REDIRECT_URI],
  },
];

describe('claims from the ID token', () => {
  it('reads no userinfo when the ID token carries email and the mapped claims', async () => {
    const people = new Map<string, Person>([
      ['amy', { email: 'amy@example.com', name: 'Amy', groups: ['gw-admins'] }],
    ]);
    const provider = await startOidcProvider({ people, clients: CLIENTS, claimsInIdToken: true });
    const served = await serveSso({ issuer: provider.issuer });
    try {
      const done = await signIn({
        browser: new Browser(),
        gateway: served.url,
        accountId: 'amy',
        redirectUri: REDIRECT_URI,
      });
      expect(done.status).toBe(302);
      expect(provider.requests).toContain('POST /token');
      expect(provider.requests).not.toContain('GET /me');
    } finally {
      await served.close();
      await provider.close();
    }
  });
});

describe('single sign-on routes and their audit records', () => {
  const people = new Map<string, Person>();
  const events: AuditEvent[] = [];
  let provider: RunningOidcProvider;
  let served: { url: string; close: () => Promise<void> };
  let gateway: string;

  beforeAll(async () => {
    provider = await startOidcProvider({ people, clients: CLIENTS });
    served = await serveSso({ issuer: provider.issuer, events });
    gateway = served.url;
  });
  afterAll(async () => {
    await served?.close();
    await provider?.close();
  });

  it('records login, logout and login_refused, with no token, code or cookie in them', async () => {
    people.set('amy', { email: 'amy@example.com', name: 'Amy', groups: ['gw-admins'] });
    people.set('ben', { email: 'ben@example.com', name: 'Ben', groups: ['others'] });
    const browser = new Browser();
    const done = await signIn({
      browser,
      gateway,
      accountId: 'amy',
      redirectUri: REDIRECT_URI,
      returnTo: '/ui/',
    });
    expect(done.status).toBe(302);
    expect(done.location).toBe(`${gateway}/ui/`);
    // Over https (the redirect URI's scheme) the session cookie is Secure.
    const cookie = browser.cookieHeader();
    const who = await fetch(`${gateway}/auth/session`, { headers: { cookie } });
    const session = (await who.json()) as { user: { id: string }; csrf_token: string };
    const out = await fetch(`${gateway}/auth/logout`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': session.csrf_token },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toBe(
      'gw_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
    );

    const refused = await signIn({
      browser: new Browser(),
      gateway,
      accountId: 'ben',
      redirectUri: REDIRECT_URI,
    });
    expect(refused.status).toBe(403);

    expect(events).toEqual([
      {
        actor: `session:${session.user.id}`,
        role: 'admin',
        action: 'login',
        target: 'oidc:amy@example.com',
        status: 302,
        source: '127.0.0.1',
        requestId: 'req_test',
      },
      {
        actor: `session:${session.user.id}`,
        role: 'admin',
        action: 'logout',
        target: 'oidc:amy@example.com',
        status: 200,
        source: '127.0.0.1',
        requestId: 'req_test',
      },
      {
        actor: 'oidc:ben@example.com',
        action: 'login_refused',
        target: 'oidc:ben@example.com',
        status: 403,
        detail:
          "no role mapping matched the identity's claims (checked: groups) and auth.default_role is not set",
        source: '127.0.0.1',
        requestId: 'req_test',
      },
    ]);
    const recorded = JSON.stringify(events);
    const secrets = [
      ...browser.cookies.values(),
      done.callbackUrl.searchParams.get('code')!,
      done.callbackUrl.searchParams.get('state')!,
      session.csrf_token,
    ];
    for (const secret of secrets) expect(recorded).not.toContain(secret);
    // This provider keeps groups and email out of the ID token: each sign-in read userinfo.
    expect(provider.requests.filter((request) => request === 'GET /me')).toHaveLength(2);
  });

  it('sends a person back to a return_to with characters outside ASCII, percent-encoded (no 500)', async () => {
    people.set('cat', { email: 'cat@example.com', name: 'Cat', groups: ['gw-admins'] });
    const done = await signIn({
      browser: new Browser(),
      gateway,
      accountId: 'cat',
      redirectUri: REDIRECT_URI,
      returnTo: '/ui/→café?q=ü ✓',
    });
    expect(done.status).toBe(302);
    expect(done.location).toBe(`${gateway}/ui/%E2%86%92caf%C3%A9?q=%C3%BC%20%E2%9C%93`);
  });

  it('marks the cookies Secure when the redirect URI is https', async () => {
    const login = await fetch(`${gateway}/auth/oidc/login`, { redirect: 'manual' });
    expect(login.headers.get('set-cookie')).toMatch(/^gw_oidc_state=[\w-]+; Path=\/auth\/oidc; .*; Secure$/);
  });

  it('answers 401 to the provider’s refusal (the person declined) and 400 without a state', async () => {
    const browser = new Browser();
    const login = await browser.request('GET', `${gateway}/auth/oidc/login`);
    const state = new URL(login.location!).searchParams.get('state')!;
    const declined = await browser.request(
      'GET',
      `${gateway}/auth/oidc/callback?error=access_denied&error_description=declined&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
    );
    expect(declined.status).toBe(401);
    expect(JSON.parse(declined.text).error.message).toBe(
      'the identity provider refused the sign-in: access_denied (declined)',
    );
    const stateless = await browser.request('GET', `${gateway}/auth/oidc/callback?code=x`);
    expect(stateless.status).toBe(400);
    expect(JSON.parse(stateless.text).error.param).toBe('state');
  });
});
