import {
  type AuthConfig,
  ConfigError,
  GatewayError,
  invalidRequest,
  type Logger,
  methodNotAllowed,
  newRequestId,
  noEndpoint,
  type OutboundPolicy,
  sameSecret,
  sendJson,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { type Request, type Response, Router } from 'express';
import * as oidc from 'openid-client';
import type { SessionAuthenticator } from '../access/admin-principal.ts';
import type { IdentityStore } from '../access/identity-store.ts';
import type { OriginPolicy } from '../access/origin-check.ts';
import type { AuditEvent, AuditGate, AuditSink } from '../audit/audit-sink.ts';
import type { SessionView } from './session-view.ts';
import { readCookie, SESSION_COOKIE, STATE_COOKIE, serializeCookie } from './sso-cookies.ts';
import { LoginRefused, signInUser, wantedClaims } from './sso-identity.ts';
import { OidcClient } from './sso-oidc-client.ts';
import { activeSession, checkCsrf, createSessionAuthenticator } from './sso-sessions.ts';
import { LOGIN_TTL_SECONDS, SsoStore } from './sso-store.ts';

/** Single sign-on as the composition root hands it over (docs/admin-access.md "Single sign-on (OIDC)"). */
export interface SsoOptions {
  /** The config's `auth` section: single sign-on is on when `auth.oidc` is set. */
  auth: AuthConfig;
  /** GW_OIDC_CLIENT_SECRET, injected by the process's main; without it gw is a public client (PKCE alone). */
  clientSecret: string | undefined;
  /** Where sign-ins under way and sessions live (Redis in a cluster, so every replica shares them). */
  store: Store | undefined;
  /** The config file's outbound address policy: where the identity provider may be (docs/network.md). */
  outbound: OutboundPolicy;
}

/** A backslash (a slash to a browser) or a control character. */
const unsafeInPath = (character: string) => {
  const code = character.charCodeAt(0);
  return character === '\\' || code < 0x20 || code === 0x7f;
};

/**
 * Where `return_to` may send a person: a path of this gateway, never another site. Characters outside visible
 * ASCII are percent-encoded (UTF-8), as a browser sends them: a `Location` header holds nothing else (before,
 * `/ui/→` was stored and the callback failed with 500 writing it).
 */
function returnPath(value: string | null): string {
  if (value === null || value === '') return '/';
  // `//host` and `/\host` are other sites to a browser; control characters and backslashes have no place here.
  if (
    !value.startsWith('/') ||
    value.startsWith('//') ||
    [...value].some(unsafeInPath) ||
    value.length > 2048
  )
    throw invalidRequest(
      `return_to: must be a path of this gateway starting with a single / (such as /ui/), not '${value.slice(0, 80)}'`,
      'return_to',
    );
  try {
    return value.replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character));
  } catch {
    // A lone surrogate has no UTF-8 form.
    throw invalidRequest('return_to: is not valid Unicode text', 'return_to');
  }
}

/** The query string of a request, as sent (the admin app parses no query itself). */
const queryOf = (request: Request) => {
  const url = request.originalUrl;
  const mark = url.indexOf('?');
  return new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1));
};

const SWEEP_EVERY_MS = 60_000;

const requestIdOf = (response: Response): string =>
  (response.locals['admin'] as { requestId?: string } | undefined)?.requestId ?? newRequestId();

const noSession = () =>
  new GatewayError({
    type: 'unauthorized',
    code: 'session_required',
    message: `no session: sign in at /auth/oidc/login (the ${SESSION_COOKIE} cookie carries the session)`,
  });

/**
 * `/auth/*` of the admin (mounted outside `/api`, so these routes authenticate their callers themselves) and
 * the session cookie as a credential of `/api`. Undefined when `auth.oidc` is not configured. Throws a
 * ConfigError at start when the issuer is not https (nor loopback) or no state store holds sessions.
 */
export function createSso(
  options: SsoOptions & {
    identities: IdentityStore | undefined;
    logger: Logger;
    audit?: AuditSink | undefined;
    /** The session's routes act with the cookie: a page of another origin may not call them. */
    origins?: OriginPolicy | undefined;
  },
): { router: Router; sessions: SessionAuthenticator } | undefined {
  const { auth, identities, logger, audit } = options;
  const settings = auth.oidc;
  if (!settings) return undefined;
  if (!options.store || !identities)
    throw new ConfigError(
      'auth.oidc: single sign-on keeps sessions in the state store, and this admin has none (set REDIS_URL)',
    );
  const client = new OidcClient({
    settings,
    clientSecret: options.clientSecret,
    logger,
    outbound: options.outbound,
  });
  const sso = new SsoStore(options.store);
  const secure = new URL(settings.redirect_uri).protocol === 'https:';
  const wanted = wantedClaims(auth.role_mappings);
  const sessionOptions = { sessions: sso, identities };
  client.start();

  /** Sessions made or ended are changes: admitted, and answered once recorded, as `/api` changes are. */
  const gate = audit && 'admit' in audit && 'hold' in audit ? (audit as AuditGate) : undefined;
  async function hold(request: Request, response: Response, event: Omit<AuditEvent, 'requestId'>) {
    if (!gate) return record(request, response, event);
    await gate.hold({ ...event, source: request.socket.remoteAddress, requestId: requestIdOf(response) });
  }

  async function record(request: Request, response: Response, event: Omit<AuditEvent, 'requestId'>) {
    if (!audit) return;
    try {
      await audit.record({
        ...event,
        source: request.socket.remoteAddress,
        requestId: requestIdOf(response),
      });
    } catch (error) {
      logger.warn({ err: error, action: event.action }, 'single sign-on: an audit entry was not recorded');
    }
  }

  // Expired sign-ins (anyone may start one) and sessions are deleted at most once a minute per replica, when a
  // sign-in starts: the store holds little more than the sign-ins of the last ten minutes.
  let sweptAt = 0;
  function sweep() {
    const now = Date.now();
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    sso
      .sweep(now)
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'single sign-on: expired sign-ins were not swept'),
      );
  }

  function redirect(response: Response, location: string, cookies: string[]) {
    response.writeHead(302, {
      location,
      'cache-control': 'no-store',
      'set-cookie': cookies,
      'x-request-id': requestIdOf(response),
    });
    response.end();
  }

  const router = Router({ caseSensitive: true });

  router.get('/oidc/login', async (request: Request, response: Response) => {
    const returnTo = returnPath(queryOf(request).get('return_to'));
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    // Discovery first: while the provider is unreachable this is a 503 naming it, and nothing is stored.
    const location = await client.authorizationUrl({ state, nonce, codeVerifier });
    await sso.putLogin(state, { nonce, code_verifier: codeVerifier, return_to: returnTo });
    sweep();
    redirect(response, location.href, [
      serializeCookie(STATE_COOKIE, state, { path: '/auth/oidc', maxAgeSeconds: LOGIN_TTL_SECONDS, secure }),
    ]);
  });

  router.get('/oidc/callback', async (request: Request, response: Response) => {
    const query = queryOf(request);
    const state = query.get('state');
    if (!state)
      throw invalidRequest("state: the identity provider's answer carries no state parameter", 'state');
    const started = readCookie(request.headers, STATE_COOKIE);
    if (started === undefined || !sameSecret(started, state))
      throw invalidRequest(
        `state: does not match the sign-in this browser started (cookie ${STATE_COOKIE}); start again at /auth/oidc/login`,
        'state',
      );
    const login = await sso.takeLogin(state);
    if (!login)
      throw invalidRequest(
        `state: no sign-in under way has this state (used already, or older than ${LOGIN_TTL_SECONDS / 60} minutes); start again at /auth/oidc/login`,
        'state',
      );
    const { claims } = await client.signIn(
      query,
      { state, nonce: login.nonce, codeVerifier: login.code_verifier },
      wanted,
    );
    // Signing in writes the user (roles from the provider) and a session: nothing of it while it cannot be recorded.
    await gate?.admit();
    let signedIn: Awaited<ReturnType<typeof signInUser>>;
    try {
      signedIn = await signInUser({ claims, auth, identities });
    } catch (error) {
      if (!(error instanceof LoginRefused)) throw error;
      const refusal = error.toGatewayError();
      await record(request, response, {
        actor: error.who,
        action: 'login_refused',
        target: error.who,
        status: refusal.status,
        detail: error.message,
      });
      throw refusal;
    }
    const { user, role } = signedIn;
    const { id } = await sso.createSession(user.id, settings.session_ttl_seconds);
    await hold(request, response, {
      actor: `session:${user.id}`,
      role: role.id,
      action: 'login',
      target: `oidc:${user.email}`,
      status: 302,
    });
    // Checked again: a sign-in stored before return_to was encoded answers 400, never a 500 from the header.
    redirect(response, returnPath(login.return_to), [
      serializeCookie(SESSION_COOKIE, id, { path: '/', maxAgeSeconds: settings.session_ttl_seconds, secure }),
      serializeCookie(STATE_COOKIE, '', { path: '/auth/oidc', maxAgeSeconds: 0, secure }),
    ]);
  });

  router.get('/session', async (request: Request, response: Response) => {
    options.origins?.check(request);
    const active = await activeSession(request.headers, sessionOptions);
    if (!active) throw noSession();
    const { user, role, session } = active;
    sendJson(
      response,
      200,
      {
        user: { id: user.id, email: user.email, name: user.name },
        role: role.id,
        roles: user.roles,
        permissions: role.permissions,
        team_scoped: role.team_scoped,
        team_ids: user.team_ids,
        created_at: session.created_at,
        expires_at: session.expires_at,
        csrf_token: session.csrf_token,
      } satisfies SessionView,
      { 'cache-control': 'no-store', 'x-request-id': requestIdOf(response) },
    );
  });

  router.post('/logout', async (request: Request, response: Response) => {
    options.origins?.check(request);
    const active = await activeSession(request.headers, sessionOptions);
    if (!active) throw noSession();
    checkCsrf(request.headers, request.method, active.session);
    await gate?.admit();
    await sso.deleteSession(active.id);
    await hold(request, response, {
      actor: `session:${active.user.id}`,
      role: active.role.id,
      action: 'logout',
      target: `oidc:${active.user.email}`,
      status: 200,
    });
    sendJson(
      response,
      200,
      { logged_out: true },
      {
        'set-cookie': serializeCookie(SESSION_COOKIE, '', { path: '/', maxAgeSeconds: 0, secure }),
        'x-request-id': requestIdOf(response),
      },
    );
  });

  const allowed: Record<string, string> = {
    '/oidc/login': 'GET',
    '/oidc/callback': 'GET',
    '/session': 'GET',
    '/logout': 'POST',
  };
  // Nothing under /auth falls through to the /api chain.
  router.use((request: Request) => {
    const methods = allowed[request.path];
    if (methods)
      throw methodNotAllowed({ method: request.method, path: request.originalUrl, allowed: methods });
    throw noEndpoint(request.method, request.originalUrl.split('?')[0]!);
  });

  return { router, sessions: createSessionAuthenticator(sessionOptions) };
}
