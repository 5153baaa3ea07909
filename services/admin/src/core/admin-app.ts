import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService, ManageRequest } from '@gw/governance';
import type { LogTail } from '@gw/logs';
import type { RouterService } from '@gw/router';
import {
  GatewayError,
  invalidRequest,
  type Logger,
  legacyKeySchema,
  methodNotAllowed,
  newRequestId,
  noEndpoint,
  sendError,
  validate,
} from '@gw/shared';
import type { Router as ExpressRouter } from 'express';
import type { AdminAuthOptions, AdminRole } from './admin-auth.ts';
import { type AdminModule, createAdminExpress } from './admin-express.ts';
import type { Principal } from './admin-principal.ts';
import { type AlertsAdminOptions, createAlertsAdmin } from './alerts-admin.ts';
import { type AuditLogsAdminOptions, createAuditLogsAdmin } from './audit-logs-admin.ts';
import type { AuditGate } from './audit-sink.ts';
import { type CacheAdminOptions, createCacheAdmin } from './cache-admin.ts';
import { type ConfigAdminOptions, createConfigAdmin } from './config-admin.ts';
import { createGuardrailsAdmin, type GuardrailsAdminOptions } from './guardrails-admin.ts';
import { createIdentityAdmin } from './identity-admin.ts';
import type { IdentityStore } from './identity-store.ts';
import { createLoadBalancerAdmin, type LoadBalancerAdminOptions } from './load-balancer-admin.ts';
import { createLogsAdmin, type LogsAdminOptions } from './logs-admin.ts';
import { createLogsStream } from './logs-stream.ts';
import { createMcpAdmin, type McpAdminOptions } from './mcp-admin.ts';
import { checkModelAlias } from './model-alias-check.ts';
import { createOriginPolicy } from './origin-check.ts';
import { mayReferenceSecrets } from './permissions.ts';
import { testProviderKey } from './provider-key-test.ts';
import { createScimRouter, type ScimSettings } from './scim-router.ts';
import { createSso, type SsoOptions } from './sso-router.ts';
import { createUiRouter, redirectToUi } from './ui-static.ts';
import { createVaultAdmin, type VaultAdminOptions } from './vault-admin.ts';
import { createWhoami } from './whoami-admin.ts';

export interface AdminDependencies {
  router: RouterService;
  governance: GovernanceService;
  logger: Logger;
  auth: AdminAuthOptions;
  maxBodyBytes?: number;
  /** `/api/mcp/*`: the MCP client registry in the store. */
  mcp?: McpAdminOptions;
  /** `/api/health/providers` and `/api/load-balancer/config`. */
  loadBalancer: Omit<LoadBalancerAdminOptions, 'router'>;
  /** `/api/config`: the system settings every process applies without a restart. */
  systemConfig: ConfigAdminOptions;
  /** `/api/guardrails/*` and `/api/enterprise/guardrails/providers`: guardrails in the store. */
  guardrails?: GuardrailsAdminOptions;
  /** `/api/cache/*`: removals from the response cache. */
  cache?: CacheAdminOptions;
  /** `/api/alerts/*`: alert rules, channels and history in the store. */
  alerts?: AlertsAdminOptions;
  /** `/api/vault/*`: status and refresh of secret-manager references. */
  vault?: VaultAdminOptions;
  /** `/api/logs*`: the request log store, and the live tail of `/api/logs/stream`. */
  logs?: LogsAdminOptions & { tail?: LogTail | undefined };
  /** `/api/users`, `/api/tokens`, `/api/roles` and the API tokens that authenticate; absent without a store. */
  identities?: IdentityStore | undefined;
  /** `auth.oidc`: single sign-on's `/auth/*` and the session cookie as a credential of `/api`. */
  sso?: SsoOptions | undefined;
  /** `/scim/v2`: provisioning by an identity provider (docs/scim.md); absent, it answers 503. */
  scim?: ScimSettings | undefined;
  /**
   * The audit log's sink: `/api` changes and refusals are recorded into it (audit-trail.ts); the SSO and SCIM
   * routers record logins and their changes through it. Absent: nothing is recorded.
   */
  audit?: AuditGate | undefined;
  /** `/api/audit-logs*`: the audit store, or why there is none. */
  auditLogs?: AuditLogsAdminOptions | undefined;
  /**
   * `admin.allowed_origins`: origins besides the admin's own whose pages may use the session cookie (or
   * anonymous access) and open the live tail; `auth.oidc.redirect_uri`'s origin is added.
   */
  allowedOrigins?: readonly string[] | undefined;
  /** `/ui/*`: the built web UI's folder (packages/ui's dist); absent, `/ui` is not served (and `/` not redirected). */
  uiDir?: string | undefined;
}

export interface AdminRequest {
  method: string;
  /** Who is calling, as a module needs it: only `admin` may run commands (stdio MCP clients). */
  role: AdminRole;
  /** The caller in full (role, permissions, teams); set for every request the admin app dispatches. */
  principal?: Principal | undefined;
  /** Path segments after /api/. */
  segments: string[];
  /** The query string's parameters (always set by `handle`; handlers' unit tests may leave it out). */
  query?: URLSearchParams;
  body: () => Promise<Record<string, unknown>>;
}

export type AdminResult = {
  status: number;
  body: unknown;
  /**
   * An answer written as it is produced instead of `body` (an export's JSON lines), never held whole. It is not
   * redacted for Viewers as JSON bodies are: a module streams only what every holder of the route's permission
   * may read.
   */
  stream?: { contentType: string; chunks: AsyncIterable<string> } | undefined;
};

/** `/api/*`: provider configuration CRUD (DESIGN.md §5); other resources join as their services grow. */
export function createAdminApp(dependencies: AdminDependencies) {
  const { router } = dependencies;
  const maxBodyBytes = dependencies.maxBodyBytes ?? 1024 * 1024;

  async function providers(request: AdminRequest, path: string): Promise<AdminResult> {
    const name = request.segments[1];
    if (name === undefined) {
      if (request.method === 'GET') return { status: 200, body: await router.listProviders() };
      if (request.method === 'POST') {
        const { name: bodyName, provider, ...config } = await request.body();
        const providerName = bodyName ?? provider;
        if (typeof providerName !== 'string' || providerName === '') {
          throw invalidRequest('name: is required (the provider name, e.g. openai)', 'name');
        }
        return {
          status: 201,
          body: await router.putProvider(providerName, config, {
            create: true,
            allowSecretReferences: mayReferenceSecrets(request),
          }),
        };
      }
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    }
    if (request.segments.length > 2) {
      // `/api/providers/{name}/keys/{id}/test`: one real call on that key alone (provider-key-test.ts).
      const [, , keys, keyId, test, ...rest] = request.segments;
      if (keys !== 'keys' || keyId === undefined || test !== 'test' || rest.length > 0)
        throw noEndpoint(request.method, path);
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'POST' });
      const body = await request.body().catch((error: unknown) => {
        // An empty body is no body: the key's own model is tested.
        if (error instanceof GatewayError && error.message.startsWith('request body is empty')) return {};
        throw error;
      });
      return { status: 200, body: await testProviderKey(router, { provider: name, keyId, body }) };
    }
    if (request.method === 'GET') return { status: 200, body: await router.getProvider(name) };
    // A read sent back carries the provider's name: the path names it.
    if (request.method === 'PUT') {
      const { name: _ignored, provider: _alsoIgnored, ...config } = await request.body();
      return {
        status: 200,
        body: await router.putProvider(name, config, {
          create: false,
          allowSecretReferences: mayReferenceSecrets(request),
        }),
      };
    }
    if (request.method === 'PATCH') {
      const { name: _ignored, provider: _alsoIgnored, ...patch } = await request.body();
      return {
        status: 200,
        body: await router.patchProvider(name, patch, {
          allowSecretReferences: mayReferenceSecrets(request),
        }),
      };
    }
    if (request.method === 'DELETE') {
      await router.deleteProvider(name);
      return { status: 200, body: { deleted: name } };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT, PATCH or DELETE' });
  }

  /**
   * `/api/governance/{collection}[/{id}[/usage|/rotate]]` for virtual-keys, customers, teams, users,
   * business-units and model-aliases. Create answers 201; a virtual key's value is in the create and rotate
   * answers only. PUT replaces a resource, PATCH merges into it (RFC 7396); DELETE of an owner that others
   * still name is a 409 unless `?cascade=true` (docs/governance.md "Updates and deletes").
   */
  async function governanceResources(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, collection, id, action, ...rest] = request.segments;
    if (!collection || rest.length > 0) throw noEndpoint(request.method, path);
    const manage = async (manageRequest: ManageRequest) => {
      if (collection === 'model-aliases' && 'body' in manageRequest)
        await checkModelAlias(dependencies, {
          id: 'id' in manageRequest ? manageRequest.id : undefined,
          body: manageRequest.body as Record<string, unknown>,
          patch: manageRequest.action === 'patch',
        });
      return dependencies.governance.manage(manageRequest);
    };
    if (id === undefined) {
      if (request.method === 'GET')
        return { status: 200, body: await manage({ action: 'list', collection }) };
      if (request.method === 'POST') {
        return {
          status: 201,
          body: await manage({ action: 'create', collection, body: await request.body() }),
        };
      }
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    }
    if (action === 'usage') {
      if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
      return { status: 200, body: await manage({ action: 'usage', collection, id }) };
    }
    if (action === 'rotate') {
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'POST' });
      return { status: 200, body: await manage({ action: 'rotate', collection, id }) };
    }
    if (action !== undefined) throw noEndpoint(request.method, path);
    if (request.method === 'GET')
      return { status: 200, body: await manage({ action: 'get', collection, id }) };
    if (request.method === 'PUT') {
      return {
        status: 200,
        body: await manage({ action: 'update', collection, id, body: await request.body() }),
      };
    }
    if (request.method === 'PATCH') {
      return {
        status: 200,
        body: await manage({ action: 'patch', collection, id, body: await request.body() }),
      };
    }
    if (request.method === 'DELETE') {
      const cascade = request.query?.get('cascade') ?? null;
      if (cascade !== null && cascade !== 'true' && cascade !== 'false')
        throw invalidRequest(`cascade: must be true or false, not '${cascade.slice(0, 40)}'`, 'cascade');
      return {
        status: 200,
        body: await manage({ action: 'delete', collection, id, cascade: cascade === 'true' }),
      };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT, PATCH or DELETE' });
  }

  /**
   * `/api/keys`: the migration sample of SPEC.md note 5 (`name`, `budget`, `rate_limit`, `models`), the same
   * resource as a virtual key. `models` entries `<provider>/<model>` allow that model on that provider; bare
   * entries allow the model on every configured provider; no `models` allows everything.
   */
  async function legacyKeys(request: AdminRequest, path: string): Promise<AdminResult> {
    const asVirtualKeys = {
      ...request,
      segments: ['governance', 'virtual-keys', ...request.segments.slice(1)],
    };
    if (request.segments.length > 1 || request.method === 'GET')
      return governanceResources(asVirtualKeys, path);
    if (request.method !== 'POST')
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    const input = validate(legacyKeySchema, await request.body());
    const providers = (await router.listProviders()).map((provider) => String(provider['name']));
    const byProvider = new Map<string, string[]>();
    for (const model of input.models ?? ['*']) {
      const slash = model.indexOf('/');
      const targets = slash > 0 ? [model.slice(0, slash)] : providers;
      const name = slash > 0 ? model.slice(slash + 1) : model;
      for (const provider of targets) byProvider.set(provider, [...(byProvider.get(provider) ?? []), name]);
    }
    const body = {
      name: input.name,
      ...(input.budget ? { budget: input.budget } : {}),
      ...(input.rate_limit ? { rate_limit: input.rate_limit } : {}),
      provider_configs: [...byProvider].map(([provider, allowed]) => ({ provider, allowed_models: allowed })),
    };
    return {
      status: 201,
      body: await dependencies.governance.manage({ action: 'create', collection: 'virtual-keys', body }),
    };
  }

  async function teamExists(id: string): Promise<boolean> {
    try {
      await dependencies.governance.manage({ action: 'get', collection: 'teams', id });
      return true;
    } catch (error) {
      if (error instanceof GatewayError && error.type === 'not_found') return false;
      throw error;
    }
  }

  /**
   * The modules by the first segment of their paths, one express Router each (admin-express.ts). A module
   * added here adds its rows to the permission table (route-permissions.ts).
   */
  const modules: Record<string, AdminModule> = {
    providers,
    governance: governanceResources,
    keys: legacyKeys,
    mcp: createMcpAdmin(dependencies.mcp ?? {}),
    ...createLoadBalancerAdmin({ router, ...dependencies.loadBalancer }),
    config: createConfigAdmin(dependencies.systemConfig),
    ...createGuardrailsAdmin(dependencies.guardrails ?? {}),
    ...createCacheAdmin(dependencies.cache ?? {}),
    ...createAlertsAdmin(dependencies.alerts ?? {}),
    ...createVaultAdmin(dependencies.vault ?? {}),
    ...createLogsAdmin(dependencies.logs ?? {}),
    ...createIdentityAdmin({ identities: dependencies.identities, teamExists }),
    ...createAuditLogsAdmin(dependencies.auditLogs ?? {}),
    whoami: createWhoami(),
  };
  /**
   * Routers outside `/api` by mount path: they authenticate their own callers (single sign-on's `/auth`,
   * SCIM's `/scim/v2` with its bearer token).
   */
  const routers: Record<string, ExpressRouter> = {};
  const redirectUri = dependencies.sso?.auth.oidc?.redirect_uri;
  const origins = createOriginPolicy([
    ...(dependencies.allowedOrigins ?? []),
    ...(redirectUri ? [new URL(redirectUri).origin] : []),
  ]);
  const sso =
    dependencies.sso &&
    createSso({
      ...dependencies.sso,
      identities: dependencies.identities,
      logger: dependencies.logger,
      audit: dependencies.audit,
      origins,
    });
  if (sso) routers['/auth'] = sso.router;
  routers['/scim/v2'] = createScimRouter({
    token: undefined,
    groups: undefined,
    auth: { role_mappings: [] },
    ...dependencies.scim,
    identities: dependencies.identities,
    audit: dependencies.audit,
    logger: dependencies.logger,
    maxBodyBytes,
  });
  if (dependencies.uiDir) routers['/ui'] = createUiRouter(dependencies.uiDir);
  const app = createAdminExpress({
    modules,
    routers,
    governance: dependencies.governance,
    logger: dependencies.logger,
    maxBodyBytes,
    auth: dependencies.auth,
    identities: dependencies.identities,
    sessions: sso?.sessions,
    audit: dependencies.audit,
    origins,
  });
  const logsStream = createLogsStream({
    authorize: app.authorizeUpgrade,
    tail: dependencies.logs?.tail,
    unavailable: dependencies.logs?.unavailable,
  });

  const mountPaths = ['/api', ...Object.keys(routers)];
  const mounted = (path: string) =>
    mountPaths.some((mount) => path === mount || path.startsWith(`${mount}/`));

  /**
   * Answers `/api/*` and the paths of the other routers; false for other paths. The server keeps its own
   * `upgrade` event (a WebSocket route is handled there, not here).
   */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/' && dependencies.uiDir) {
      redirectToUi(response);
      return true;
    }
    if (!mounted(path)) return false;
    if (request.httpVersionMajor === 2) {
      // express extends node:http's request and response; HTTP/2's compatibility objects are another kind.
      sendError(
        response,
        invalidRequest('the admin API speaks HTTP/1.1; this request came over HTTP/2'),
        newRequestId(),
      );
      return true;
    }
    app.handle(request, response);
    return true;
  }

  return {
    handle,
    /** WebSocket upgrades of `/api/*` (the live tail); false for other paths. */
    upgrade: logsStream.upgrade,
    /** Ends the live tails (shutdown). */
    close: logsStream.close,
    /**
     * The authentication and permission check of an upgrade request (a WebSocket route under `/api`, answered
     * by the server's `upgrade` event).
     */
    authorizeUpgrade: app.authorizeUpgrade,
    /** The first path segments of the modules (the role matrix test checks each has permission rows). */
    mounts: Object.keys(modules),
    /** Resolves once every audit record under way is stored (shutdown, before the audit store closes). */
    drainAudit: app.drainAudit,
  };
}
