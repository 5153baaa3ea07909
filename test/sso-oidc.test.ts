// Single sign-on through OpenID Connect (issue 18 item 4) in both modes, the cluster with two admin replicas,
// against a real provider (`oidc-provider`) run here: authorization code with PKCE, sessions in the state
// store (a session made on one replica works on the other), group → role mapping with a group change at the
// provider applying at the next sign-in, a refused sign-in, CSRF, logout and deactivation on every replica.
import {
  freePort,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';
import {
  Browser,
  type Person,
  type RunningOidcProvider,
  signIn,
  startOidcProvider,
} from './support/oidc-provider.ts';

const ADMIN_TOKEN = 'sso-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const UPSTREAM_KEY = 'sk-upstream-sso-4321';
const CLIENT_SECRET = 'sso-client-secret-0123456789abcdef';
/**
 * Where people reach the admin (a load balancer in front of the replicas): the provider sends the browser
 * there, and the test, playing the load balancer, delivers the callback to the replica it picks.
 */
const REDIRECT_URI = 'http://gw.localhost/auth/oidc/callback';

/** The embedded gateway is a public client (PKCE alone); the cluster a confidential one (GW_OIDC_CLIENT_SECRET). */
const MODES = [
  [
    'embedded',
    'gw-public',
    (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN }),
  ],
  [
    'cluster',
    'gw-confidential',
    (config: GatewayConfigInput) =>
      startCluster({
        config,
        adminToken: ADMIN_TOKEN,
        replicas: { admin: 2 },
        env: { GW_OIDC_CLIENT_SECRET: CLIENT_SECRET },
        readyTimeoutMs: 60_000,
      }),
  ],
] as const;

describe.each(MODES)('single sign-on (%s)', (_mode, clientId, start) => {
  let gateway: LaunchedGateway;
  let provider: RunningOidcProvider | undefined;
  let providerPort: number;
  const people = new Map<string, Person>();
  const issuer = () => `http://127.0.0.1:${providerPort}`;
  /** The admin replica of an index (the embedded gateway has one). */
  const admin = (index: number) => gateway.adminUrls[index % gateway.adminUrls.length]!;
  const last = () => admin(gateway.adminUrls.length - 1);
  const withCookie = (browser: Browser, extra: Record<string, string> = {}) => ({
    cookie: browser.cookieHeader(),
    ...extra,
  });
  const session = async (browser: Browser, index = 0) =>
    get(`${admin(index)}/auth/session`, withCookie(browser));
  /** Signs in through replica 0 and delivers the provider's answer to the last replica. */
  const signInAs = (browser: Browser, accountId: string, returnTo = '/ui/providers') =>
    signIn({
      browser,
      gateway: admin(0),
      callbackBase: last(),
      accountId,
      redirectUri: REDIRECT_URI,
      returnTo,
    });

  beforeAll(async () => {
    // The provider is down when the gateway starts: it is started by the first test.
    providerPort = await freePort();
    gateway = await start({
      providers: {
        openai: { keys: [{ value: UPSTREAM_KEY }], network_config: { base_url: 'http://127.0.0.1:9' } },
      },
      auth: {
        oidc: {
          issuer: issuer(),
          client_id: clientId,
          redirect_uri: REDIRECT_URI,
          scopes: ['openid', 'email', 'profile', 'groups'],
          session_ttl_seconds: 3_600,
        },
        role_mappings: [
          { claim: 'groups', value: 'gw-admins', role: 'admin' },
          { claim: 'groups', value: 'gw-viewers', role: 'viewer' },
        ],
      },
    });
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await provider?.close();
  });

  it('starts while the provider is down, answers 503 naming it, and signs in once it is up', async () => {
    const down = await get(`${admin(0)}/auth/oidc/login?return_to=/ui/`);
    expect(down.status).toBe(503);
    expect(down.body.error.message).toContain(issuer());

    provider = await startOidcProvider({
      port: providerPort,
      people,
      clients: [
        {
          client_id: 'gw-public',
          token_endpoint_auth_method: 'none',
          redirect_uris: [REDIRECT_URI],
        },
        {
          client_id: 'gw-confidential',
          client_secret: CLIENT_SECRET,
          token_endpoint_auth_method: 'client_secret_basic',
          redirect_uris: [REDIRECT_URI],
        },
      ],
    });
    const up = await fetch(`${admin(0)}/auth/oidc/login?return_to=/ui/`, { redirect: 'manual' });
    expect(up.status).toBe(302);
    expect(up.headers.get('location')).toContain(`${issuer()}/auth?`);
  });

  it('signs a member of gw-admins in as Admin, with a session good on every replica', async () => {
    people.set('alice', { email: 'Alice@Example.com', name: 'Alice', groups: ['gw-admins'] });
    const browser = new Browser();
    const done = await signInAs(browser, 'alice');

    // The authorization request: code flow with PKCE S256, state and nonce, the registered redirect URI.
    const authorize = done.authorizeUrl.searchParams;
    expect(authorize.get('response_type')).toBe('code');
    expect(authorize.get('code_challenge_method')).toBe('S256');
    expect(authorize.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authorize.get('state')).toBeTruthy();
    expect(authorize.get('nonce')).toBeTruthy();
    expect(authorize.get('client_id')).toBe(clientId);
    expect(authorize.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(authorize.get('scope')).toBe('openid email profile groups');
    expect(done.callbackUrl.searchParams.get('code')).toBeTruthy();

    expect(done.status).toBe(302);
    expect(done.location).toBe(`${last()}/ui/providers`);
    expect(browser.cookies.get('gw_session')).toMatch(/^[\w-]{43}$/);

    for (const index of gateway.adminUrls.keys()) {
      const providers = await get(`${admin(index)}/api/providers`, withCookie(browser));
      expect(providers.status).toBe(200);
      // Admin holds secrets:read: the key is shown as Admin sees it (masked by the router), not redacted.
      expect(providers.body[0].keys[0].value).toBe('sk-****4321');
      const who = await session(browser, index);
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({
        user: { email: 'alice@example.com', name: 'Alice' },
        role: 'admin',
        roles: ['admin'],
        team_ids: [],
      });
      expect(who.body.permissions).toContain('secrets:read');
      expect(who.body.csrf_token).toMatch(/^[\w-]{43}$/);
      expect(Date.parse(who.body.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    }
    const users = await get(`${admin(0)}/api/users`, ADMIN);
    expect(users.body.find((user: Json) => user.email === 'alice@example.com')).toMatchObject({
      roles: ['admin'],
      active: true,
    });
  });

  it('sets the session cookie HttpOnly and SameSite=Lax on /, and not Secure over http', async () => {
    people.set('erin', { email: 'erin@example.com', name: 'Erin', groups: ['gw-viewers'] });
    const browser = new Browser();
    const login = await browser.request('GET', `${admin(0)}/auth/oidc/login`);
    const stateCookie = login.headers.getSetCookie().find((cookie) => cookie.startsWith('gw_oidc_state='));
    expect(stateCookie).toMatch(/; Path=\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // The rest of the way by hand, to read the callback's own Set-Cookie.
    let answer = await browser.request('GET', login.location!);
    let url = login.location!;
    while (!answer.location?.startsWith(REDIRECT_URI)) {
      if (answer.location) {
        url = answer.location;
        answer = await browser.request('GET', url);
        continue;
      }
      const action = /<form[^>]*action="([^"]+)"/.exec(answer.text)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(answer.text)![1]!;
      answer = await browser.request('POST', new URL(action, url).href, {
        form: prompt === 'login' ? { prompt, login: 'erin', password: 'any' } : { prompt },
      });
    }
    const callback = new URL(answer.location);
    const done = await browser.request('GET', `${last()}${callback.pathname}${callback.search}`);
    expect(done.status).toBe(302);
    expect(done.location).toBe(`${last()}/`);
    const cookies = done.headers.getSetCookie();
    expect(cookies.find((cookie) => cookie.startsWith('gw_session='))).toMatch(
      /^gw_session=[\w-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
    );
    expect(cookies.find((cookie) => cookie.startsWith('gw_oidc_state='))).toContain('Max-Age=0');
  });

  it('applies a change of groups at the provider at the next sign-in: Viewer reads redacted, cannot write', async () => {
    const browser = new Browser();
    people.set('dave', { email: 'dave@example.com', name: 'Dave', groups: ['gw-admins'] });
    expect((await signInAs(browser, 'dave')).status).toBe(302);
    const before = browser.cookieHeader();
    expect((await session(browser)).body.role).toBe('admin');

    people.set('dave', { email: 'dave@example.com', name: 'Dave', groups: ['gw-viewers'] });
    // The provider remembers Dave (its session cookie): no login form this time, new claims all the same.
    const again = await signInAs(browser, 'dave');
    expect(again.status).toBe(302);
    const who = await session(browser, 1);
    expect(who.body).toMatchObject({ role: 'viewer', roles: ['viewer'] });
    const providers = await get(`${admin(1)}/api/providers`, withCookie(browser));
    expect(providers.status).toBe(200);
    expect(providers.body[0].keys[0].value).toBe('[redacted]');
    const write = await call(
      'POST',
      `${admin(0)}/api/roles`,
      { id: 'dave-role', permissions: ['logs:read'] },
      withCookie(browser, { 'x-csrf-token': who.body.csrf_token }),
    );
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('missing_permission');
    // The first session acts with the user's current roles too.
    expect((await get(`${admin(0)}/auth/session`, { cookie: before })).body.role).toBe('viewer');
  });

  it('refuses a person no rule maps (no default role): 403 naming the claims checked, and no session', async () => {
    people.set('bob', { email: 'bob@example.com', name: 'Bob', groups: ['contractors'] });
    const browser = new Browser();
    const done = await signInAs(browser, 'bob');
    expect(done.status).toBe(403);
    const body = JSON.parse(done.text);
    expect(body.error.type).toBe('forbidden');
    expect(body.error.code).toBe('login_refused');
    expect(body.error.message).toContain('no role mapping matched');
    expect(body.error.message).toContain('checked: groups');
    expect(body.error.message).not.toContain('contractors');
    expect(browser.cookies.has('gw_session')).toBe(false);
    const users = await get(`${admin(0)}/api/users`, ADMIN);
    expect(users.body.some((user: Json) => user.email === 'bob@example.com')).toBe(false);
  });

  it('needs x-csrf-token for a change made with the cookie; a bearer token wins over the cookie', async () => {
    people.set('frank', { email: 'frank@example.com', name: 'Frank', groups: ['gw-admins'] });
    const browser = new Browser();
    expect((await signInAs(browser, 'frank')).status).toBe(302);
    const { csrf_token: csrf } = (await session(browser)).body;
    const role = { id: `frank-${clientId}`, permissions: ['logs:read'] };

    const bare = await call('POST', `${admin(0)}/api/roles`, role, withCookie(browser));
    expect(bare.status).toBe(403);
    expect(bare.body.error.code).toBe('csrf_token');
    expect(bare.body.error.message).toContain('x-csrf-token');
    const wrong = await call(
      'POST',
      `${admin(1)}/api/roles`,
      role,
      withCookie(browser, { 'x-csrf-token': 'x' }),
    );
    expect(wrong.status).toBe(403);
    const made = await call(
      'POST',
      `${admin(1)}/api/roles`,
      role,
      withCookie(browser, { 'x-csrf-token': csrf }),
    );
    expect(made.status).toBe(201);

    // With an Authorization header the cookie is not looked at: the bearer decides, both ways.
    const bootstrap = await get(`${admin(0)}/api/providers`, { cookie: 'gw_session=forged', ...ADMIN });
    expect(bootstrap.status).toBe(200);
    const badBearer = await get(`${admin(0)}/api/providers`, {
      ...withCookie(browser),
      authorization: 'Bearer not-a-token',
    });
    expect(badBearer.status).toBe(401);
  });

  it('ends the session on every replica at logout, which needs the CSRF token', async () => {
    people.set('grace', { email: 'grace@example.com', name: 'Grace', groups: ['gw-admins'] });
    const browser = new Browser();
    expect((await signInAs(browser, 'grace')).status).toBe(302);
    const cookie = browser.cookieHeader();
    const { csrf_token: csrf } = (await session(browser)).body;

    const refused = await call('POST', `${admin(0)}/auth/logout`, undefined, { cookie });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('x-csrf-token');
    const out = await call('POST', `${admin(0)}/auth/logout`, undefined, { cookie, 'x-csrf-token': csrf });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(
      /^gw_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/,
    );
    for (const index of gateway.adminUrls.keys()) {
      const api = await get(`${admin(index)}/api/providers`, { cookie });
      expect(api.status).toBe(401);
      expect(api.body.error.message).toContain('unknown or ended');
      expect((await get(`${admin(index)}/auth/session`, { cookie })).status).toBe(401);
    }
  });

  it('refuses a deactivated user’s cookie at once on every replica, and their next sign-in', async () => {
    people.set('heidi', { email: 'heidi@example.com', name: 'Heidi', groups: ['gw-admins'] });
    const browser = new Browser();
    expect((await signInAs(browser, 'heidi')).status).toBe(302);
    const { user } = (await session(browser)).body;
    for (const index of gateway.adminUrls.keys())
      expect((await get(`${admin(index)}/api/config`, withCookie(browser))).status).toBe(200);

    const patched = await call('PATCH', `${admin(0)}/api/users/${user.id}`, { active: false }, ADMIN);
    expect(patched.status).toBe(200);
    for (const index of gateway.adminUrls.keys()) {
      const answer = await get(`${admin(index)}/api/config`, withCookie(browser));
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toContain('deactivated');
    }
    const again = await signInAs(browser, 'heidi');
    expect(again.status).toBe(403);
    expect(JSON.parse(again.text).error.message).toContain('deactivated');
  });

  it('refuses a return_to of another site (no open redirect)', async () => {
    for (const target of ['https://evil.example', '//evil.example/ui', '/\\evil.example', 'ui/providers']) {
      const answer = await get(`${admin(0)}/auth/oidc/login?return_to=${encodeURIComponent(target)}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe('return_to');
    }
  });

  it('refuses a forged or unknown session cookie with 401', async () => {
    for (const index of gateway.adminUrls.keys()) {
      const cookie = 'gw_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
      const api = await get(`${admin(index)}/api/providers`, { cookie });
      expect(api.status).toBe(401);
      expect(api.body.error.code).toBe('session_invalid');
      const who = await get(`${admin(index)}/auth/session`, { cookie });
      expect(who.status).toBe(401);
    }
    expect((await get(`${admin(0)}/auth/session`)).status).toBe(401);
  });

  it('refuses a callback whose state is not the one this browser started, and a replayed callback', async () => {
    people.set('ivan', { email: 'ivan@example.com', name: 'Ivan', groups: ['gw-admins'] });
    const browser = new Browser();
    const forged = await signIn({
      browser,
      gateway: admin(0),
      callbackBase: last(),
      accountId: 'ivan',
      redirectUri: REDIRECT_URI,
      tamper: (callback) => callback.searchParams.set('state', 'forged-state'),
    });
    expect(forged.status).toBe(400);
    expect(JSON.parse(forged.text).error).toMatchObject({ type: 'invalid_request', param: 'state' });
    expect(JSON.parse(forged.text).error.message).toContain(
      'does not match the sign-in this browser started',
    );
    expect(browser.cookies.has('gw_session')).toBe(false);

    const fresh = new Browser();
    const done = await signInAs(fresh, 'ivan');
    expect(done.status).toBe(302);
    const replay = await get(`${admin(0)}${done.callbackUrl.pathname}${done.callbackUrl.search}`, {
      cookie: `gw_oidc_state=${done.callbackUrl.searchParams.get('state')}`,
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error.message).toContain('used already');
  });

  it('answers 404 for a path under /auth that does not exist, and 405 for a wrong method', async () => {
    const missing = await get(`${admin(0)}/auth/providers`, ADMIN);
    expect(missing.status).toBe(404);
    const wrongMethod = await call('POST', `${admin(0)}/auth/session`, undefined, ADMIN);
    expect(wrongMethod.status).toBe(405);
  });
});

describe('single sign-on config', () => {
  it('refuses to start with an issuer reached in clear text off loopback, naming the field', async () => {
    const started = startEmbedded({
      config: {
        auth: {
          oidc: { issuer: 'http://idp.example.com', client_id: 'gw', redirect_uri: REDIRECT_URI },
          default_role: 'viewer',
        },
      },
      adminToken: ADMIN_TOKEN,
    });
    await expect(started).rejects.toThrow(
      /^auth\.oidc\.issuer: 'http:\/\/idp\.example\.com' must be an https URL/,
    );
  });
});
