import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService } from '@gw/governance';
import type { LogTail } from '@gw/logs';
import type { RouterService } from '@gw/router';
import {
  GatewayError,
  invalidRequest,
  type Logger,
  newRequestId,
  type OutboundPolicy,
  type SecretReferenceRule,
  sendError,
} from '@gw/shared';
import type { Router as ExpressRouter } from 'express';
import type { AdminAuthOptions } from './access/admin-auth.ts';
import type { IdentityStore } from './access/identity-store.ts';
import { createOriginPolicy } from './access/origin-check.ts';
import type { AuditGate } from './audit/audit-sink.ts';
import { createAdminExpress } from './http/admin-express.ts';
import { createRouteTable } from './http/route-table.ts';
import { createUiRouter, redirectToUi } from './http/ui-static.ts';
import { type AlertsAdminOptions, createAlertsAdmin } from './modules/alerts-admin.ts';
import { type AuditLogsAdminOptions, createAuditLogsAdmin } from './modules/audit-logs-admin.ts';
import { type CacheAdminOptions, createCacheAdmin } from './modules/cache-admin.ts';
import { type ConfigAdminOptions, createConfigAdmin } from './modules/config-admin.ts';
import { createGatewayAddress } from './modules/gateway-address-admin.ts';
import { createGovernanceAdmin } from './modules/governance-admin.ts';
import { createGuardrailsAdmin, type GuardrailsAdminOptions } from './modules/guardrails-admin.ts';
import { createIdentityAdmin } from './modules/identity-admin.ts';
import { createLoadBalancerAdmin, type LoadBalancerAdminOptions } from './modules/load-balancer-admin.ts';
import { createLogsAdmin, type LogsAdminOptions } from './modules/logs-admin.ts';
import { createLogsStream } from './modules/logs-stream.ts';
import { createMcpAdmin, type McpAdminOptions } from './modules/mcp-admin.ts';
import { createPricingAdmin } from './modules/pricing-admin.ts';
import { createProvidersAdmin } from './modules/providers-admin.ts';
import { createSpendAdmin } from './modules/spend-admin.ts';
import { createVaultAdmin, type VaultAdminOptions } from './modules/vault-admin.ts';
import { createWhoami } from './modules/whoami-admin.ts';
import { createScimRouter, type ScimSettings } from './scim/scim-router.ts';
import { createSso, type SsoOptions } from './sso/sso-router.ts';

export interface AdminDependencies {
  router: RouterService;
  governance: GovernanceService;
  logger: Logger;
  auth: AdminAuthOptions;
  /**
   * The config file's outbound address policy (docs/network.md): where MCP servers, guardrail profiles and alert
   * channels written through the API may point.
   */
  outbound: OutboundPolicy;
  /**
   * The config file's `admin.secret_references` (docs/admin-access.md "Secret references"): which references
   * Admin may name in MCP clients, guardrail profiles and alert channels (the router checks providers).
   */
  secretReferences: SecretReferenceRule;
  maxBodyBytes?: number;
  /** `/api/mcp/*`: the MCP client registry in the store. */
  mcp?: Omit<McpAdminOptions, 'outbound' | 'secretReferences'>;
  /** `/api/health/providers` and `/api/load-balancer/config`. */
  loadBalancer: Omit<LoadBalancerAdminOptions, 'router'>;
  /** `/api/config` and `/api/pricing`: the system settings every process applies without a restart. */
  systemConfig: ConfigAdminOptions;
  /** `/api/guardrails/*` and `/api/enterprise/guardrails/providers`: guardrails in the store. */
  guardrails?: Omit<GuardrailsAdminOptions, 'outbound' | 'secretReferences'>;
  /** `/api/cache/*`: removals from the response cache. */
  cache?: CacheAdminOptions;
  /** `/api/alerts/*`: alert rules, channels and history in the store. */
  alerts?: Omit<AlertsAdminOptions, 'outbound' | 'secretReferences'>;
  /** `/api/vault/*`: status and refresh of secret-manager references. */
  vault?: VaultAdminOptions;
  /** `/api/logs*`: the request log store, and the live tail of `/api/logs/stream`. */
  logs?: LogsAdminOptions & { tail?: LogTail | undefined };
  /** `/api/users`, `/api/tokens`, `/api/roles` and the API tokens that authenticate; absent without a store. */
  identities?: IdentityStore | undefined;
  /** `auth.oidc`: single sign-on's `/auth/*` and the session cookie as a credential of `/api`. */
  sso?: Omit<SsoOptions, 'outbound'> | undefined;
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
  /** GW_PUBLIC_URL: the ingress's address as the deployment knows it (`/api/gateway-address`). */
  publicUrl?: string | undefined;
  /** `/ui/*`: the built web UI's folder (packages/ui's dist); absent, `/ui` is not served (and `/` not redirected). */
  uiDir?: string | undefined;
}

/** The admin process's HTTP side: `/api/*` from the route rows, single sign-on, SCIM and the web UI. */
export function createAdminApp(dependencies: AdminDependencies) {
  const { router, outbound, secretReferences } = dependencies;
  const maxBodyBytes = dependencies.maxBodyBytes ?? 1024 * 1024;

  async function teamExists(id: string): Promise<boolean> {
    try {
      await dependencies.governance.manage({ action: 'get', collection: 'teams', id });
      return true;
    } catch (error) {
      if (error instanceof GatewayError && error.type === 'not_found') return false;
      throw error;
    }
  }

  /** Every route of `/api`, one row each (route-table.ts): express mounts them, permissions are read from them. */
  const routes = createRouteTable([
    ...createProvidersAdmin(router),
    ...createGovernanceAdmin({ governance: dependencies.governance, router }),
    ...createMcpAdmin({ ...dependencies.mcp, outbound, secretReferences }),
    ...createLoadBalancerAdmin({ router, ...dependencies.loadBalancer }),
    ...createConfigAdmin(dependencies.systemConfig),
    ...createPricingAdmin({
      ...dependencies.systemConfig,
      providerNames: async () => (await router.listProviders()).map((provider) => String(provider['name'])),
    }),
    ...createGuardrailsAdmin({ ...dependencies.guardrails, outbound, secretReferences }),
    ...createCacheAdmin(dependencies.cache ?? {}),
    ...createAlertsAdmin({ ...dependencies.alerts, outbound, secretReferences }),
    ...createVaultAdmin(dependencies.vault ?? {}),
    ...createLogsAdmin(dependencies.logs ?? {}),
    ...createSpendAdmin({
      store: dependencies.logs?.store,
      unavailable: dependencies.logs?.unavailable,
      list: (collection) => dependencies.governance.manage({ action: 'list', collection }),
    }),
    ...createIdentityAdmin({ identities: dependencies.identities, teamExists }),
    ...createAuditLogsAdmin(dependencies.auditLogs ?? {}),
    ...createWhoami(),
    ...createGatewayAddress({
      client: dependencies.systemConfig.settings.client,
      deployment: dependencies.publicUrl,
    }),
  ]);
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
      outbound,
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
  if (dependencies.uiDir) routers['/ui'] = createUiRouter(dependencies.uiDir, { sso: sso !== undefined });
  const app = createAdminExpress({
    routes,
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
    /** The rows of `/api` (the role matrix test runs each against every role). */
    routes: routes.routes,
    /** Resolves once every audit record under way is stored (shutdown, before the audit store closes). */
    drainAudit: app.drainAudit,
  };
}
