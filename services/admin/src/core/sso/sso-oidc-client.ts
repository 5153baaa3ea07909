import {
  type AuthConfig,
  ConfigError,
  checkOutboundUrl,
  GatewayError,
  type Logger,
  literalRefusal,
  type OutboundPolicy,
  serviceUnavailable,
} from '@gw/shared';
import { fetchThrough, outboundAgent } from '@gw/shared/outbound';
import * as oidc from 'openid-client';

export type OidcSettings = NonNullable<AuthConfig['oidc']>;

/** How long one discovery, code exchange or userinfo request may take, in seconds. */
const REQUEST_TIMEOUT_SECONDS = 10;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a URL is on this machine (http is accepted there only: tests and a provider run beside gw). */
const onLoopback = (url: URL) => LOOPBACK_HOSTS.has(url.hostname);

/**
 * Refuses, at start, an issuer gw would talk to in clear text: only https, or http on a loopback address
 * (`http://127.0.0.1`, `http://localhost`); and one at a literal address the outbound policy refuses.
 */
export function checkIssuer(issuer: string, policy: OutboundPolicy): URL {
  const url = new URL(issuer);
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && onLoopback(url)))) {
    throw new ConfigError(
      `auth.oidc.issuer: '${issuer}' must be an https URL (http is accepted on a loopback address only: 127.0.0.1, localhost)`,
    );
  }
  // A literal address the outbound policy refuses fails start-up; a name is resolved and checked when used.
  const refused = literalRefusal(url.hostname, policy);
  if (refused) throw new ConfigError(`auth.oidc.issuer: ${refused.message}`);
  return url;
}

/** What a completed sign-in tells about the person: the ID token's claims, with userinfo's when needed. */
export interface SignedInClaims {
  claims: Record<string, unknown>;
  /** Whether userinfo was read (the ID token lacked a claim the role mappings or gw need). */
  fromUserinfo: boolean;
}

/** A refusal of the provider or of the checks of its answer, as the caller of the callback sees it. */
const unauthorized = (message: string, code: string) =>
  new GatewayError({ type: 'unauthorized', code, message });

/**
 * The client of one OpenID Connect provider (openid-client v6): authorization code with PKCE (S256), `state`
 * and `nonce`. The provider's metadata is discovered at start; when the provider cannot be reached then, start
 * goes on and each sign-in tries again until one succeeds (503 naming the issuer meanwhile).
 */
export class OidcClient {
  private readonly settings: OidcSettings;
  private readonly issuer: URL;
  private readonly clientSecret: string | undefined;
  private readonly logger: Logger;
  private discovered: Promise<oidc.Configuration> | undefined;
  private readonly outbound: OutboundPolicy;
  /**
   * Every request to the provider (discovery, token, userinfo, keys: the endpoints its discovery document
   * names, too) goes through the outbound address policy, at every connection.
   */
  private readonly fetch: ReturnType<typeof fetchThrough>;

  constructor(options: {
    settings: OidcSettings;
    clientSecret: string | undefined;
    logger: Logger;
    /** The config file's outbound address policy (docs/network.md). */
    outbound: OutboundPolicy;
  }) {
    this.settings = options.settings;
    this.outbound = options.outbound;
    this.issuer = checkIssuer(options.settings.issuer, this.outbound);
    this.clientSecret = options.clientSecret;
    this.logger = options.logger;
    this.fetch = fetchThrough(outboundAgent(this.outbound));
  }

  /** Starts discovery (start-up); a failure is logged, and the next sign-in tries again. */
  start(): void {
    this.configuration().catch((error: unknown) =>
      this.logger.warn(
        { err: error, issuer: this.settings.issuer },
        'single sign-on: the identity provider could not be discovered at start; sign-ins will try again',
      ),
    );
  }

  /** The provider's configuration, discovered once; a failed discovery is forgotten so the next call retries. */
  private configuration(): Promise<oidc.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = undefined;
      throw this.unreachable('could not be discovered', error);
    });
    return this.discovered;
  }

  private async discover(): Promise<oidc.Configuration> {
    await checkOutboundUrl(this.issuer.href, this.outbound, { field: 'auth.oidc.issuer' });
    // A client without a secret is a public client: PKCE alone protects its code exchange.
    const authentication = this.clientSecret ? oidc.ClientSecretBasic(this.clientSecret) : oidc.None();
    return oidc.discovery(
      this.issuer,
      this.settings.client_id,
      this.clientSecret ? undefined : { token_endpoint_auth_method: 'none' },
      authentication,
      {
        timeout: REQUEST_TIMEOUT_SECONDS,
        [oidc.customFetch]: this.fetch,
        ...(this.issuer.protocol === 'http:' && { execute: [oidc.allowInsecureRequests] }),
      },
    );
  }

  private unreachable(what: string, error: unknown): GatewayError {
    const reason = error instanceof Error ? describeCause(error) : String(error);
    return serviceUnavailable(
      `single sign-on: the identity provider ${this.settings.issuer} ${what} (${reason}); try again later`,
      error,
    );
  }

  /** The provider's authorization URL for one sign-in (throws the 503 while the provider is unreachable). */
  async authorizationUrl(checks: { state: string; nonce: string; codeVerifier: string }): Promise<URL> {
    const configuration = await this.configuration();
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.settings.redirect_uri,
      scope: this.settings.scopes.join(' '),
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Exchanges the code of the provider's answer (`query`, the callback's query string) and checks the ID
   * token (signature, issuer, audience, nonce). Reads userinfo when the ID token lacks one of `wanted`.
   */
  async signIn(
    query: URLSearchParams,
    checks: { state: string; nonce: string; codeVerifier: string },
    wanted: readonly string[],
  ): Promise<SignedInClaims> {
    const configuration = await this.configuration();
    // The answer as the provider sent it to the redirect URI (whatever address this replica is reached at).
    const currentUrl = new URL(this.settings.redirect_uri);
    currentUrl.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.refusal(error, 'the code exchange');
    }
    const claims: Record<string, unknown> = { ...tokens.claims() };
    const lacking = wanted.filter((claim) => claims[claim.split('.')[0]!] === undefined);
    if (lacking.length === 0) return { claims, fromUserinfo: false };
    if (!configuration.serverMetadata().userinfo_endpoint) return { claims, fromUserinfo: false };
    let userinfo: oidc.UserInfoResponse;
    try {
      userinfo = await oidc.fetchUserInfo(configuration, tokens.access_token, String(claims['sub']));
    } catch (error) {
      throw this.refusal(error, 'userinfo');
    }
    // The ID token's claims are signed: userinfo only adds what it lacked.
    return { claims: { ...userinfo, ...claims }, fromUserinfo: true };
  }

  /** gw's error for a failed step of the callback: what the provider or the checks said, never a token. */
  private refusal(error: unknown, step: string): GatewayError {
    if (error instanceof oidc.AuthorizationResponseError)
      return unauthorized(
        `the identity provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`,
        'oidc_refused',
      );
    if (error instanceof oidc.ResponseBodyError)
      return unauthorized(
        `the identity provider refused ${step}: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`,
        'oidc_refused',
      );
    if (error instanceof oidc.ClientError)
      return unauthorized(
        `the identity provider's answer failed a check of ${step}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`,
        'oidc_invalid_response',
      );
    return this.unreachable(`did not answer ${step}`, error);
  }
}

/** The innermost reason of a network failure (`fetch failed` says nothing; its cause does). */
function describeCause(error: Error): string {
  let current: unknown = error;
  let message = error.message;
  while (current instanceof Error) {
    message = current.message || (current as { code?: string }).code || message;
    current = current.cause;
  }
  return message;
}
