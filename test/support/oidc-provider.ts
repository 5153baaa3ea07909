// A real OpenID Connect provider (`oidc-provider`, in memory) for single sign-on tests, and a browser without a
// screen that signs in through it: redirects followed by hand, cookies carried, the provider's login and
// consent forms submitted as a person would.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scaled } from '@gw/testkit';
import Provider, { type ClientMetadata } from 'oidc-provider';

/** What the provider says of a person (their account id is the key of `people`). */
export interface Person {
  email: string;
  name: string;
  groups: string[];
  email_verified?: boolean;
}

export interface OidcProviderOptions {
  /** Registered clients (their `redirect_uris` must hold the gateway's `auth.oidc.redirect_uri`). */
  clients: ClientMetadata[];
  /** People by account id; edit an entry to change what the next sign-in's claims say. */
  people: Map<string, Person>;
  /** A fixed port (to start the provider after the gateway that names it); any free port otherwise. */
  port?: number;
  /** Puts the scopes' claims in the ID token too (by default they are in userinfo only). */
  claimsInIdToken?: boolean;
}

export interface RunningOidcProvider {
  issuer: string;
  /** `METHOD /path` of every request the provider received, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Starts the provider on loopback. Claims: `sub` (scope openid), `email` and `email_verified` (email), `name`
 * (profile), `groups` (groups). As a conforming provider with an access token issued, it puts them in userinfo,
 * not in the ID token, unless `claimsInIdToken`.
 */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  let handle: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${(request.url ?? '/').split('?')[0]}`);
    handle?.(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: options.clients,
    jwks: { keys: [{ ...key, kid: 'sso-test', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    pkce: { required: () => true },
    conformIdTokenClaims: !options.claimsInIdToken,
    // Lifetimes said explicitly (the provider notices each default it falls back to).
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 3_600,
      IdToken: 600,
      Interaction: 600,
      Session: 3_600,
    },
    features: { devInteractions: { enabled: true } },
    async findAccount(_context, id) {
      const person = options.people.get(id);
      if (!person) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, email_verified: true, ...person }) };
    },
  });
  provider.on('server_error', (_context, error) => console.error('oidc-provider:', error));
  handle = provider.callback();
  return {
    issuer,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Hop {
  method: string;
  url: string;
  status: number;
  location?: string | undefined;
}

/**
 * A browser without a screen: one cookie jar (cookies of 127.0.0.1 are shared by every port, as a browser
 * shares them; paths are not told apart), redirects followed by hand so that each hop can be checked.
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(
    method: string,
    url: string,
    options: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; location?: string | undefined; text: string; headers: Headers }> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers['cookie'] = this.cookieHeader();
    if (options.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method,
      headers,
      redirect: 'manual',
      ...(options.form && { body: new URLSearchParams(options.form).toString() }),
      signal: AbortSignal.timeout(scaled(15_000)),
    });
    for (const cookie of response.headers.getSetCookie()) this.keep(cookie);
    const location = response.headers.get('location') ?? undefined;
    return {
      status: response.status,
      location: location && new URL(location, url).href,
      text: await response.text(),
      headers: response.headers,
    };
  }

  private keep(setCookie: string): void {
    const [pair = '', ...attributes] = setCookie.split(';');
    const equals = pair.indexOf('=');
    const name = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    const removed = attributes.some((attribute) => {
      const [key = '', setting = ''] = attribute.trim().split('=');
      if (key.toLowerCase() === 'max-age') return Number(setting) <= 0;
      if (key.toLowerCase() === 'expires') return Date.parse(setting) <= Date.now();
      return false;
    });
    if (removed || value === '') this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

export interface SignIn {
  /** The provider's authorization URL gw redirected to. */
  authorizeUrl: URL;
  /** The callback URL the provider sent the browser to (at the public redirect URI). */
  callbackUrl: URL;
  /** gw's answer to the callback. */
  status: number;
  location?: string | undefined;
  text: string;
  hops: Hop[];
}

/**
 * Signs `accountId` in: `GET <gateway>/auth/oidc/login`, through the provider's login and consent forms (each
 * shown only when the provider needs it), to the provider's redirect to `redirectUri`, which is delivered to
 * `callbackBase` (the admin replica a load balancer would pick); answers gw's answer to the callback.
 */
export async function signIn(options: {
  browser: Browser;
  gateway: string;
  accountId: string;
  redirectUri: string;
  returnTo?: string;
  callbackBase?: string;
  /** Changes the callback URL before it is delivered (a forged state). */
  tamper?: (callback: URL) => void;
}): Promise<SignIn> {
  const { browser } = options;
  const hops: Hop[] = [];
  const go = async (method: string, url: string, form?: Record<string, string>) => {
    const answer = await browser.request(method, url, form ? { form } : {});
    hops.push({ method, url, status: answer.status, location: answer.location });
    return answer;
  };
  const query = options.returnTo === undefined ? '' : `?return_to=${encodeURIComponent(options.returnTo)}`;
  const login = await go('GET', `${options.gateway}/auth/oidc/login${query}`);
  if (login.status !== 302 || !login.location)
    throw new Error(`login answered ${login.status}: ${login.text.slice(0, 300)}`);
  const authorizeUrl = new URL(login.location);
  let answer = await go('GET', authorizeUrl.href);
  let url = authorizeUrl.href;
  for (let step = 0; step < 12; step += 1) {
    if (answer.location?.startsWith(options.redirectUri)) {
      const callbackUrl = new URL(answer.location);
      options.tamper?.(callbackUrl);
      const delivered = `${options.callbackBase ?? options.gateway}${callbackUrl.pathname}${callbackUrl.search}`;
      const done = await go('GET', delivered);
      return {
        authorizeUrl,
        callbackUrl,
        status: done.status,
        location: done.location,
        text: done.text,
        hops,
      };
    }
    if (answer.location) {
      url = answer.location;
      answer = await go('GET', url);
      continue;
    }
    if (answer.status !== 200)
      throw new Error(`${url} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(answer.text)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(answer.text)?.[1];
    if (!action || !prompt) throw new Error(`no form at ${url}: ${answer.text.slice(0, 300)}`);
    const form: Record<string, string> =
      prompt === 'login' ? { prompt, login: options.accountId, password: 'any' } : { prompt };
    answer = await go('POST', new URL(action.replaceAll('&amp;', '&'), url).href, form);
  }
  throw new Error(`the sign-in did not come back to ${options.redirectUri}: ${JSON.stringify(hops)}`);
}
